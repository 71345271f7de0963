"""Issue 36, paths: `--confine` (EVALRUN_CONFINE=1) refuses `file://` paths outside the config's folder tree with
FILE:LINE (prompts, test files, CSV cells, JSONL and YAML vars); without it they are read, as promptfoo reads them. A file name
the system refuses (over 255 bytes) is a one-line error, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalrun.cli import main


@pytest.fixture
def suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALRUN_CONFINE", "0")  # restored after the test: --confine sets it for worker processes
    (tmp_path / "outside.txt").write_text("outside-the-tree")
    folder = tmp_path / "suite"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "inside.txt").write_text("inside-the-tree")
    return folder


@pytest.mark.parametrize(("where", "line"), [
    ("prompts: ['file://../outside.txt']\ntests: [{vars: {q: a}}]", 2),
    ("prompts: ['{{q}}']\ntests:\n  - vars: {q: 'file://../outside.txt'}", 4),
    ("prompts: ['{{q}}']\ntests: file://t.csv", "t.csv:3"),
    ("prompts: ['{{q}}']\ntests: file://t.jsonl", "t.jsonl:2"),
    # read when grading or checking a call, not at load: checked at load all the same
    ("prompts: [hi]\ntests:\n  - assert: [{type: llm-rubric, value: y, rubricPrompt: ['file://../outside.txt']}]", 4),
    ("prompts: [hi]\ntests:\n  - options: {rubricPrompt: 'file://../outside.txt'}", 4),
    ("prompts: [hi]\ntests:\n  - provider: {id: echo, config: {functions: 'file://../outside.txt'}}", 4),
    (f"prompts: ['{{{{q}}}}']\ntests: [{{vars: {{q: 'file://{Path('/etc/hostname')}'}}}}]", 3),
])
def test_confine_refuses_paths_outside_the_tree(suite: Path, where: str, line: int | str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (suite / "t.csv").write_text("q\nfile://sub/inside.txt\nfile://../outside.txt\n")
    (suite / "t.jsonl").write_text('{"vars": {"q": "file://sub/inside.txt"}}\n{"vars": {"q": "file://../outside.txt"}}\n')
    cfg = suite / "c.yaml"
    cfg.write_text(f"providers: [echo]\n{where}\n")
    out = suite / "r.json"
    rc = main(["eval", str(cfg), "--no-progress-bar", "--no-history", "--confine", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "outside the config's folder" in err and "Traceback" not in err
    where_at = f"{line}:" if isinstance(line, str) else f"c.yaml:{line}:"
    assert where_at in err
    assert not out.exists()


def test_without_confine_paths_anywhere_are_read_and_inside_ones_always(suite: Path) -> None:
    (suite / "t.csv").write_text("q\nfile://sub/inside.txt\nfile://../outside.txt\n")
    cfg = suite / "c.yaml"
    cfg.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests: file://t.csv\n")
    out = suite / "r.json"
    assert main(["eval", str(cfg), "--no-progress-bar", "--no-history", "-o", str(out)]) == 0
    assert "outside-the-tree" in out.read_text()  # as promptfoo does
    (suite / "t.csv").write_text("q\nfile://sub/inside.txt\n")
    assert main(["eval", str(cfg), "--no-progress-bar", "--no-history", "--confine", "-o", str(out)]) == 0
    assert "inside-the-tree" in out.read_text()


@pytest.mark.parametrize("ref", ["config", "prompt", "tests"])
def test_a_file_name_too_long_is_one_line(tmp_path: Path, ref: str, capsys: pytest.CaptureFixture[str]) -> None:
    long = "b" * 300
    cfg = tmp_path / ("a" * 300 + ".yaml" if ref == "config" else "c.yaml")
    if ref != "config":
        cfg.write_text("providers: [echo]\n" + (f"prompts: ['file://{long}.txt']\n" if ref == "prompt" else
                                                 f"prompts: [hi]\ntests: file://{long}.csv\n"))
    assert main(["eval", str(cfg), "--no-progress-bar", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "File name too long" in err and "Traceback" not in err and len(err.splitlines()) == 2
    if ref != "config":
        assert f"{cfg.name}:{2 if ref == 'prompt' else 3}:" in err


def test_confine_holds_for_its_own_command_only(tmp_path: Path) -> None:
    """`--confine` reaches --workers' processes through EVALRUN_CONFINE, and is gone once the command returns."""
    import os

    cfg = tmp_path / "evalrun.yaml"
    cfg.write_text("prompts: ['hi']\nproviders: [echo]\ntests: [{vars: {}}]\n")
    os.environ.pop("EVALRUN_CONFINE", None)
    main(["validate", "--confine", str(cfg)])
    assert "EVALRUN_CONFINE" not in os.environ


@pytest.mark.parametrize("name", ["sub/link.txt", "../outside.txt", "cwd.txt"])
def test_confine_holds_for_includes(suite: Path, name: str, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`{% include %}` reads the config's folder, then the current one (promptfoo): under --confine, only files
    in the tree (a symlink out of it, or the current folder elsewhere, read other files)."""
    (suite / "sub" / "link.txt").symlink_to(suite.parent / "outside.txt")
    elsewhere = suite.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "cwd.txt").write_text("outside-the-tree")
    monkeypatch.chdir(elsewhere)
    cfg = suite / "c.yaml"
    cfg.write_text(f"providers: [echo]\nprompts: [\"{{% include '{name}' %}}\"]\n")
    out = suite / "r.json"
    if name != "../outside.txt":  # read without --confine, as promptfoo reads it
        assert main(["eval", str(cfg), "--no-progress-bar", "--no-history", "-o", str(out)]) == 0
        assert "outside-the-tree" in out.read_text()
        out.unlink()
    rc = main(["eval", str(cfg), "--no-progress-bar", "--no-history", "--confine", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and f"{cfg}:2:" in err and "Traceback" not in err and not out.exists(), err
