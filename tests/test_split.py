"""Parts of a run (run/split.py): `eval --shard K/N` + `merge` give exactly the unsharded run (records, summary,
exit code); parts are contiguous ranges of the expansion found by counting, a select-best group is never split,
only the tests a part touches are expanded; filters that read each case deal the stream's units in turn."""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from evalrun import config, expand
from evalrun.cli import main
from evalrun.errors import UsageError
from evalrun.run import split
from evalrun.run.split import Window
from tests.fakeserver import FakeOpenAI
from tests.graderfakes import route

FLAT = """providers: [{id: echo, label: a}, {id: echo, label: b}]
prompts: ['Say {{q}} {{n}}']
tests:
  - vars: {q: [hello, world, there], n: '1'}
    assert: [{type: contains, value: hello, metric: hi}]
  - vars: {q: fine, n: ['2', '3']}
    assert: [{type: contains, value: fine}]
  - description: always fails
    vars: {q: nope, n: '4'}
    assert: [{type: equals, value: other}]
"""


def _by_id(path: Path) -> dict[str, dict[str, object]]:
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rec.pop("latency_ms", None)
        out[str(rec["id"])] = rec
    return out


def _run(tmp_path: Path, name: str, *extra: str) -> int:
    return main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-table", "--no-cache",
                 "--results-file", str(tmp_path / f"{name}.jsonl"), *extra])


@pytest.mark.parametrize("n", [1, 3, 4, 20])
def test_shards_union_is_the_unsharded_run(tmp_path: Path, n: int, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(FLAT)
    full_code = _run(tmp_path, "full", "-o", str(tmp_path / "full.json"))
    full = _by_id(tmp_path / "full.jsonl")
    assert len(full) == 12 and full_code == 100
    shard_ids: list[set[str]] = []
    for k in range(1, n + 1):
        _run(tmp_path, f"s{k}", "--shard", f"{k}/{n}")
        shard_ids.append(set(_by_id(tmp_path / f"s{k}.jsonl")))
    assert set().union(*shard_ids) == set(full)  # every case once ...
    assert sum(len(s) for s in shard_ids) == len(full)  # ... and no case twice
    assert max(map(len, shard_ids)) - min(map(len, shard_ids)) <= 1  # balanced by case count
    capsys.readouterr()
    code = main(["merge", *(str(tmp_path / f"s{k}.jsonl") for k in range(1, n + 1)), "--no-table",
                 "--results-file", str(tmp_path / "merged.jsonl"), "-o", str(tmp_path / "merged.json")])
    assert code == full_code
    assert _by_id(tmp_path / "merged.jsonl") == full
    merged_lines = [json.loads(x)["index"] for x in (tmp_path / "merged.jsonl").read_text().splitlines()]
    assert merged_lines == sorted(merged_lines)  # expansion order
    want = json.loads((tmp_path / "full.json").read_text())["summary"]
    got = json.loads((tmp_path / "merged.json").read_text())["summary"]
    for key in ("passed", "failed", "errors", "total", "pass_rate", "metrics", "tokens", "cost"):
        assert got[key] == want[key], key


def _indices(path: Path) -> list[int]:
    return sorted(int(str(r["index"])) for r in _by_id(path).values())


def test_shards_are_stable_and_compose_with_filters(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(FLAT)
    _run(tmp_path, "one", "--shard", "2/3", "--filter-first-n", "7")
    _run(tmp_path, "two", "--shard", "2/3", "--filter-first-n", "7")
    assert _by_id(tmp_path / "one.jsonl") == _by_id(tmp_path / "two.jsonl")
    assert _indices(tmp_path / "one.jsonl") == [2, 3]  # positions 7/3 to 14/3 of the first 7
    # a filter that reads each case: its stream is dealt in turn (2nd, 5th, ... of the cases it keeps)
    _run(tmp_path, "pattern", "--shard", "2/3", "--filter-pattern", "fails")
    assert _indices(tmp_path / "pattern.jsonl") == [11]
    for k in (1, 2, 3):
        _run(tmp_path, f"p{k}", "--shard", f"{k}/3", "--filter-pattern", "^$")  # the tests without description
    assert sorted(i for k in (1, 2, 3) for i in _indices(tmp_path / f"p{k}.jsonl")) == list(range(10))
    assert _indices(tmp_path / "p2.jsonl") == [1, 4, 7]


def test_all_passing_merge_exits_0_and_overlap_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(FLAT.split("  - description")[0].replace("value: hello", "value: Say"))
    assert _run(tmp_path, "s1", "--shard", "1/2") == 0
    assert _run(tmp_path, "s2", "--shard", "2/2") == 0
    s1, s2 = str(tmp_path / "s1.jsonl"), str(tmp_path / "s2.jsonl")
    out = str(tmp_path / "m.jsonl")
    assert main(["merge", s1, s2, "--no-table", "--results-file", out]) == 0
    assert main(["merge", s1, s1, "--no-table", "--results-file", out]) == 2
    assert "is in both" in capsys.readouterr().err
    assert main(["merge", s1, str(tmp_path / "missing.jsonl"), "--results-file", out]) == 2


@pytest.mark.parametrize("bad", ["0/4", "5/4", "1/0", "a/b", "1", "-1/2"])
def test_bad_shard_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError):
        split.parse(bad)
    assert split.parse(" 3 / 4 ") == (3, 4)


def test_cuts_are_balanced_and_respect_grains() -> None:
    assert split.cut([1] * 10, [1] * 10, 2) == [Window(0, 5, 0, 0, 5), Window(5, 10, 5, 5, 10)]
    assert [len(w) for w in split.cut([1] * 10, [1] * 10, 4)] == [2, 3, 2, 3]
    assert split.cut([6, 1, 1, 1, 1, 1, 1], [6, 1, 1, 1, 1, 1, 1], 2) == [Window(0, 1, 0, 0, 6),
                                                                          Window(1, 7, 6, 6, 12)]
    # a test that may not be cut (its grain is all of it): the cut goes to its nearer end
    assert [len(w) for w in split.cut([12], [12], 4)] == [0, 12, 0, 0]
    # groups of 4 inside one test: cuts on group ends; a window starting inside a test keeps that test's base
    assert split.cut([12], [4], 3) == [Window(0, 1, 0, 0, 4), Window(0, 1, 0, 4, 8), Window(0, 1, 0, 8, 12)]
    assert split.cut([0, 3, 0, 0, 3, 0], [1] * 6, 2) == [Window(1, 2, 0, 0, 3), Window(4, 5, 3, 3, 6)]
    assert [len(w) for w in split.cut([2, 2, 2], [1, 1, 1], 8)] == [0, 1, 1, 1, 0, 1, 1, 1]
    assert [len(w) for w in split.cut([], [], 2)] == [0, 0] and [len(w) for w in split.cut([0, 0], [1, 1], 2)] == [0, 0]
    # --filter-first-n: only the first cases count; the last window stops inside its test
    assert split.cut([3, 3, 3, 3], [3] * 4, 2, first_n=7) == [Window(0, 1, 0, 0, 3), Window(1, 3, 3, 3, 7)]
    assert [len(w) for w in split.cut([3, 3], [1, 1], 2, first_n=0)] == [0, 0]
    for counts in ([1] * 97, [5, 1, 9, 2, 2, 7, 1, 1, 3], [4] * 13):
        for grains in ([1] * len(counts), counts):
            for n in range(1, 7):
                ws = [w for w in split.cut(counts, grains, n) if w]
                assert ws[0].start == 0 and ws[-1].stop == sum(counts)
                assert all(a.stop == b.start and a.hi - 1 <= b.lo for a, b in itertools.pairwise(ws))
                for w in ws:  # base: the first case of test lo; every cut at a multiple of the test's grain
                    assert w.base == sum(counts[:w.lo]) and (w.start - w.base) % grains[w.lo] == 0


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


def test_a_filtered_stream_deals_whole_groups_in_turn(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG.replace("URL", fake_openai.url))
    suite = config.load([str(tmp_path / "c.yaml")])
    every = list(expand.iter_cases(suite))
    parts = [[c.index for c in split.deal(every, k, 3)] for k in (1, 2, 3)]
    assert sorted(i for p in parts for i in p) == list(range(24))
    assert parts[0][:4] == [0, 1, 2, 3]  # the first group, whole, to the first part; the next to the second
    assert parts[1][:4] == [4, 5, 6, 7]
    held: dict[tuple[Any, ...], set[int]] = defaultdict(set)
    for k, p in enumerate(parts):
        for i in p:
            c = every[i]
            if c.test.index in (0, 2):  # the tests with select-best
                held[(c.test.index, json.dumps(c.vars), c.repeat)].add(k)
    assert len(held) == 4 and all(len(s) == 1 for s in held.values())


RANGES = """providers: [{id: echo, label: a}, {id: echo, label: b}]
prompts: ['Short {{q}}', 'Long {{q}} answer']
tests:
  - vars: {q: [cats, dogs, birds], n: ['1', '2']}
    assert: [{type: select-best, value: the best}]
  - vars: {q: plain}
    assert: [{type: contains, value: plain}]
  - vars: {q: none}
    providers: [a]
  - vars: {q: [x, y, z, w, v]}
    assert: [{type: contains, value: x}]
  - vars: {q: fish}
    assert: [{type: select-best, value: the shortest}]
"""


def _case_key(case: Any) -> tuple[Any, ...]:
    return case.index, case.id, case.test.index, case.vars, case.provider.label, case.prompt.id, case.repeat


@pytest.mark.parametrize("repeat", [None, 2])
@pytest.mark.parametrize("first_n", [None, 30, 7])
def test_ranges_cover_the_expansion_once_with_groups_whole(tmp_path: Path, repeat: int | None,
                                                           first_n: int | None) -> None:
    (tmp_path / "c.yaml").write_text(RANGES)
    suite = config.load([str(tmp_path / "c.yaml")])
    every = [_case_key(c) for c in expand.iter_cases(suite, repeat=repeat)][:first_n]
    for n in range(1, 8):
        shards = [[_case_key(c) for c in split.cases(suite, repeat, part=(k, n), first_n=first_n)[0]] for k in range(1, n + 1)]
        assert [c for s in shards for c in s] == every  # contiguous, in order, each case once
        for s in shards:  # a select-best group (test 0 or 4, one var combination and repeat) is never cut
            for edge in (s[:1], s[-1:]):
                for c in edge:
                    if c[2] in (0, 4) and first_n is None:
                        group = [x for x in every if x[2] == c[2] and x[3] == c[3] and x[6] == c[6]]
                        assert all(x in s for x in group)
        sizes = [len(s) for s in shards]
        assert max(sizes) - min(sizes) <= 1 + 2 * 2  # each end moves by at most half a group of 4


def test_only_the_tests_a_range_touches_are_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "c.yaml").write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n"
                                     + "".join(f"  - vars: {{q: [a{i}, b{i}, c{i}]}}\n" for i in range(40)))
    suite = config.load([str(tmp_path / "c.yaml")])
    built: list[int] = []
    real = expand.iter_cases

    def counting(s: Any, *, repeat: int | None = None, start: int = 0) -> Any:
        for case in real(s, repeat=repeat, start=start):
            built.append(case.test.index)
            yield case

    monkeypatch.setattr(expand, "iter_cases", counting)
    got = list(split.cases(suite, None, part=(3, 4))[0])
    assert [c.index for c in got] == list(range(60, 90))
    assert set(built) == set(range(20, 30)) and len(built) == 30  # tests 20-29 only, not the other 30


@pytest.mark.parametrize("repeat", [None, 3])
@pytest.mark.parametrize("first_n", [None, 50])
def test_a_streamed_suite_is_cut_by_its_counts_without_building_other_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repeat: int | None, first_n: int | None) -> None:
    import json

    from evalrun.config import tests as test_sources

    rows = [{"vars": {"q": [f"a{i}", f"b{i}"] if i % 4 == 0 else f"q{i}"}} for i in range(40)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.yaml").write_text("providers: [echo]\nprompts: ['{{q}}', 'again {{q}}']\n"
                                     "tests: [{vars: {q: inline}}, file://t.jsonl]\n")
    suite = config.load([str(tmp_path / "c.yaml")])
    every = [_case_key(c) for c in expand.iter_cases(suite, repeat=repeat)][:first_n]
    built: list[int] = []
    real = test_sources.to_spec

    def counting(part: Any, i: int) -> Any:
        built.append(i)
        return real(part, i)

    monkeypatch.setattr(test_sources, "to_spec", counting)
    for n in (1, 2, 5, 7):
        shards = [[_case_key(c) for c in split.cases(suite, repeat, part=(k, n), first_n=first_n)[0]] for k in range(1, n + 1)]
        assert [c for s in shards for c in s] == every  # contiguous, in order, each case once
    built.clear()
    got = list(split.cases(suite, repeat, part=(4, 5), first_n=first_n)[0])
    tests = {c.test.index for c in got}
    assert set(built) == tests and len(built) == len(tests)  # only the range's rows were built
