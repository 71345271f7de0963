"""`evalrun init [DIR] [--template rag|basic]`: a suite that passes offline, `.evalrun/` in .gitignore, and a GitHub
workflow that installs this very evalrun (PEP 610); nothing is written when a file it would create exists."""

from __future__ import annotations

import argparse
import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

from evalrun import DISTRIBUTION, __version__
from evalrun.commands import schema_file
from evalrun.errors import UsageError

_HERE = Path(__file__).resolve().parent / "init_templates"
_IGNORE = ".evalrun/"


def _git_root(start: Path) -> Path | None:
    return next((d for d in [start.resolve(), *start.resolve().parents] if (d / ".git").exists()), None)


def install_requirement(version: str, direct_url: dict[str, Any] | None) -> tuple[str, str | None]:
    """(what the workflow pip-installs, a note for the user or None), from how this evalrun was installed."""
    on_index = f"{DISTRIBUTION}=={version}"
    direct_url = direct_url or {}
    url, vcs = direct_url.get("url", ""), direct_url.get("vcs_info")
    if not url:
        return on_index, None
    if vcs and vcs.get("commit_id") and not url.startswith("file:"):
        return f"{DISTRIBUTION} @ {vcs['vcs']}+{url}@{vcs['commit_id']}", None
    if "archive_info" in direct_url and url.startswith(("https:", "http:")):
        return f"{DISTRIBUTION} @ {url}", None
    return on_index, (f"this evalrun was installed from {url}, which CI cannot reach: the workflow installs "
                      f"{on_index} from the package index; if that version is not published, point its "
                      "`Install evalrun` step at a git commit or wheel URL your CI can fetch")


def _installed_from() -> tuple[str, dict[str, Any] | None]:
    """(version, PEP 610 direct_url.json or None) of the installed distribution (the module's when not installed)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return __version__, None
    text = dist.read_text("direct_url.json")
    return dist.version, (json.loads(text) if text else None)


def plan(target: Path, template: str, requirement: str | None = None) -> dict[Path, str]:
    """The files to create and their text (pure apart from reading the templates)."""
    suite = (_HERE / f"{template}.evalrun.yaml").read_text(encoding="utf-8")
    config, schema = target / "evalrun.yaml", target / schema_file.CONFIG_SCHEMA
    # the schema copied next to the suite and committed with it: the editor line resolves in every checkout
    # (a path into this machine's evalrun install would not)
    files = {config: suite.replace("# yaml-language-server: $schema=__SCHEMA__",
                                   schema_file.language_server_line(config, schema)),
             schema: schema_file.text()}
    if template == "rag":
        files[target / "app.py"] = (_HERE / "rag.app.py.tmpl").read_text(encoding="utf-8")
    root = _git_root(target) or target
    workdir = Path(os.path.relpath(target.resolve(), root.resolve())).as_posix()
    requirement = requirement or install_requirement(*_installed_from())[0]
    workflow = (_HERE / "workflow.yml").read_text(encoding="utf-8").replace("__WORKDIR__", workdir)
    workflow = workflow.replace("__REQUIREMENT__", requirement)
    files[root / ".github" / "workflows" / "evalrun.yml"] = workflow
    return files


def _gitignore(target: Path) -> str:
    """Create .gitignore or append `.evalrun/` to it; returns what was done."""
    path = target / ".gitignore"
    if not path.exists():
        path.write_text(f"# evalrun's results files and resume state\n{_IGNORE}\n", encoding="utf-8")
        return "created"
    text = path.read_text(encoding="utf-8")
    if any(line.strip() in (_IGNORE, ".evalrun", "/.evalrun/", "/.evalrun") for line in text.splitlines()):
        return "already ignores .evalrun/"
    path.write_text(text + ("" if text.endswith("\n") or not text else "\n") + f"{_IGNORE}\n", encoding="utf-8")
    return "appended .evalrun/"


def run(args: argparse.Namespace) -> int:
    target = Path(args.dir)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{args.dir!r} is a file, not a folder", hint="give a folder: evalrun init evals/")
    target.mkdir(parents=True, exist_ok=True)
    requirement, note = install_requirement(*_installed_from())
    files = plan(target, args.template, requirement)
    existing = [p for p in files if p.exists()]
    if existing:
        names = ", ".join(os.path.relpath(p) for p in existing)
        raise UsageError(f"refusing to overwrite existing file(s): {names}", key="init",
                         hint="move them away, or run `evalrun init NEW_FOLDER`")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"created {os.path.relpath(path)}")
    root = _git_root(target) or target
    print(f"{os.path.relpath(root / '.gitignore')}: {_gitignore(root)}")
    if note:
        print(f"note: {note}")
    suite = os.path.relpath(target / "evalrun.yaml")
    print(f"\nNext:\n  evalrun eval {suite}          # runs offline; add --grader MODEL for an LLM grader\n"
          f"  pytest {suite}                # the same suite as pytest tests")
    return 0
