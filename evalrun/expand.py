"""Pure: Suite -> lazy iterator of Case in promptfoo's order (tests x repeat x var combinations x providers x
prompts); `count_cases` and `test_case_counts` count them without building any."""

from __future__ import annotations

import hashlib
import itertools
import json
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any

from evalrun.config.suite import count_combinations, var_values
from evalrun.config.suite import pairs as selected_pairs
from evalrun.types import Case, PromptSpec, ProviderSpec, Suite, TestSpec


def _repeat(suite: Suite, repeat: int | None) -> int:
    return max(1, int(repeat if repeat is not None else suite.evaluate_options.get("repeat") or 1))


def _expands(suite: Suite, test: TestSpec) -> bool:
    return not (suite.disable_var_expansion or test.options.get("disableVarExpansion"))


def var_combinations(vars: dict[str, Any], expand: bool = True) -> Iterable[dict[str, Any]]:
    """Cartesian product of the vars' values, the first key varying slowest (lazily when there is one)."""
    if not expand or not _expanding(vars):
        return (dict(vars),)  # one combination (the common flat test): what the product below would give
    keys = list(vars)
    return (dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(var_values(vars[k]) for k in keys)))


def _expanding(vars: dict[str, Any]) -> bool:
    for v in vars.values():  # noqa: SIM110 - a plain loop (no generator): this runs once per test
        if isinstance(v, list) and v and isinstance(v[0], str):
            return True
    return False


def _with_affixes(prompt: PromptSpec, prefix: str, suffix: str) -> PromptSpec:
    if not prefix and not suffix:
        return prompt
    raw = prompt.raw
    if isinstance(raw, str):
        return replace(prompt, raw=f"{prefix}{raw}{suffix}")
    msgs = [dict(m) for m in raw]
    if msgs and isinstance(msgs[0].get("content"), str):
        msgs[0]["content"] = prefix + msgs[0]["content"]
    if msgs and isinstance(msgs[-1].get("content"), str):
        msgs[-1]["content"] = msgs[-1]["content"] + suffix
    return replace(prompt, raw=msgs)


def pairs(suite: Suite, test: TestSpec) -> list[tuple[ProviderSpec, PromptSpec]]:
    """(provider, prompt) pairs this test runs (config/suite.py)."""
    return selected_pairs(test, suite.providers, suite.prompts)


#: The text of the vars that case ids hash: json.dumps(vars, sort_keys=True, ensure_ascii=False, default=str).
vars_key = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str).encode


def case_id(test_index: int, vars: dict[str, Any], provider: ProviderSpec, prompt_id: str, repeat: int) -> str:
    """Stable id of one case (12 hex digits)."""
    vkey = vars_key(vars)
    text = f"{test_index}\x1f{vkey}\x1f{provider.label or provider.id}\x1f{prompt_id}\x1f{repeat}"
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def iter_cases(suite: Suite, *, repeat: int | None = None, start: int = 0) -> Iterator[Case]:
    """Every case, lazily, in promptfoo's order; `start`: the index of the first (a worker's window of tests,
    run/workers.py, numbers its cases as the whole suite does)."""
    reps = _repeat(suite, repeat)
    index = start
    #: by what pairs() and affixes read: (provider, prompt, the id text between vars and repeat) per pair
    runs: dict[tuple[Any, ...], list[tuple[ProviderSpec, PromptSpec, str]]] = {}
    encode = vars_key
    sha1 = hashlib.sha1
    for test in suite.tests:
        options = test.options
        prefix = str(options.get("prefix") or "") if options else ""
        suffix = str(options.get("suffix") or "") if options else ""
        rkey = (test.providers, test.prompts, prefix, suffix)
        run = runs.get(rkey)
        if run is None:
            affixed = [(prov, _with_affixes(prompt, prefix, suffix)) for prov, prompt in pairs(suite, test)]
            run = [(prov, prompt, f"\x1f{prov.label or prov.id}\x1f{prompt.id}\x1f") for prov, prompt in affixed]
            if len(runs) >= 1024:
                runs.clear()
            runs[rkey] = run
        if not run:
            continue
        expand = _expands(suite, test)
        single = len(run) == 1
        for rep in range(reps):
            for vars in var_combinations(test.vars, expand):
                vkey = encode(vars)
                for prov, prompt, tail in run:  # tail: what case_id puts between vkey and the repeat
                    text = f"{test.index}\x1f{vkey}{tail}{rep}"
                    cid = sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
                    yield Case(cid, index, test, vars if single else dict(vars), prov, prompt, rep)
                    index += 1


def case_counter(suite: Suite) -> Callable[[TestSpec], tuple[int, int]]:
    """A test -> (its provider x prompt pairs, the cases one repeat of it expands to: pairs x var combinations),
    arithmetic only; the pairs are worked out once per distinct provider/prompt filter."""
    memo: dict[tuple[Any, Any], int] = {}

    def count(test: TestSpec) -> tuple[int, int]:
        key = (test.providers, test.prompts)
        n_pairs = memo.get(key)
        if n_pairs is None:
            n_pairs = memo[key] = len(pairs(suite, test))
        return n_pairs, n_pairs * count_combinations(test.vars, _expands(suite, test)) if n_pairs else 0

    return count


def test_case_counts(suite: Suite, *, repeat: int | None = None) -> array[int]:
    """The number of cases each test expands to, in test order (streamed tests: counted when they were checked)."""
    reps = _repeat(suite, repeat)
    known = getattr(suite.tests, "case_counts", None)
    if known is None:
        count = case_counter(suite)
        known = array("q", [count(test)[1] for test in suite.tests])
    return array("q", [n * reps for n in known]) if reps > 1 else array("q", known)


def count_cases(suite: Suite, *, repeat: int | None = None) -> int:
    """Number of cases iter_cases yields, computed without building them."""
    return sum(test_case_counts(suite, repeat=repeat))
