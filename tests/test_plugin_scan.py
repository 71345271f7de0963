"""plugin_scan: skipping importlib.metadata never hides an installed assertion plugin."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from evalrun.assertions.plugin_scan import none_installed

ROOT = Path(__file__).resolve().parent.parent
PLUGIN_SRC = ROOT / "examples" / "plugin-example" / "src"


@pytest.fixture
def isolated_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """sys.path = a fresh folder only (other tests may leave entries behind), the standard finders only."""
    from importlib.machinery import PathFinder

    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setattr(sys, "path", [str(site)])
    monkeypatch.setattr(sys, "meta_path", [f for f in sys.meta_path if f is PathFinder or
                                           getattr(f, "find_distributions", None) is None])
    return site


def _dist(site: Path, name: str, entry_points_txt: str | None, suffix: str = ".dist-info") -> None:
    info = site / f"{name}-0.1.0{suffix}"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    if entry_points_txt is not None:
        (info / "entry_points.txt").write_text(entry_points_txt)


@pytest.mark.parametrize("group", ["evalrun.assertions", "console_scripts", "pytest11", "no.such.group"])
def test_agrees_with_importlib_metadata_here(group: str) -> None:
    """Whenever importlib.metadata finds an entry point of the group, the scan says one may exist."""
    if list(entry_points(group=group)):
        assert not none_installed(group)


def test_a_distribution_declaring_the_group_is_seen(isolated_path: Path) -> None:
    _dist(isolated_path, "other_pkg", "[console_scripts]\nx = y:z\n")
    _dist(isolated_path, "no_entry_points", None)
    (isolated_path / "legacy.egg-info").write_text("Name: legacy\n")  # an egg-info file, not a folder
    sys.path.append(str(isolated_path / "missing"))
    assert none_installed("my.group")  # (importlib.metadata not asked here: it caches a folder's listing)
    _dist(isolated_path, "Some_Plugin", "[my.group]\nthing = some_plugin:Thing\n", suffix=".DIST-INFO")
    assert not none_installed("my.group")  # (that importlib.metadata then finds it: the end-to-end test below)


@pytest.mark.parametrize("kind", ["zip", "egg", "finder"])
def test_what_it_cannot_read_is_left_to_importlib_metadata(kind: str, tmp_path: Path, isolated_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert none_installed("my.group")
    if kind == "zip":
        archive = tmp_path / "plugins.zip"
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("p-0.1.dist-info/entry_points.txt", "[my.group]\nthing = p:Thing\n")
        sys.path.insert(0, str(archive))  # sys.path is the fixture's own list (restored whole)
    elif kind == "egg":
        egg = tmp_path / "p-0.1.egg"
        (egg / "EGG-INFO").mkdir(parents=True)
        sys.path.insert(0, str(egg))
    else:
        class Finder:
            @staticmethod
            def find_distributions(*args: Any, **kwargs: Any) -> list[Any]:
                return []

        monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert not none_installed("my.group")


def test_an_installed_plugin_still_loads_in_validate(tmp_path: Path) -> None:
    """End to end, with real package metadata (no patched entry_points): the example plugin's type validates
    when its distribution is installed, and is an unknown type when it is not."""
    site = tmp_path / "site"
    (tmp_path / "evalrun.yaml").write_text("prompts: ['{{q}}']\nproviders: [echo]\n"
                                           "tests: [{vars: {q: abba}, assert: [{type: is-palindrome}]}]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN_SRC), str(ROOT)])}

    def validate() -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "evalrun", "validate", "evalrun.yaml"], cwd=tmp_path,
                              env=env, capture_output=True, text=True)

    site.mkdir()
    missing = validate()
    assert missing.returncode == 2 and "unknown assertion type 'is-palindrome'" in missing.stderr
    _dist(site, "evalrun_plugin_example", "[evalrun.assertions]\n"
                                          "is-palindrome = evalrun_plugin_example:IsPalindrome\n")
    found = validate()
    assert found.returncode == 0, found.stderr
    assert "is-palindrome 1" in found.stdout
