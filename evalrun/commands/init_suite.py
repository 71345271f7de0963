"""`evalrun init [DIR] [--template rag|basic]`: scaffold a suite that passes offline, ready for CI.

Writes into DIR (default: the current folder):
    evalrun.yaml                    the suite (rag: a small RAG app checked with graded metrics; basic: echo)
    app.py                          rag only: the stand-in application the suite calls
    .gitignore                      `.evalrun/` (created, or the line appended when missing), next to the workflow's
                                    repository root
    .github/workflows/evalrun.yml   at the git repository's root when DIR is inside one, else in DIR

Refuses to overwrite: when any file it would create exists, it writes nothing and exits 2.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from evalrun.errors import UsageError

TEMPLATES = ("rag", "basic")
_HERE = Path(__file__).resolve().parent / "init_templates"
_IGNORE = ".evalrun/"


def _schema_ref(target_dir: Path) -> str:
    """The installed config schema, relative to the new suite when possible (editors resolve it offline)."""
    schema = Path(__file__).resolve().parent.parent / "schemas" / "evalrun.schema.json"
    try:
        return Path(os.path.relpath(schema, target_dir.resolve())).as_posix()
    except ValueError:  # another drive (Windows)
        return schema.as_posix()


def _git_root(start: Path) -> Path | None:
    for d in [start.resolve(), *start.resolve().parents]:
        if (d / ".git").exists():
            return d
    return None


def plan(target: Path, template: str) -> dict[Path, str]:
    """The files to create and their text (pure apart from reading the templates)."""
    suite = (_HERE / f"{template}.evalrun.yaml").read_text(encoding="utf-8")
    files = {target / "evalrun.yaml": suite.replace("__SCHEMA__", _schema_ref(target))}
    if template == "rag":
        files[target / "app.py"] = (_HERE / "rag.app.py.tmpl").read_text(encoding="utf-8")
    root = _git_root(target) or target
    workdir = Path(os.path.relpath(target.resolve(), root.resolve())).as_posix()
    workflow = (_HERE / "workflow.yml").read_text(encoding="utf-8").replace("__WORKDIR__", workdir)
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
    files = plan(target, args.template)
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
    suite = os.path.relpath(target / "evalrun.yaml")
    print(f"\nNext:\n  evalrun eval {suite}          # runs offline; add --grader MODEL for an LLM grader\n"
          f"  pytest {suite}                # the same suite as pytest tests")
    return 0
