"""Every third-party package evalrun imports is declared in pyproject.toml.

An import (anywhere in evalrun/, function-level ones included) of a module that is neither the standard library
nor evalrun must be a distribution in [project].dependencies, or be guarded (inside `try: ... except ImportError`)
and listed in an extra of [project.optional-dependencies] (`ray`). A package that merely arrives with another
one (as aiohttp does with litellm) does not count: its version is then whatever the other one allows.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
#: Imported only where the importer guarantees it: pytest loads evalrun.pytest_plugin itself.
LOADED_BY_THEIR_HOST = {("pytest", "evalrun/pytest_plugin.py")}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(reqs: list[str]) -> set[str]:
    return {_norm(m.group(1)) for r in reqs if (m := re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", r))}


def _declared() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return (_requirement_names(project.get("dependencies", [])),
            _requirement_names([r for reqs in extras.values() for r in reqs]))


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Inside the body of a `try` whose handlers catch ImportError or ModuleNotFoundError."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.Try) and node in parent.body:
            for handler in parent.handlers:
                kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
                if any(isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError") for k in kinds):
                    return True
        node = parent
    return False


def third_party_imports() -> list[tuple[str, str, bool]]:
    """(top-level module, file relative to the repository, guarded) for each third-party import in evalrun/."""
    out = []
    for path in sorted((ROOT / "evalrun").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("evalrun", "__future__"):
                    out.append((top, path.relative_to(ROOT).as_posix(), _guarded(node, parents)))
    return out


def _distributions(module: str) -> set[str]:
    """The distributions that provide top-level `module` (its own name when none is installed)."""
    found = importlib.metadata.packages_distributions().get(module)
    return {_norm(d) for d in found} if found else {_norm(module)}


def test_the_scan_sees_known_imports() -> None:
    found = third_party_imports()
    seen = {(m, f) for m, f, _ in found}
    assert ("sqlglot", "evalrun/assertions/sql.py") in seen   # a top-level import
    assert ("aiohttp", "evalrun/providers/http_.py") in seen             # a function-level one
    assert "yaml" in {m for m, _, _ in found} and _distributions("yaml") == {"pyyaml"}
    assert any(guarded for _, _, guarded in found)                        # ray's, orjson's


def test_every_imported_package_is_declared() -> None:
    required, extras = _declared()
    missing = []
    for module, file, guarded in third_party_imports():
        if (module, file) in LOADED_BY_THEIR_HOST:
            continue
        dists = _distributions(module)
        if dists & required or (guarded and dists & extras):
            continue
        missing.append(f"{file}: import {module} ({'/'.join(sorted(dists))})")
    assert not missing, ("imported but not declared in pyproject.toml [project].dependencies (or, for an "
                         "import guarded by `except ImportError`, in an extra):\n" + "\n".join(sorted(set(missing))))
