"""The package's shape (docs/design-notes.md, "Layers"): no import cycle between evalrun's modules, no import
against the layer order, no private (`_x`) name imported from another module.

Read from the source with `ast`, so imports inside functions count: they are how a cycle hides. Imports under
`if TYPE_CHECKING:` count for the layer order (a type names what a module depends on) but not for cycles (they
never run). A violation that belongs to another piece of work in progress is listed below with its owner; the
list only shrinks.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "evalrun"

#: Bottom to top: a module imports from its own layer and the layers below it, never from a layer above.
#: A name ending in "." is a package (all its modules); other names are single modules.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("evalrun", "evalrun.errors", "evalrun.types", "evalrun.jsonfast",
                    "evalrun.pkgref", "evalrun.signals")),
    ("support", ("evalrun.templating", "evalrun.jinja_env", "evalrun.template_env", "evalrun.chats",
                 "evalrun.jsnode", "evalrun.pyexpr",
                 "evalrun.retry", "evalrun.cache", "evalrun.credentials",
                 "evalrun.config.readers.")),  # located YAML/JSON/CSV: a leaf package (config/ uses it, so may others)
    ("providers", ("evalrun.providers.",)),
    ("grading", ("evalrun.grading.",)),
    ("assertions", ("evalrun.assertions.",)),
    ("config", ("evalrun.config.",)),
    ("expand", ("evalrun.expand",)),
    ("run", ("evalrun.run.",)),
    ("report", ("evalrun.report.", "evalrun.compare.", "evalrun.view.", "evalrun.calibration.")),
    ("entry points", ("evalrun.commands.", "evalrun.cli", "evalrun.api", "evalrun.testing",
                      "evalrun.pytest_plugin", "evalrun.__main__")),
]

# Known violations, each with its owner. Remove an entry when its owner fixes it (the test then keeps it fixed).
#: import cycles (the set of modules in one strongly connected component)
ALLOWED_CYCLES: dict[frozenset[str], str] = {}
#: (importing module, imported module) against the layer order
ALLOWED_UPWARD: dict[tuple[str, str], str] = {}
#: (importing module, defining module, name) of a private name imported across modules
ALLOWED_PRIVATE: dict[tuple[str, str, str], str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    target: str  # the evalrun module imported (or holding the imported name)
    name: str | None  # the name imported from it (`from m import name`, or `m.name` read off a module)
    line: int
    type_only: bool


@cache
def modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(dotted: str) -> str | None:
    """The evalrun module `dotted` names, or holds (the longest prefix that is a module)."""
    mods = modules()
    while dotted and dotted not in mods:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                out.update(id(n) for n in ast.walk(stmt))
    return out


def _imports_of(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only = _type_checking_nodes(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    aliases: dict[str, str] = {}  # local name -> evalrun module it is bound to
    for node in ast.walk(tree):
        type_only = id(node) in typing_only
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != "evalrun" and not source.startswith("evalrun."):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if full in modules():
                    aliases[alias.asname or alias.name] = full
                    yield Import(module, full, None, node.lineno, type_only)
                else:
                    yield Import(module, _owner(source) or source, alias.name, node.lineno, type_only)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "evalrun" or alias.name.startswith("evalrun."):
                    target = _owner(alias.name) or alias.name
                    aliases[alias.asname or alias.name] = target
                    yield Import(module, target, None, node.lineno, type_only)
    for node in ast.walk(tree):  # `mod._name` on a module imported above
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            yield Import(module, aliases[node.value.id], node.attr, node.lineno, id(node) in typing_only)


@cache
def imports() -> tuple[Import, ...]:
    return tuple(i for m, p in modules().items() for i in _imports_of(m, p) if i.target != m)


def _defined_private(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, variables and attributes (`self._x = ...`)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return {n for n in out if _private(n)}


@cache
def private_attribute_uses() -> tuple[Import, ...]:
    """`obj._x` in a module that does not define `_x` while another evalrun module does: a private attribute of
    another module's object (`runner._env()`, `progress._draw()`)."""
    trees = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in modules().items()}
    defined = {m: _defined_private(t) for m, t in trees.items()}
    owners: dict[str, set[str]] = defaultdict(set)
    for m, names in defined.items():
        for n in names:
            owners[n].add(m)
    module_reads = {(i.importer, i.line, i.name) for i in imports()}
    out = []
    for m, tree in trees.items():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in defined[m]
                    and owners.get(node.attr) and (m, node.lineno, node.attr) not in module_reads
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                out.append(Import(m, "/".join(sorted(owners[node.attr])), node.attr, node.lineno, False))
    return tuple(out)


def _private(name: str | None) -> bool:
    return bool(name) and name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for n, (_, members) in enumerate(LAYERS):
        for m in members:
            hit = module.startswith(m) or module == m.rstrip(".") if m.endswith(".") else module == m
            if hit and len(m) > best:
                best, rank = len(m), n
    return rank


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def test_every_module_has_a_layer() -> None:
    assert [m for m in modules() if layer_of(m) < 0] == []


def test_no_import_cycles() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for m in modules():
        edges[m]
    for i in imports():
        if not i.type_only:
            edges[i.importer].add(i.target)
    cycles = [c for c in _cycles(edges) if c not in ALLOWED_CYCLES]
    described = [" <-> ".join(sorted(c)) + ": " + "; ".join(
        f"{i.importer}:{i.line} -> {i.target}" for i in imports()
        if not i.type_only and i.importer in c and i.target in c) for c in cycles]
    assert described == []


def test_allowed_cycles_are_still_cycles() -> None:
    """An entry its owner has fixed is removed, so the fix stays."""
    edges: dict[str, set[str]] = defaultdict(set)
    for i in imports():
        if not i.type_only:
            edges[i.importer].add(i.target)
    assert set(ALLOWED_CYCLES) - set(_cycles(edges)) == set()


def test_imports_follow_the_layer_order() -> None:
    upward = sorted({(i.importer, i.target): i for i in imports()
                     if layer_of(i.target) > layer_of(i.importer)}.items())
    bad = [f"{i.importer}:{i.line} ({LAYERS[layer_of(i.importer)][0]}) imports {i.target} "
           f"({LAYERS[layer_of(i.target)][0]})" for key, i in upward if key not in ALLOWED_UPWARD]
    assert bad == []
    assert set(ALLOWED_UPWARD) - {key for key, _ in upward} == set()


def test_no_private_names_across_modules() -> None:
    found = {(i.importer, i.target, i.name or ""): i for i in (*imports(), *private_attribute_uses())
             if _private(i.name) or _private(i.target.rpartition(".")[2])}
    bad = [f"{i.importer}:{i.line} uses {i.target}{'.' + i.name if i.name else ''}"
           for key, i in sorted(found.items()) if key not in ALLOWED_PRIVATE]
    assert bad == []
    assert set(ALLOWED_PRIVATE) - set(found) == set()


def test_the_checks_find_what_they_look_for() -> None:
    """The detectors themselves: a cycle through three modules, a layer of each kind of name, a private name."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(edges) == [frozenset({"a", "b", "c"})]
    assert layer_of("evalrun.run.split") > layer_of("evalrun.assertions.base") > layer_of("evalrun.grading.llm")
    assert layer_of("evalrun.run") == layer_of("evalrun.run.runner") and layer_of("evalrun.cli") == len(LAYERS) - 1
    assert layer_of("evalrun.nowhere") == -1
    assert _private("_x") and not _private("__version__") and not _private("x") and not _private(None)
    found = {(i.importer, i.target, i.name) for i in imports()}
    assert ("evalrun.run.runner", "evalrun.run.split", None) in found  # a module imported by name
    assert ("evalrun.run.split", "evalrun.expand", None) in found
    # an import inside a function body counts
    assert any(i.importer == "evalrun.grading.steps" and i.target == "evalrun.templating" for i in imports())
