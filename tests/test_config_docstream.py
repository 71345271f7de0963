"""Large `file://` YAML/JSON test files read item by item (config/docstream.py): the same tests, locations and
errors as the whole-file path, anchors across items included; irregular files fall back to the whole-file path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalrun import config
from evalrun.cli import main
from evalrun.config import docstream
from evalrun.errors import ConfigError

N = 1500  # ~300 KB of YAML, ~400 KB of JSON: past the whole-file reader's own large-file thresholds (256 KB)


def _yaml_test(i: int) -> str:
    flavours = [
        f"- description: test {i}\n  vars:\n    q: \"question {i}\"\n    n: {i}\n    ok: true\n"
        f"    none: ~\n    tags: [a, 'b c', {i}.5]\n  assert:\n    - type: contains\n      value: question\n"
        f"    - type: not-icontains\n      value: 'zzz {i}'\n",
        f"- vars: {{q: 'flow {i}', yes: yes, octal: 012, hex: 0x1F}}\n  assert: [{{type: equals, value: 'x'}}]\n"
        f"  threshold: 0.5\n  metadata: {{group: g{i % 7}}}\n",
        f"- description: >\n    folded text\n    number {i}\n  vars:\n    q: plain {i}\n    text: |\n      line one {i}\n      line two\n"
        f"  options:\n    transform: output.strip()\n  assert:\n    - type: javascript\n"
        f"      value: output.length > 0\n    - type: assert-set\n      assert:\n        - type: contains\n"
        f"          value: one\n",
    ]
    return flavours[i % len(flavours)]


def _yaml(n: int = N, extra: dict[int, str] | None = None) -> str:
    head = ("- description: anchors\n  vars: &shared\n    q: shared question\n    n: 1\n"
            "  assert:\n    - &check {type: contains, value: shared}\n")
    items = [head] + [(extra or {}).get(i) or _yaml_test(i) for i in range(1, n)]
    items[n // 2] = "- vars: *shared\n  assert: [*check, {type: icontains, value: SHARED}]\n"  # aliases, far away
    return "# a large tests file\n" + "".join(items)


def _json_tests(n: int = N) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        t: dict[str, Any] = {"description": f"t{i}", "vars": {"q": f"question {i} \U0001f600", "n": i,
                                                               "nested": {"a": [1, 2.5, None, True]}},
                             "assert": [{"type": "contains", "value": "question"},
                                        {"type": "not-contains", "value": f"zzz{i}"}]}
        if i % 5 == 0:
            t["threshold"] = 0.5
            t["metadata"] = {"k": i}
        out.append(t)
    return out


def _json(tests: list[Any]) -> str:
    return "[\n" + ",\n".join(json.dumps(t, indent=2, ensure_ascii=i % 2 == 0) for i, t in enumerate(tests)) + "\n]\n"


def _config(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / name).write_text(text, encoding="utf-8")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"prompts: ['Answer {{{{q}}}}']\nproviders: [echo]\ntests: file://{name}\n")
    return cfg


def _load(cfg: Path, monkeypatch: pytest.MonkeyPatch, *, stream: bool) -> tuple[str, Any]:
    """('ok', (tests, warnings, streamed item)) or ('error', (str, file, line, key)), through either path."""
    monkeypatch.setattr(docstream, "STREAM_MIN_BYTES", 0 if stream else 10**12)
    try:
        suite = config.load([str(cfg)])
        tests = list(suite.tests)
        again = list(suite.tests)  # a second pass reads the file again: the same tests
        assert again == tests
    except ConfigError as e:
        return "error", (str(e), e.file, e.line, e.key)
    items = getattr(suite.tests, "_items", [])
    return "ok", (tests, suite.warnings, items[0] if items else None)


def _both(cfg: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[str, Any], tuple[str, Any]]:
    return _load(cfg, monkeypatch, stream=False), _load(cfg, monkeypatch, stream=True)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_large_file_streams_and_gives_the_whole_file_tests(suffix: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    text = _yaml() if suffix == ".yaml" else _json(_json_tests())
    whole, streamed = _both(_config(tmp_path, "t" + suffix, text), monkeypatch)
    assert whole[0] == streamed[0] == "ok"
    tests, warnings, item = streamed[1]
    assert isinstance(item, docstream.StreamedDoc) and not item.whole  # streamed to the end
    assert whole[1][2] is None  # the whole-file path kept its tests in memory
    assert len(tests) == N
    assert tests == whole[1][0]  # vars, assertions, locations (file:line), key paths: all equal
    assert warnings == whole[1][1]
    if suffix == ".yaml":
        aliased = tests[N // 2]
        assert aliased.vars == {"q": "shared question", "n": 1}
        assert [a.value for a in aliased.asserts] == ["shared", "SHARED"]
        assert aliased.key_path == f"[{N // 2}]" and aliased.loc is not None and aliased.loc.line > 1000


def test_small_files_and_single_tests_keep_the_whole_file_path(tmp_path: Path) -> None:
    small = tmp_path / "small.yaml"
    small.write_text(_yaml(20))
    assert not docstream.streams(small)  # under STREAM_MIN_BYTES
    mapping = tmp_path / "one.yaml"
    mapping.write_text("description: one test\nvars:\n" + "".join(f"  v{i}: {'x' * 80}\n" for i in range(15000)))
    assert mapping.stat().st_size > docstream.STREAM_MIN_BYTES and not docstream.streams(mapping)
    big = tmp_path / "big.yaml"
    big.write_text(_yaml(6000))
    assert big.stat().st_size > docstream.STREAM_MIN_BYTES and docstream.streams(big)


@pytest.mark.parametrize(("change", "falls_back"), [
    ("- <<: {vars: {q: merged}}\n  description: a merge key\n", True),  # merge keys: read by the whole-file reader
    ("- vars: {q: !!timestamp 2001-12-14}\n", True),  # an explicit tag beyond the core schema
    ("- vars: {q: !!str 12, n: !!float 3}\n", False),  # core-schema tags: streamed
    ("- vars: {q: &late x}\n  description: *late\n", False),  # a scalar anchor and its alias: streamed
])
def test_a_feature_the_stream_leaves_to_the_whole_file_reader_gives_the_same_result(
        change: str, falls_back: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _config(tmp_path, "t.yaml", _yaml(extra={1200: change}))
    whole, streamed = _both(cfg, monkeypatch)
    assert whole[0] == streamed[0] == "ok"
    assert streamed[1][:2] == whole[1][:2] and len(whole[1][0]) == N
    item = streamed[1][2]
    assert isinstance(item, docstream.StreamedDoc) and item.whole is falls_back


YAML_ERRORS = {
    "unknown key": "- vras: {q: 1}\n",
    "not a mapping": "- just a string\n",
    "unknown assertion": "- assert: [{type: containz, value: x}]\n",
    "deep wrong type": "- assert:\n    - type: contains\n      value: x\n      weight: heavy\n",
    "duplicate key": "- vars:\n    q: 1\n    q: 2\n",
    "unknown alias": "- vars: *nowhere\n",
    "syntax": "- vars: {q: [1, 2}\n",
    "tab": "- vars:\n\tq: 1\n",
}


@pytest.mark.parametrize("name", list(YAML_ERRORS))
def test_yaml_errors_are_the_whole_file_errors(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, streamed = _both(_config(tmp_path, "t.yaml", _yaml(extra={1400: YAML_ERRORS[name]})), monkeypatch)
    assert whole[0] == "error" and streamed == whole
    assert whole[1][1].endswith("/t.yaml") and whole[1][2] > 1000  # the line in the file, deep in it


def _json_with(i: int, change: Any) -> str:
    tests: list[Any] = _json_tests()
    tests[i] = change
    return _json(tests)


JSON_ERRORS = {
    "unknown key": lambda: _json_with(1300, {"vras": {"q": 1}}),
    "not an object": lambda: _json_with(1300, "a string"),
    "deep wrong type": lambda: _json_with(1300, {"assert": [{"type": "contains", "value": "x", "weight": "heavy"}]}),
    "deep unknown assertion": lambda: _json_with(1300, {"assert": [{"type": "equals", "value": "x"},
                                                                   {"type": "containz", "value": "x"}]}),
    "duplicate key": lambda: _json_with(1300, {"vars": {"q": 1}}).replace('"q": 1', '"q": 1, "q": 2'),
    "trailing comma": lambda: _json(_json_tests()).rstrip().rstrip("]") + ",]\n",
    "text after the list": lambda: _json(_json_tests()) + "[]\n",
    "cut short": lambda: _json(_json_tests())[:-200],
}


@pytest.mark.parametrize("name", list(JSON_ERRORS))
def test_json_errors_are_the_whole_file_errors(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole, streamed = _both(_config(tmp_path, "t.json", JSON_ERRORS[name]()), monkeypatch)
    assert whole[0] == "error" and streamed == whole
    assert whole[1][1].endswith("/t.json") and whole[1][2] > 1000


def test_an_ignored_key_deep_in_a_json_item_warns_at_its_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tests = _json_tests()
    tests[1100]["assert"][1]["extra"] = 1  # promptfoo ignores unknown assertion keys: a warning with the line
    whole, streamed = _both(_config(tmp_path, "t.json", _json(tests)), monkeypatch)
    assert whole[0] == streamed[0] == "ok"
    assert streamed[1][1] == whole[1][1] and len(whole[1][1]) == 1 and "t.json:" in whole[1][1][0]
    assert streamed[1][0] == whole[1][0]


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_streamed_file_runs_to_the_whole_file_results(suffix: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    text = _yaml(600) if suffix == ".yaml" else _json(_json_tests(600))
    cfg = _config(tmp_path, "t" + suffix, text)
    out: dict[bool, tuple[int, list[Any], dict[str, Any]]] = {}
    for stream in (False, True):
        monkeypatch.setattr(docstream, "STREAM_MIN_BYTES", 0 if stream else 10**12)
        results = tmp_path / f"r{stream}.jsonl"
        report = tmp_path / f"r{stream}.json"
        code = main(["eval", str(cfg), "--no-progress-bar", "--no-table", "--no-cache", "--results-file",
                     str(results), "-o", str(report)])
        records = sorted((json.loads(x) for x in results.read_text().splitlines()), key=lambda r: r["index"])
        for r in records:
            r.pop("latency_ms", None)
        summary = json.loads(report.read_text())["summary"]
        out[stream] = (code, records, {k: summary[k] for k in ("passed", "failed", "errors", "total")})
    assert out[True] == out[False]
    assert len({r["test_index"] for r in out[True][1]}) == 600


def _peak(cfg: Path) -> int:
    """tracemalloc peak of loading the suite and reading its tests once more (as a run does)."""
    import tracemalloc

    tracemalloc.start()
    try:
        suite = config.load([str(cfg)])
        for _ in suite.tests:
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_memory_stays_flat_as_a_streamed_file_grows(suffix: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def make(n: int, name: str) -> Path:  # the same assertions in every test: no cache grows with the tests
        folder = tmp_path / name
        folder.mkdir()
        tests = [{"description": f"test {i}", "vars": {"q": f"question {i}", "n": i},
                  "assert": [{"type": "contains", "value": "question"}, {"type": "icontains", "value": "Q"}]}
                 for i in range(n)]
        text = _json(tests) if suffix == ".json" else "".join(
            f"- description: test {i}\n  vars:\n    q: question {i}\n    n: {i}\n  assert:\n"
            f"    - type: contains\n      value: question\n    - type: icontains\n      value: Q\n" for i in range(n))
        return _config(folder, "t" + suffix, text)

    small, large = make(400, "small"), make(1600, "large")
    _load(make(50, "warm"), monkeypatch, stream=True)  # imports and caches, before measuring
    monkeypatch.setattr(docstream, "STREAM_MIN_BYTES", 0)
    streamed = (_peak(small), _peak(large))
    monkeypatch.setattr(docstream, "STREAM_MIN_BYTES", 10**12)
    whole = (_peak(small), _peak(large))
    assert whole[1] > 1.5 * whole[0]  # read whole, 4x the tests hold more memory ...
    assert streamed[1] < 1.2 * streamed[0] + 2**18  # ... streamed, about the same (measured: 90 KB and 92 KB)
    assert streamed[1] < whole[1] / 4
