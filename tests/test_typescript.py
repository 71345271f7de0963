"""TypeScript providers, prompt functions, assertions and transforms run without a build step: Node.js's own type
stripping (22.6+), else the user's tsx package; without either, a config error saying what is needed.

The run tests need one of them (skipped otherwise): Node.js 22.6+, or tsx in node_modules above this checkout,
in NODE_PATH (e.g. NODE_PATH=/path/to/node_modules where `npm install tsx` ran) or npm's global folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evalrun import jsnode
from evalrun.cli import main
from evalrun.config import load
from evalrun.errors import ConfigError
from tests.test_promptfoo_compat_features import run_suite, write

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")

FILES = {
    "prompt.ts": "export function build({ vars }: { vars: { topic: string } }): string {\n"
                 "  return `Tell me about ${vars.topic}`;\n}\n",
    "provider.ts": "interface Options { config: { suffix: string } }\n"
                   "export default class Upper {\n  constructor(private options: Options) {}\n"
                   "  id(): string { return 'upper'; }\n"
                   "  async callApi(prompt: string): Promise<{ output: string }> {\n"
                   "    return { output: prompt.toUpperCase() + this.options.config.suffix };\n  }\n}\n",
    "check.ts": "const check = (output: string, context: { vars: { topic: string } }): boolean =>\n"
                "  output.toLowerCase().includes(context.vars.topic);\nexport default check;\n",
    "shape.ts": "export function trim(output: string): string { return output.trim(); }\n",
    "promptfooconfig.yaml": (
        "prompts: [file://prompt.ts:build]\n"
        "providers:\n  - echo\n  - id: file://provider.ts\n    config: {suffix: '  '}\n"
        "tests:\n  - vars: {topic: cats}\n    options: {transform: file://shape.ts:trim}\n"
        "    assert:\n      - type: javascript\n        value: file://check.ts\n"
        "      - type: equals\n        value: Tell me about cats\n"),
}


def _supported() -> bool:
    return shutil.which("node") is not None and jsnode.node_flags(Path(__file__).parent) is not None


@pytest.mark.skipif(not _supported(), reason="neither Node.js 22.6+ nor the tsx package is available")
def test_typescript_files_run_as_promptfoo_runs_them(tmp_path: Path) -> None:
    cfg = write(tmp_path, FILES)
    rows = run_suite(cfg)
    assert sorted((r.status, r.output) for r in rows) == [("fail", "TELL ME ABOUT CATS"),
                                                          ("pass", "Tell me about cats")], [r.reason for r in rows]


@needs_node
@pytest.mark.parametrize(("what", "line"), [("prompt", 1), ("provider", 4), ("assertion", 9)])
def test_without_type_stripping_or_tsx_it_is_a_config_error(what: str, line: int, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(jsnode, "node_version", lambda: (20, 11, 0))
    monkeypatch.setattr(jsnode, "find_tsx", lambda start: None)
    files = dict(FILES)
    cfg_text = files["promptfooconfig.yaml"]
    if what != "prompt":
        cfg_text = cfg_text.replace("file://prompt.ts:build", "'Tell me about {{topic}}'")
    if what != "provider":
        cfg_text = cfg_text.replace("  - id: file://provider.ts\n    config: {suffix: '  '}\n", "")
    if what != "assertion":
        cfg_text = cfg_text.replace("value: file://check.ts", "value: output.length > 0")
    files["promptfooconfig.yaml"] = cfg_text.replace("file://shape.ts:trim", "output.strip()")
    cfg = write(tmp_path, files)
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"promptfooconfig.yaml:{line}: " in err and "is TypeScript, which Node.js 20.11.0 cannot run" in err
    assert "Node.js 22.6 or newer" in err and "npm install --save-dev tsx" in err
    if what != "provider":  # a provider is built (and checked) by validate and eval, not by load()
        with pytest.raises(ConfigError):
            load([str(cfg)])


@pytest.mark.parametrize(("version", "tsx", "expected"), [
    ((24, 1, 0), None, []),
    ((23, 6, 0), None, []),
    ((22, 6, 0), None, ["--experimental-strip-types", "--disable-warning=ExperimentalWarning"]),
    ((20, 20, 2), Path("/p/node_modules/tsx/dist/loader.mjs"), ["--import", "file:///p/node_modules/tsx/dist/loader.mjs"]),
    ((20, 20, 2), None, None),
])
def test_node_flags(version: tuple[int, ...], tsx: Path | None, expected: list[str] | None,
                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsnode, "node_version", lambda: version)
    monkeypatch.setattr(jsnode, "find_tsx", lambda start: tsx)
    assert jsnode.node_flags(".") == expected


def test_tsx_is_found_in_node_modules_above_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loader = tmp_path / "node_modules" / "tsx" / "dist" / "loader.mjs"
    loader.parent.mkdir(parents=True)
    loader.write_text("")
    (tmp_path / "evals" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "evals")
    assert jsnode.find_tsx(tmp_path / "evals" / "deep") == loader
