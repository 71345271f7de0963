"""`--shard K/N` keeps an output group (the cases select-best compares) in one shard: merged shards == unsharded."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from evalrun.cli import main
from evalrun.run import shard
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import route

CONFIG = """providers: [{id: echo, label: a}, {id: echo, label: b}]
prompts: ['Short: {{q}}', 'A long answer about {{q}} with many details and reasons']
grader: {id: 'openai:chat:fake-model', config: {apiBaseUrl: 'URL', apiKey: sk-x}}
tests:
  - vars: {q: [cats, dogs, birds]}
    assert:
      - {type: select-best, value: the most detailed answer}
      - {type: contains, value: '{{q}}'}
  - vars: {q: fine}
    assert: [{type: contains, value: fine}]
  - description: compared again
    vars: {q: fish}
    assert: [{type: select-best, value: the shortest answer, metric: pick}]
  - description: always fails
    vars: {q: nope}
    assert: [{type: equals, value: other}]
"""


def _no_latency(value: Any) -> Any:
    """The value without its timings (`latency_ms` at any depth): the only part of a record a rerun changes."""
    if isinstance(value, dict):
        return {k: _no_latency(v) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [_no_latency(v) for v in value]
    return value


def _records(path: Path) -> dict[int, dict[str, Any]]:
    out = {}
    for line in path.read_text().splitlines():
        rec = _no_latency(json.loads(line))
        out[int(rec["index"])] = rec
    return out


def _run(tmp_path: Path, name: str, *extra: str) -> int:
    return main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-table", "--no-cache",
                 "--results-file", str(tmp_path / f"{name}.jsonl"), *extra])


def _group(rec: dict[str, Any]) -> tuple[Any, ...]:
    return rec["test_index"], json.dumps(rec["vars"], sort_keys=True), rec["repeat"]


@pytest.mark.parametrize("repeat", ["1", "2"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_select_best_groups_stay_whole_and_merged_shards_equal_the_unsharded_run(
        tmp_path: Path, n: int, repeat: str, capsys: pytest.CaptureFixture[str], fake_openai: FakeOpenAI) -> None:
    route(fake_openai, judge={"best": 2, "reason": "the third output"})  # a group split in two would differ
    (tmp_path / "c.yaml").write_text(CONFIG.replace("URL", fake_openai.url))
    full_code = _run(tmp_path, "full", "--repeat", repeat, "-o", str(tmp_path / "full.json"))
    full = _records(tmp_path / "full.jsonl")
    assert len(full) == 24 * int(repeat) and full_code == 100
    chosen = [r for r in full.values() if r["test_index"] == 0 and r["assertions"][0]["pass"]]
    assert len(chosen) == 3 * int(repeat)  # one winner per group, graded through the fake server
    groups: dict[tuple[Any, ...], set[int]] = defaultdict(set)  # select-best groups -> the shards holding them
    sizes = []
    for k in range(1, n + 1):
        _run(tmp_path, f"s{k}", "--repeat", repeat, "--shard", f"{k}/{n}")
        got = _records(tmp_path / f"s{k}.jsonl")
        sizes.append(len(got))
        for rec in got.values():
            if rec["test_index"] in (0, 2):
                groups[_group(rec)].add(k)
    assert len(groups) == 4 * int(repeat) and all(len(held) == 1 for held in groups.values())  # never split
    assert sum(sizes) == len(full) and max(sizes) - min(sizes) <= 4  # balanced to within one group
    capsys.readouterr()
    code = main(["merge", *(str(tmp_path / f"s{k}.jsonl") for k in range(1, n + 1)), "--no-table",
                 "--results-file", str(tmp_path / "merged.jsonl"), "-o", str(tmp_path / "merged.json")])
    assert code == full_code
    assert _records(tmp_path / "merged.jsonl") == full  # the same records: each group compared as a whole
    want = json.loads((tmp_path / "full.json").read_text())["summary"]
    got_summary = json.loads((tmp_path / "merged.json").read_text())["summary"]
    for key in ("passed", "failed", "errors", "total", "pass_rate", "metrics", "tokens", "cost"):
        assert got_summary[key] == want[key], key


def test_the_positional_rule_would_split_these_groups(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    """The suite above really tests grouping: case positions modulo 3 put one group's cases in different shards."""
    route(fake_openai, judge={"best": 2, "reason": "the third output"})
    (tmp_path / "c.yaml").write_text(CONFIG.replace("URL", fake_openai.url))
    _run(tmp_path, "full")
    full = _records(tmp_path / "full.jsonl")
    split = defaultdict(set)
    for i, rec in full.items():
        if rec["test_index"] == 0:
            split[_group(rec)].add(i % 3)
    assert any(len(s) > 1 for s in split.values())


def test_without_groups_shards_are_positions_modulo_n() -> None:
    class _T:
        asserts: tuple[Any, ...] = ()

    class _C:
        def __init__(self, i: int) -> None:
            self.index, self.test, self.vars, self.repeat = i, _T(), {}, 0

    cases = [_C(i) for i in range(10)]
    for n in (1, 3, 4):
        for k in range(1, n + 1):
            picked = [c.index for c in shard.select(cases, k, n)]  # type: ignore[arg-type]
            assert picked == [i for i in range(10) if i % n == k - 1]
            assert shard.count(10, k, n, [_T()]) == len(picked)


def test_a_shards_count_is_known_unless_groups_may_decide(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    from evalrun import config

    (tmp_path / "c.yaml").write_text(CONFIG.replace("URL", fake_openai.url))
    tests = config.load([str(tmp_path / "c.yaml")]).tests
    assert shard.count(24, 1, 3, tests) is None  # select-best groups: their sizes decide
    assert shard.count(24, 1, 1, tests) == 24

    class Streamed:  # a streamed TestList: it knows whether any test is graded, not which
        graded = True

        def __iter__(self) -> Any:
            raise AssertionError("read again")

    assert shard.count(24, 2, 3, Streamed()) is None  # finding out would read the file again
    Streamed.graded = False
    assert shard.count(24, 2, 3, Streamed()) == 8  # no graded test: no select-best, no groups
