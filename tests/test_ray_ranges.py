"""Ray shards as ranges of the expansion (run/ray_ranges.py): found by counting, the same cases as iter_cases,
select-best groups whole, every case in exactly one shard; only the tests a range touches are expanded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalrun import config, expand
from evalrun.run import ray_ranges

CONFIG = """providers: [{id: echo, label: a}, {id: echo, label: b}]
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


def _key(case: Any) -> tuple[Any, ...]:
    return case.index, case.id, case.test.index, case.vars, case.provider.label, case.prompt.id, case.repeat


@pytest.mark.parametrize("repeat", [None, 2])
@pytest.mark.parametrize("first_n", [None, 30, 7])
def test_ranges_cover_the_expansion_once_with_groups_whole(tmp_path: Path, repeat: int | None,
                                                           first_n: int | None) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    suite = config.load([str(tmp_path / "c.yaml")])
    every = [_key(c) for c in expand.iter_cases(suite, repeat=repeat)][:first_n]
    for n in range(1, 8):
        shards = [[_key(c) for c in ray_ranges.cases(suite, repeat, k, n, first_n)] for k in range(1, n + 1)]
        assert [c for s in shards for c in s] == every  # contiguous, in order, each case once
        for s in shards:  # a select-best group (test 0 or 4, one var combination and repeat) is never cut
            for edge in (s[:1], s[-1:]):
                for c in edge:
                    if c[2] in (0, 4) and first_n is None:
                        group = [x for x in every if x[2] == c[2] and x[3] == c[3] and x[6] == c[6]]
                        assert all(x in s for x in group)
        sizes = [len(s) for s in shards]
        assert max(sizes) - min(sizes) <= 2 * (4 - 1) + 1  # each end moves by less than one group of 4


def test_only_the_tests_a_range_touches_are_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "c.yaml").write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n"
                                     + "".join(f"  - vars: {{q: [a{i}, b{i}, c{i}]}}\n" for i in range(40)))
    suite = config.load([str(tmp_path / "c.yaml")])
    built: list[int] = []
    real = expand.iter_cases

    def counting(s: Any, *, repeat: int | None = None) -> Any:
        for case in real(s, repeat=repeat):
            built.append(case.test.index)
            yield case

    monkeypatch.setattr(expand, "iter_cases", counting)
    got = list(ray_ranges.cases(suite, None, 3, 4))
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
    every = [_key(c) for c in expand.iter_cases(suite, repeat=repeat)][:first_n]
    built: list[int] = []
    real = test_sources.to_spec

    def counting(part: Any, i: int) -> Any:
        built.append(i)
        return real(part, i)

    monkeypatch.setattr(test_sources, "to_spec", counting)
    for n in (1, 2, 5, 7):
        shards = [[_key(c) for c in ray_ranges.cases(suite, repeat, k, n, first_n)] for k in range(1, n + 1)]
        assert [c for s in shards for c in s] == every  # contiguous, in order, each case once
    built.clear()
    got = list(ray_ranges.cases(suite, repeat, 4, 5, first_n))
    tests = {c.test.index for c in got}
    assert set(built) == tests and len(built) == len(tests)  # only the range's rows were built
