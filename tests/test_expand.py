"""Test-matrix expansion: promptfoo's order, var products, filters, stable ids, arithmetic counting."""

from __future__ import annotations

from typing import Any

import pytest

from evalrun import expand
from evalrun import types as T
from evalrun.expand import count_cases, iter_cases, var_combinations
from evalrun.types import PromptSpec, ProviderSpec, Suite


def prompt(label: str, raw: str | None = None) -> PromptSpec:
    return PromptSpec(raw=raw or f"{label} {{{{x}}}}", label=label, id=label)


def suite(tests: list[T.TestSpec], providers: list[ProviderSpec] | None = None,
          prompts: list[PromptSpec] | None = None, **kw: object) -> Suite:
    return Suite(description=None, prompts=tuple(prompts or [prompt("p1"), prompt("p2")]),
                 providers=tuple(providers or [ProviderSpec("echo", "a"), ProviderSpec("echo", "b")]),
                 tests=tuple(tests), files=("c.yaml",), **kw)  # type: ignore[arg-type]


def tspec(i: int, vars: dict[str, object], **kw: object) -> T.TestSpec:
    return T.TestSpec(index=i, description=None, vars=vars, asserts=(), **kw)  # type: ignore[arg-type]


def test_promptfoo_order_tests_repeat_vars_providers_prompts() -> None:
    s = suite([tspec(0, {"x": ["1", "2"]}), tspec(1, {"x": "3"})])
    got = [(c.test.index, c.repeat, c.vars["x"], c.provider.label, c.prompt.label)
           for c in iter_cases(s, repeat=2)]
    assert got[:5] == [(0, 0, "1", "a", "p1"), (0, 0, "1", "a", "p2"), (0, 0, "1", "b", "p1"),
                       (0, 0, "1", "b", "p2"), (0, 0, "2", "a", "p1")]
    assert got[8] == (0, 1, "1", "a", "p1") and got[16] == (1, 0, "3", "a", "p1")
    assert len(got) == count_cases(s, repeat=2) == 24
    assert [c.index for c in iter_cases(s)] == list(range(12))


def test_cartesian_product_keys_in_order() -> None:
    combos = list(var_combinations({"a": ["1", "2"], "b": "x", "c": ["u", "v", "w"]}))
    assert len(combos) == 6
    assert combos[0] == {"a": "1", "b": "x", "c": "u"} and combos[1] == {"a": "1", "b": "x", "c": "v"}
    assert combos[3] == {"a": "2", "b": "x", "c": "u"}


def test_lists_of_objects_and_empty_lists_stay_one_value() -> None:
    chunks = [{"text": "a", "relevant": True}, {"text": "b", "relevant": False}]
    combos = list(var_combinations({"chunks": chunks, "empty": [], "nums": [1, 2]}))
    assert combos == [{"chunks": chunks, "empty": [], "nums": [1, 2]}]
    mixed = list(var_combinations({"m": ["s", {"k": 1}]}))  # promptfoo looks at the first element only
    assert [c["m"] for c in mixed] == ["s", {"k": 1}]


def test_disable_var_expansion_suite_and_test() -> None:
    assert count_cases(suite([tspec(0, {"x": ["1", "2"]})], disable_var_expansion=True)) == 4
    t = tspec(0, {"x": ["1", "2"]}, options={"disableVarExpansion": True})
    cases = list(iter_cases(suite([t])))
    assert len(cases) == 4 and cases[0].vars == {"x": ["1", "2"]}


def test_filters() -> None:
    provs = [ProviderSpec("echo", "a", prompts=("p1",)), ProviderSpec("echo", "b")]
    s = suite([tspec(0, {"x": "1"}), tspec(1, {"x": "1"}, providers=("b",)), tspec(2, {"x": "1"}, prompts=("p2",)),
               tspec(3, {"x": "1"}, prompts=("p*",), providers=("echo",))], providers=provs)
    got = [(c.test.index, c.provider.label, c.prompt.label) for c in iter_cases(s)]
    assert got == [(0, "a", "p1"), (0, "b", "p1"), (0, "b", "p2"), (1, "b", "p1"), (1, "b", "p2"),
                   (2, "b", "p2"), (3, "a", "p1"), (3, "b", "p1"), (3, "b", "p2")]
    assert count_cases(s) == len(got)


def test_prefix_suffix_applied_to_text_and_chat_prompts() -> None:
    chat = PromptSpec(raw=[{"role": "system", "content": "S"}, {"role": "user", "content": "U"}], label="c", id="c")
    s = suite([tspec(0, {}, options={"prefix": "<", "suffix": ">"})], prompts=[prompt("p", "T"), chat],
              providers=[ProviderSpec("echo")])
    raws = [c.prompt.raw for c in iter_cases(s)]
    assert raws == ["<T>", [{"role": "system", "content": "<S"}, {"role": "user", "content": "U>"}]]
    assert chat.raw[0]["content"] == "S"  # the suite's prompt is untouched


def test_case_ids_are_stable_and_distinct() -> None:
    s = suite([tspec(0, {"x": ["1", "2"]}), tspec(1, {"x": ["1", "2"]})])
    ids = [c.id for c in iter_cases(s, repeat=2)]
    assert len(set(ids)) == len(ids) == 32 and all(len(i) == 12 for i in ids)
    again = suite([tspec(0, {"x": ["1", "2"]}), tspec(1, {"x": ["1", "2"]})])
    assert ids == [c.id for c in iter_cases(again, repeat=2)]
    relabelled = suite([tspec(0, {"x": ["1", "2"]}), tspec(1, {"x": ["1", "2"]})],
                       providers=[ProviderSpec("echo", "a"), ProviderSpec("echo", "c")])
    assert ids[:2] == [c.id for c in iter_cases(relabelled, repeat=2)][:2]
    assert ids[2] != [c.id for c in iter_cases(relabelled, repeat=2)][2]


def test_repeat_defaults_to_evaluate_options() -> None:
    s = suite([tspec(0, {"x": "1"})], evaluate_options={"repeat": 3})
    assert count_cases(s) == 12 and count_cases(s, repeat=1) == 4
    assert len(list(iter_cases(s))) == 12


def test_million_case_matrix_counts_without_building_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    values = [f"v{i}" for i in range(100)]
    tests = [tspec(i, {"a": values, "b": values}) for i in range(25)]  # 25 x 10,000 combos
    s = suite(tests)  # x 2 providers x 2 prompts = 1,000,000
    with monkeypatch.context() as m:
        m.setattr(expand, "Case", None)  # counting must not build a single Case
        m.setattr(expand, "var_combinations", None)  # nor enumerate combinations
        assert count_cases(s) == 1_000_000
    it = iter_cases(s)
    first = [next(it) for _ in range(3)]
    assert [c.index for c in first] == [0, 1, 2] and first[0].vars == {"a": "v0", "b": "v0"}


def test_count_matches_iteration_on_random_suites() -> None:
    import random

    rng = random.Random(7)
    prompts = [prompt(f"p{i}") for i in range(3)]
    for _ in range(40):
        provs = [ProviderSpec("echo", f"v{i}", prompts=rng.choice([None, ("p0",), ("p1", "p2")])) for i in range(3)]
        tests = []
        for i in range(rng.randint(0, 4)):
            vars = {k: rng.choice([["a", "b"], "x", [1, 2], [], ["c", "d", "e"]]) for k in "xyz"[:rng.randint(0, 3)]}
            tests.append(tspec(i, vars, providers=rng.choice([None, ("v0",), ("v1", "v2")]),
                               prompts=rng.choice([None, ("p0",), ("p2",)]),
                               options=rng.choice([{}, {"disableVarExpansion": True}])))
        s = suite(tests, providers=provs, prompts=prompts)
        reps = rng.randint(1, 3)
        cases = list(iter_cases(s, repeat=reps))
        assert count_cases(s, repeat=reps) == len(cases)
        assert [c.index for c in cases] == list(range(len(cases)))
        assert len({c.id for c in cases}) == len(cases)


def test_vars_key_is_the_id_encoders_text_byte_for_byte() -> None:
    """Case ids hash vars_key(vars): json.dumps(sort_keys=True) exactly (ids stay stable across versions)."""
    import json
    import random

    from evalrun.expand import vars_key

    class Sub(str):
        pass

    samples: list[dict[Any, Any]] = [
        {}, {"a": "b"}, {"b": "1", "a": "2"}, {"q\"": "x\\y\n\t\x00\x1f\x7f", "é": "日本語 \u2028 🎉"},
        {"a": "\ud800x"}, {"z": "1", "a": 2}, {"a": ["x", "y"]}, {"a": None, "b": 1.5}, {"a": Sub("x")},
        {"k": "v" * 1000, "K": "", "aa": "a", "a": "aa"}]
    rng = random.Random(7)
    alphabet = "ab\"\\\n\x01é日🎉\u2028 {}:,"
    for _ in range(2000):
        samples.append({"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5))):
                        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
                        for _ in range(rng.randint(0, 4))})
    for v in samples:
        assert vars_key(v) == json.dumps(v, sort_keys=True, ensure_ascii=False, default=str), v
    with pytest.raises(TypeError):  # keys that cannot be sorted: the encoder's own error, as before
        vars_key({1: "a", "b": "c"})


def test_iter_cases_ids_are_case_id_of_each_case() -> None:
    """iter_cases builds ids from a per-pair tail it precomputes: the same text case_id hashes (resume relies on it)."""
    from evalrun.expand import case_id

    s = suite([tspec(0, {"x": ["1", "2"], "y": "é"}), tspec(1, {"x": "1"})],
              providers=[ProviderSpec("echo", "a"), ProviderSpec("echo", None)])
    cases = list(iter_cases(s, repeat=2))
    assert len(cases) > 8
    assert [c.id for c in cases] == [case_id(c.test.index, c.vars, c.provider, c.prompt.id, c.repeat) for c in cases]
