"""What the tests read the site's charts and compare/items.js back with."""

from __future__ import annotations


def rows(spec: dict) -> list[dict]:
    """Every data row of a spec, its layers' too, as Vega sees it: a datum of columns is
    flattened into one row per point (what the skeletons' flatten transform does)."""
    out: list[dict] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("values"), list):
                for datum in node["values"]:
                    cols = [k for k, v in datum.items() if isinstance(v, list)]
                    if not cols:
                        out.append(datum)
                        continue
                    # as Vega's flatten: as many rows as the longest column, null past the
                    # end of a shorter one (an empty band: see charts._band)
                    for i in range(max(len(datum[k]) for k in cols)):
                        out.append(
                            {
                                k: (v[i] if i < len(v) else None) if k in cols else v
                                for k, v in datum.items()
                            }
                        )
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return out


def decode_compare_items(value: dict) -> list[dict]:
    """``compare/items.js``'s value back to one dict per item (what ``site.js``'s
    ``compareItems`` does in the browser)."""
    cols = value["columns"]
    out = []
    for row in value["rows"]:
        src = value["rows"][row[3]] if len(row) == 4 else row
        it = dict(zip(cols, src, strict=True))
        it.update(kind=row[0], id=row[1], url=row[2])
        it["cells"] = dict(zip(value["cell_columns"], it["cells"], strict=True))
        it["findings"] = [
            dict(zip(value["finding_columns"], f, strict=True)) for f in it["findings"]
        ]
        it["config"] = {
            k: vals[i]
            for k, vals, i in zip(
                value["config_keys"], value["config_values"], it["config"], strict=True
            )
            if i is not None
        }
        out.append(it)
    return out
