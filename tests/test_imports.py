"""The package's import graph has no cycle, and no stage imports one after its own."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import sitegen

PKG = Path(sitegen.__file__).resolve().parent


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _imports() -> dict[str, set[str]]:
    """Every sitegen module and the sitegen modules it imports (at any depth in the file):
    parsed once for the three checks that read it (none changes it)."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module:
                base = node.module
                if node.level:
                    pkg = name.split(".")
                    if path.name != "__init__.py":
                        pkg = pkg[:-1]
                    pkg = pkg[: len(pkg) - node.level + 1]
                    base = ".".join([*pkg, node.module])
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            deps.update(t for t in targets if t in modules and t != name)
        graph[name] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph[n]):
            if state.get(d) == 1:
                return stack[stack.index(d) :] + [d]
            if d not in state and (found := visit(d)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


def test_no_import_cycle():
    graph = _imports()
    assert "sitegen.commands.build" in graph and graph["sitegen.commands.build"], (
        "the walker found no imports"
    )
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_detector_sees_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


# The stages from the ground up: a module may import its own layer and the layers before it,
# never one after (the model knows no insight, a stage no cache, nothing the commands).
LAYERS = (
    ("ground", ("sitegen", "sitegen.errors", "sitegen.jsonio", "sitegen.progress",
                "sitegen.options", "sitegen.redact")),
    ("model", ("sitegen.model",)),
    ("discover", ("sitegen.discover",)),
    ("read", ("sitegen.read",)),
    ("assemble", ("sitegen.assemble",)),
    ("analyse", ("sitegen.analyse", "sitegen.insights")),
    ("pages", ("sitegen.pages",)),
    ("write", ("sitegen.write",)),
    ("present", ("sitegen.present",)),
    ("publish", ("sitegen.publish",)),
    ("cache", ("sitegen.cache",)),
    ("commands", ("sitegen.commands", "sitegen.synth", "sitegen.__main__")),
)  # fmt: skip


def _layer(module: str) -> int:
    """The index in LAYERS of the layer ``module`` belongs to (its longest matching prefix)."""
    best, found = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, found = len(p), i
    assert found is not None, f"{module} belongs to no layer: add it to LAYERS"
    return found


def _upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{name} ({LAYERS[_layer(name)][0]}) imports {dep} ({LAYERS[_layer(dep)][0]})"
        for name, deps in graph.items()
        for dep in deps
        if _layer(dep) > _layer(name)
    )


def test_no_module_imports_a_stage_after_its_own():
    assert _upward(_imports()) == []


def test_the_direction_check_sees_an_upward_import():
    assert _upward({"sitegen.model.parsed": {"sitegen.insights.tasks"}}) == [
        "sitegen.model.parsed (model) imports sitegen.insights.tasks (analyse)"
    ]


def test_the_redaction_is_a_ground_floor_unit():
    """The redaction package imports nothing of sitegen but itself and the errors: every
    stage can use it, and its rules read apart from the pipeline."""
    inside = ("sitegen.redact", "sitegen.errors")
    outside = sorted(
        f"{name} imports {dep}"
        for name, deps in _imports().items()
        if _within(name, "sitegen.redact")
        for dep in deps
        if not any(_within(dep, p) for p in inside)
    )
    assert any(_within(n, "sitegen.redact") and n != "sitegen.redact" for n in _imports())
    assert outside == []


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_only_the_build_knows_the_cache():
    """The stages are plain functions of their inputs: what the last build left is the
    cache's business and the build command's, which asks it for each stage's result."""
    knows = sorted(
        name
        for name, deps in _imports().items()
        if not name.startswith("sitegen.cache")
        and any(d == "sitegen.cache" or d.startswith("sitegen.cache.") for d in deps)
    )
    assert knows == ["sitegen.commands.build"]


def test_no_stage_names_the_cache_marker():
    """Discovery passes over a cache folder by the marker build() gives it: no module out of
    the cache package names the cache's files."""
    from sitegen.cache.state import CACHE_MARKER

    naming = sorted(
        str(p.relative_to(PKG))
        for p in PKG.rglob("*.py")
        if p.relative_to(PKG).parts[0] != "cache" and CACHE_MARKER in p.read_text()
    )
    assert naming == []


def test_no_module_imports_another_modules_private_name():
    """A name with a leading underscore is its module's own: one another module needs is
    named as public, so a reader knows who may rely on it."""
    taken = sorted(
        f"{p.relative_to(PKG)} imports {node.module}.{a.name}"
        for p in PKG.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sitegen")
        for a in node.names
        if a.name.startswith("_") and not a.name.startswith("__")
    )
    assert taken == []
