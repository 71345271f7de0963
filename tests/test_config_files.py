"""file:// references: selectors, globs, relative resolution, user Python functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun import pkgref
from evalrun.config import files
from evalrun.errors import ConfigError, Location
from evalrun.pyexpr import load_function


@pytest.mark.parametrize(("ref", "expected"), [
    ("file://a/b.py:fn", ("a/b.py", "fn")),
    ("file://a/b.py", ("a/b.py", None)),
    ("a/b.txt", ("a/b.txt", None)),
    ("file://C:/x/y.py", ("C:/x/y.py", None)),
    ("file:///abs/dir:x/y.yaml", ("/abs/dir:x/y.yaml", None)),
    ("file://C:/x/y.py:fn", ("C:/x/y.py", "fn")),
    ("file://x.js:", ("x.js:", None)),
])
def test_split_ref(ref: str, expected: tuple[str, str | None]) -> None:
    assert pkgref.split_ref(ref) == expected


def test_expand_relative_and_globs(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    for n in ("b.yaml", "a.yaml", "c.txt"):
        (tmp_path / "d" / n).write_text("x")
    assert files.expand("file://d/c.txt", str(tmp_path)) == [tmp_path / "d" / "c.txt"]
    assert [p.name for p in files.expand("d/*.yaml", str(tmp_path))] == ["a.yaml", "b.yaml"]
    assert [p.name for p in files.expand("**/*.txt", str(tmp_path))] == ["c.txt"]


def test_missing_targets_and_empty_globs_are_errors(tmp_path: Path) -> None:
    loc = Location("c.yaml", 7)
    with pytest.raises(ConfigError) as e:
        files.expand("file://nope.txt", str(tmp_path), loc=loc, key="prompts[0]")
    assert (e.value.file, e.value.line, e.value.key) == ("c.yaml", 7, "prompts[0]")
    assert "file not found: nope.txt" in e.value.message
    with pytest.raises(ConfigError, match="no file matches the glob"):
        files.expand("*.csv", str(tmp_path), loc=loc)


def test_read_value_parses_data_files(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('{"k": [1]}')
    (tmp_path / "b.yml").write_text("k: 2\n")
    (tmp_path / "c.md").write_text("# title\n")
    assert files.read_value(tmp_path / "a.json", "a.json") == {"k": [1]}
    assert files.read_value(tmp_path / "b.yml", "b.yml") == {"k": 2}
    assert files.read_value(tmp_path / "c.md", "c.md") == "# title\n"


def test_absolute_ref_keeps_function(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("def f(): pass\n")
    ref = files.absolute_ref("file://p.py:f", str(tmp_path))
    assert ref == f"file://{(tmp_path / 'p.py').resolve()}:f"


def test_load_function_errors(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("def generate_tests():\n    return []\n")
    (tmp_path / "bad.py").write_text("raise RuntimeError('nope')\n")
    assert load_function(str(tmp_path / "good.py"), "generate_tests")() == []
    with pytest.raises(ConfigError, match="did you mean `generate_tests`"):
        load_function(str(tmp_path / "good.py"), "generate_test")
    with pytest.raises(ConfigError, match=r"bad.py:1: importing it failed: RuntimeError: nope"):
        load_function(str(tmp_path / "bad.py"), "x")
