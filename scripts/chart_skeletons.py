"""Rebuild the stored chart skeletons (sitegen/present/skeletons/*.json) with Altair.

Each chart's shape is defined in sitegen/present/shapes.py; a build only fills the
stored skeletons in, so after changing a shape run: ``make skeletons`` (or
``python scripts/chart_skeletons.py``) and commit the JSON it writes. The test
tests/present/test_charts.py::test_stored_skeletons_match_altair fails until you do.
"""

from __future__ import annotations

from pathlib import Path

from sitegen.present import shapes

OUT = Path(__file__).resolve().parent.parent / "sitegen" / "present" / "skeletons"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    wanted = {f"{name}.json" for name in shapes.SHAPES}
    for stale in OUT.glob("*.json"):
        if stale.name not in wanted:
            stale.unlink()
            print(f"removed {stale.name}")
    for name in sorted(shapes.SHAPES):
        (OUT / f"{name}.json").write_text(shapes.dumps(shapes.build(name)), encoding="utf-8")
    print(f"wrote {len(wanted)} skeletons to {OUT}")


if __name__ == "__main__":
    main()
