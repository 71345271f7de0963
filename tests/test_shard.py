"""`eval --shard K/N` + `merge`: the shards' union is exactly the unsharded run; the merged summary and exit code too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalrun.cli import main
from evalrun.errors import UsageError
from evalrun.run import shard

CONFIG = """providers: [{id: echo, label: a}, {id: echo, label: b}]
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


def _records(path: Path) -> dict[str, dict[str, object]]:
    out = {}
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        rec.pop("latency_ms", None)
        out[str(rec["id"])] = rec
    return out


def _run(tmp_path: Path, name: str, *extra: str) -> int:
    return main(["eval", str(tmp_path / "c.yaml"), "--no-progress-bar", "--no-table",
                 "--results-file", str(tmp_path / f"{name}.jsonl"), *extra])


@pytest.mark.parametrize("n", [1, 3, 4, 20])
def test_shards_union_is_the_unsharded_run(tmp_path: Path, n: int, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    full_code = _run(tmp_path, "full", "-o", str(tmp_path / "full.json"))
    full = _records(tmp_path / "full.jsonl")
    assert len(full) == 12 and full_code == 100
    shard_ids: list[set[str]] = []
    for k in range(1, n + 1):
        _run(tmp_path, f"s{k}", "--shard", f"{k}/{n}")
        shard_ids.append(set(_records(tmp_path / f"s{k}.jsonl")))
    assert set().union(*shard_ids) == set(full)  # every case once ...
    assert sum(len(s) for s in shard_ids) == len(full)  # ... and no case twice
    assert max(map(len, shard_ids)) - min(map(len, shard_ids)) <= 1  # balanced by case count
    capsys.readouterr()
    code = main(["merge", *(str(tmp_path / f"s{k}.jsonl") for k in range(1, n + 1)), "--no-table",
                 "--results-file", str(tmp_path / "merged.jsonl"), "-o", str(tmp_path / "merged.json")])
    assert code == full_code
    assert _records(tmp_path / "merged.jsonl") == full
    merged_lines = [json.loads(x)["index"] for x in (tmp_path / "merged.jsonl").read_text().splitlines()]
    assert merged_lines == sorted(merged_lines)  # expansion order
    want = json.loads((tmp_path / "full.json").read_text())["summary"]
    got = json.loads((tmp_path / "merged.json").read_text())["summary"]
    for key in ("passed", "failed", "errors", "total", "pass_rate", "metrics", "tokens", "cost"):
        assert got[key] == want[key], key


def test_shards_are_stable_and_compose_with_filters(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG)
    _run(tmp_path, "one", "--shard", "2/3", "--filter-first-n", "7")
    _run(tmp_path, "two", "--shard", "2/3", "--filter-first-n", "7")
    assert _records(tmp_path / "one.jsonl") == _records(tmp_path / "two.jsonl")
    assert sorted(int(r["index"]) for r in _records(tmp_path / "one.jsonl").values()) == [1, 4]  # type: ignore[call-overload]


def test_all_passing_merge_exits_0_and_overlap_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "c.yaml").write_text(CONFIG.split("  - description")[0].replace("value: hello", "value: Say"))
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
        shard.parse(bad)
    assert shard.parse(" 3 / 4 ") == (3, 4)
    assert [shard.count(10, k, 4) for k in range(1, 5)] == [3, 3, 2, 2]
