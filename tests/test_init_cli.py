"""`evalrun init`: a scaffold that passes offline, a valid workflow installing this evalrun (never the index's other
"evalrun") with the commands docs/integrations.md gives, no overwrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evalrun import DISTRIBUTION
from evalrun.cli import main
from evalrun.commands import init_suite as init_

DOC = (Path(__file__).resolve().parent.parent / "docs" / "integrations.md").read_text()


@pytest.mark.parametrize("template", ["rag", "basic"])
def test_init_then_eval_passes_offline(template: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--template", template]) == 0
    assert (tmp_path / "evalrun.yaml").read_text().startswith("# yaml-language-server: $schema=")
    _language_server_check(tmp_path / "evalrun.yaml")
    assert ".evalrun/" in (tmp_path / ".gitignore").read_text().splitlines()
    assert (tmp_path / "app.py").exists() == (template == "rag")
    capsys.readouterr()
    assert main(["eval", "--no-progress-bar", "-o", "r.json"]) == 0
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["passed"] == summary["total"] == 2 and summary["errors"] == 0
    if template == "rag":
        assert summary["graders"] and "builtin" in summary["graders"][0]


def test_workflow_is_valid_yaml_and_runs_the_readme_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".git").mkdir()  # a repository root: the suite goes into evals/, the workflow at the root
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(init_, "_installed_from", lambda: ("0.1.0", None))  # as from the package index
    assert main(["init", "evals"]) == 0
    assert (tmp_path / "evals" / "evalrun.yaml").exists()
    flow = yaml.safe_load((tmp_path / ".github" / "workflows" / "evalrun.yml").read_text())
    steps = flow["jobs"]["evalrun"]["steps"]
    runs = {s["name"]: s for s in steps if "run" in s}
    assert runs["Install evalrun"]["run"] == 'pip install "evalrun-llm==0.1.0"'
    assert "note:" not in capsys.readouterr().out
    run = runs["Run the suite"]
    assert run["working-directory"] == "evals"
    assert run["run"] == "evalrun eval evalrun.yaml -o evalrun-results.xml -o evalrun-report.html"
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-artifact"))
    assert upload["with"]["path"].split() == ["evals/evalrun-results.xml", "evals/evalrun-report.html"]
    for command in (runs["Install evalrun"]["run"], run["run"]):
        assert command in DOC  # docs/integrations.md gives the same commands
    assert ".evalrun/" in (tmp_path / ".gitignore").read_text()


def test_refuses_to_overwrite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evalrun.yaml").write_text("mine\n")
    (tmp_path / ".gitignore").write_text("node_modules/")
    assert main(["init"]) == 2
    err = capsys.readouterr().err
    assert "refusing to overwrite existing file(s): evalrun.yaml" in err and "hint:" in err
    assert (tmp_path / "evalrun.yaml").read_text() == "mine\n"
    assert not (tmp_path / "app.py").exists() and not (tmp_path / ".github").exists()  # nothing written
    (tmp_path / "evalrun.yaml").unlink()
    assert main(["init"]) == 0
    assert (tmp_path / ".gitignore").read_text() == "node_modules/\n.evalrun/\n"  # appended, not replaced


@pytest.mark.parametrize(("direct_url", "requirement", "noted"), [
    (None, "evalrun-llm==0.2.0", False),  # from the package index: no direct_url.json
    ({"url": "https://github.com/acme/evalrun.git",
      "vcs_info": {"vcs": "git", "commit_id": "0123abc", "requested_revision": "main"}},
     "evalrun-llm @ git+https://github.com/acme/evalrun.git@0123abc", False),  # pinned to the commit, not `main`
    ({"url": "https://example.com/evalrun_llm-0.2.0-py3-none-any.whl", "archive_info": {"hashes": {}}},
     "evalrun-llm @ https://example.com/evalrun_llm-0.2.0-py3-none-any.whl", False),
    ({"url": "file:///home/me/evalrun", "dir_info": {"editable": True}}, "evalrun-llm==0.2.0", True),
    ({"url": "file:///tmp/dist/evalrun_llm-0.2.0-py3-none-any.whl", "archive_info": {}}, "evalrun-llm==0.2.0",
     True),
])
def test_workflow_installs_the_source_this_evalrun_came_from(direct_url: dict[str, object] | None,
                                                            requirement: str, noted: bool) -> None:
    got, note = init_.install_requirement("0.2.0", direct_url)
    assert got == requirement and got.startswith(DISTRIBUTION)
    assert (note is not None) == noted
    if note:
        assert direct_url and direct_url["url"] in note and "git commit" in note


def test_init_from_a_local_install_says_ci_cannot_reach_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    local = {"url": "file:///src/evalrun", "dir_info": {"editable": True}}
    monkeypatch.setattr(init_, "_installed_from", lambda: ("0.3.0", local))
    assert main(["init", "--template", "basic"]) == 0
    assert "note: this evalrun was installed from file:///src/evalrun" in capsys.readouterr().out
    flow = yaml.safe_load((tmp_path / ".github" / "workflows" / "evalrun.yml").read_text())
    install = next(s for s in flow["jobs"]["evalrun"]["steps"] if s.get("name") == "Install evalrun")
    assert install["run"] == 'pip install "evalrun-llm==0.3.0"'


def _language_server_check(config: Path) -> None:
    """What the YAML language server does with the first line: resolve `$schema=` against the config's folder (a
    path into someone's checkout of evalrun breaks for every teammate), load it, and validate the config with it."""
    import jsonschema

    first = config.read_text(encoding="utf-8").splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    ref = first.split("$schema=", 1)[1].strip()
    assert not Path(ref).is_absolute() and ".." not in Path(ref).parts, ref  # inside the suite's own folder
    schema_path = config.parent / ref
    assert schema_path.is_file()
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    assert schema["title"] == "evalrun config"
    jsonschema.validators.validator_for(schema)(schema).validate(yaml.safe_load(config.read_text(encoding="utf-8")))


@pytest.mark.parametrize("template", ["rag", "basic"])
def test_init_schema_line_works_for_every_teammate(template: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 37: the suite and its schema travel together; a copy of the folder elsewhere (a teammate's checkout,
    no evalrun source tree next to it) still resolves and validates."""
    import shutil

    (tmp_path / "repo" / ".git").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo")
    assert main(["init", "evals", "--template", template]) == 0
    _language_server_check(tmp_path / "repo" / "evals" / "evalrun.yaml")
    elsewhere = tmp_path / "teammate" / "checkout"
    shutil.copytree(tmp_path / "repo", elsewhere)
    _language_server_check(elsewhere / "evals" / "evalrun.yaml")


def test_schema_command_prints_and_writes_the_packaged_schema(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    packaged = (Path(init_.__file__).resolve().parent.parent / "schemas" / "evalrun.schema.json").read_text()
    assert main(["schema"]) == 0
    assert capsys.readouterr().out == packaged
    assert main(["schema", "-o", str(tmp_path)]) == 0
    assert (tmp_path / "evalrun.schema.json").read_text() == packaged
    assert "$schema=./evalrun.schema.json" in capsys.readouterr().out
    assert main(["schema", "--results", "-o", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["title"].startswith("evalrun results")
    assert main(["schema", "-o", str(tmp_path / "missing" / "x.json")]) == 2
