"""Pure: the suite narrowed by the `--filter-*` options that pick tests, prompts and providers before the cases
are expanded (promptfoo's filterTests, filterPrompts and filterProviders); the filters that read each case
(`--filter-failing*`, `--filter-errors-only`, `--filter-first-n`) are split.selector's."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evalrun.errors import UsageError
from evalrun.types import Suite, TestSpec

_RANGE = re.compile(r"^\s*(\d*)\s*:\s*(\d*)\s*$")
_U32 = 1 << 32


@dataclass(frozen=True)
class Narrowing:
    """The options, checked (`from_options`); the empty Narrowing keeps everything."""

    metadata: tuple[tuple[str, str], ...] = ()
    pattern: re.Pattern[str] | None = None
    range: tuple[int, int | None] | None = None
    sample: int | None = None
    seed: str | None = None
    prompts: re.Pattern[str] | None = None
    providers: re.Pattern[str] | None = None
    given: dict[str, str] = field(default_factory=dict)  # flag -> value, for messages

    @classmethod
    def from_options(cls, *, metadata: Sequence[str] = (), pattern: str | None = None, range: str | None = None,
                     sample: int | None = None, seed: str | None = None, prompts: str | None = None,
                     providers: str | None = None) -> Narrowing:
        if sample is not None and sample < 0:
            raise UsageError(f"--filter-sample {sample} is not a number of tests", key="--filter-sample")
        if seed is not None and sample is None:
            raise UsageError("--filter-sample-seed needs --filter-sample N", key="--filter-sample-seed")
        given = {flag: str(v) for flag, v in (("--filter-metadata", " ".join(metadata)), ("--filter-range", range),
                                              ("--filter-sample", sample), ("--filter-prompts", prompts),
                                              ("--filter-providers", providers)) if v not in (None, "")}
        return cls(metadata=tuple(parse_metadata(m) for m in metadata), pattern=_regex(pattern, "--filter-pattern"),
                   range=None if range is None else parse_range(range), sample=sample, seed=seed,
                   prompts=_regex(prompts, "--filter-prompts"), providers=_regex(providers, "--filter-providers"),
                   given=given)

    def narrows_tests(self) -> bool:
        return bool(self.metadata) or self.range is not None or self.sample is not None

    def __bool__(self) -> bool:
        return self.narrows_tests() or self.prompts is not None or self.providers is not None

    def apply(self, suite: Suite) -> Suite:
        """The suite with only the chosen tests (in their order; case ids unchanged), prompts and providers; a
        prompt or provider filter that matches none is a UsageError."""
        if not self:
            return suite
        prompts, providers = suite.prompts, suite.providers
        if self.prompts is not None:
            rx = self.prompts
            prompts = tuple(p for p in prompts if rx.search(p.id or "") or rx.search(p.label or ""))
            if not prompts:
                raise UsageError(f"--filter-prompts {rx.pattern!r} matches no prompt", key="--filter-prompts",
                                 hint="it is a regular expression over each prompt's id or label: "
                                      + ", ".join(repr(p.label) for p in suite.prompts[:5]))
        if self.providers is not None:
            rx = self.providers
            providers = tuple(p for p in providers if rx.search(p.id) or rx.search(p.label or ""))
            if not providers:
                raise UsageError(f"--filter-providers {rx.pattern!r} matches no provider", key="--filter-providers",
                                 hint="it is a regular expression over each provider's id or label: "
                                      + ", ".join(repr(p.label or p.id) for p in suite.providers[:5]))
        tests: Sequence[TestSpec] = suite.tests
        if self.narrows_tests():
            tests = tuple(self.tests(list(suite.tests)))
        elif hasattr(tests, "case_counts"):  # streamed tests counted their cases with every prompt and provider
            tests = tuple(tests)
        return replace(suite, prompts=prompts, providers=providers, tests=tests)

    def tests(self, tests: list[TestSpec]) -> list[TestSpec]:
        """promptfoo's filterTests order: metadata, pattern, range, then the sample (kept in config order)."""
        if self.metadata:
            tests = [t for t in tests if metadata_matches(t.metadata, self.metadata)]
        if self.pattern is not None and (self.range is not None or self.sample is not None):
            rx = self.pattern  # before the range and the sample, as promptfoo (it is applied per case later too)
            tests = [t for t in tests if t.description and rx.search(t.description)]
        if self.range is not None:
            start, stop = self.range
            tests = tests[start:stop]
        if self.sample is not None:
            chosen = {id(t) for t in sample(tests, self.sample, self.seed)}
            tests = [t for t in tests if id(t) in chosen]
        return tests


def _regex(text: str | None, flag: str) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as e:
        raise UsageError(f"{flag} {text!r} is not a valid regular expression: {e}", key=flag) from None


def parse_metadata(text: str) -> tuple[str, str]:
    """`--filter-metadata K=V` (V may hold `=`; neither may be empty)."""
    key, _, value = text.partition("=")
    if not key or not value:
        raise UsageError(f"--filter-metadata {text!r} is not in key=value format", key="--filter-metadata",
                         hint="e.g. --filter-metadata type=unit (repeat it: every pair must match)")
    return key, value


def metadata_matches(metadata: dict[str, Any], wanted: Sequence[tuple[str, str]]) -> bool:
    """Every K=V matches: metadata K's text contains V (a list: one of its items does), as promptfoo."""
    for key, value in wanted:
        have = metadata.get(key) if metadata else None
        if isinstance(have, list):
            if not any(value in _js_text(v) for v in have):
                return False
        elif have is None or value not in _js_text(have):
            return False
    return True


def _js_text(value: Any) -> str:
    """JavaScript's toString() of a YAML value (true, 1.5, 3)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ",".join(_js_text(v) for v in value)
    return str(value)


def parse_range(text: str) -> tuple[int, int | None]:
    """`--filter-range START:END`, zero-based, END exclusive, either side may be left out (not both)."""
    m = _RANGE.match(text)
    if not m or not (m.group(1) or m.group(2)):
        raise UsageError(f"--filter-range {text!r} is not START:END", key="--filter-range",
                         hint="zero-based test indices, END exclusive: 0:10, 10:20, 10:, :10")
    start = int(m.group(1) or 0)
    stop = int(m.group(2)) if m.group(2) else None
    if stop is not None and start > stop:
        raise UsageError(f"--filter-range {text!r}: START is after END", key="--filter-range")
    return start, stop


def _i32(x: int) -> int:
    x %= _U32
    return x - _U32 if x >= 1 << 31 else x


def _imul(a: int, b: int) -> int:
    return _i32((a % _U32) * (b % _U32))


def seeded_random(seed: str) -> Callable[[], float]:
    """promptfoo's createSeededRandom (FNV-1a over the seed's UTF-16 units, then a mulberry32-style step):
    the same numbers as promptfoo's for the same seed, so --filter-sample-seed picks the same tests."""
    units = seed.encode("utf-16-le")
    state = 2166136261
    for i in range(0, len(units), 2):
        state = _imul(_i32(state) ^ int.from_bytes(units[i:i + 2], "little"), 16777619)

    def random() -> float:
        nonlocal state
        state = _i32(state + 1831565813)
        value = state
        value = _imul(value ^ ((value % _U32) >> 15), value | 1)
        value = _i32(value ^ _i32(value + _imul(value ^ ((value % _U32) >> 7), value | 61)))
        return ((value ^ ((value % _U32) >> 14)) % _U32) / 4294967296

    return random


def sample(items: Sequence[Any], n: int, seed: str | None = None) -> list[Any]:
    """n of the items by promptfoo's Fisher-Yates shuffle (seeded: promptfoo's picks; else system randomness)."""
    if seed is None:
        import random as system

        rnd: Callable[[], float] = system.SystemRandom().random
    else:
        rnd = seeded_random(seed)
    shuffled = list(items)
    for i in range(len(shuffled) - 1, 0, -1):
        j = int(rnd() * (i + 1))
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled[:n]
