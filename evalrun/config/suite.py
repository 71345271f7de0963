"""Merged FileConfig -> Suite (defaultTest merged into each test, filters and templates checked), and what a test runs:
the prompts and providers it selects (promptfoo's rules) and its var combinations (counted; expand.py expands)."""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from evalrun.config import checks
from evalrun.config.configfile import FileConfig
from evalrun.config.prompts import DEFAULT_PROMPT
from evalrun.config.tests import TestFile, TestItem, TestList, TestPart, iter_specs
from evalrun.errors import ConfigError, ConfigErrors, Location, did_you_mean
from evalrun.templating import has_template
from evalrun.types import AssertionSpec, PromptSpec, ProviderSpec, Suite, TestSpec


def _match(pattern: str, names: Sequence[str | None]) -> bool:
    if pattern.endswith("*"):
        return any(n is not None and n.startswith(pattern[:-1]) for n in names)
    return pattern in names


def prompt_matches(ref: str, prompt: PromptSpec) -> bool:
    """promptfoo's doesPromptRefMatch: label or id, equal, by `*` prefix, or as the `REF:` group of a label."""
    names = (prompt.label, prompt.id)
    return _match(ref, names) or ref == prompt.group or any(n.startswith(ref + ":") for n in names)


_FILE = "file://"


def _norm_ref(ref: str) -> str:
    return os.path.normpath(ref[len(_FILE):]) if ref.startswith(_FILE) else ref


def _provider_match(pattern: str, provider: ProviderSpec) -> bool:
    written = provider.written_id
    if _match(pattern, (provider.label, provider.id, written)):
        return True
    if not pattern.startswith(_FILE) or pattern.endswith("*"):
        return False
    want = _norm_ref(pattern)
    return want in (_norm_ref(provider.id), _norm_ref(written) if written else None)


def _allowed(filters: Sequence[str] | None, item: Any, match: Callable[[str, Any], bool]) -> bool:
    return filters is None or any(match(f, item) for f in filters)


def _unknown(filters: Sequence[str] | None, items: Sequence[Any], match: Callable[[str, Any], bool]) -> str | None:
    """The first filter entry that matches none of `items`."""
    return next((f for f in filters or () if not any(match(f, x) for x in items)), None)


def pairs(test: TestSpec, providers: Sequence[ProviderSpec],
          prompts: Sequence[PromptSpec]) -> list[tuple[ProviderSpec, PromptSpec]]:
    """(provider, prompt) pairs the test runs, providers outer, prompts inner, filters applied."""
    return [(prov, prompt) for prov in providers if _allowed(test.providers, prov, _provider_match)
            for prompt in prompts if _allowed(prov.prompts, prompt, prompt_matches)
            and _allowed(test.prompts, prompt, prompt_matches)]


def var_values(value: Any, expand: bool = True) -> list[Any]:
    """The values one var takes: a list of strings expands (promptfoo: first element a string)."""
    if expand and isinstance(value, list) and value and isinstance(value[0], str):
        return value
    return [value]


def count_combinations(vars: dict[str, Any], expand: bool = True) -> int:
    """Number of var combinations: the product of the lengths of the lists that expand (see var_values)."""
    n = 1
    if expand:
        for v in vars.values():  # a plain loop (no generator): this runs once per test
            if isinstance(v, list) and v and isinstance(v[0], str):
                n *= len(v)
    return n


def _known(bad: str, names: list[str], what: str) -> str:
    return did_you_mean(bad, names) or f"{what}: {', '.join(names)[:300]}"


def _check_filters(prompts: list[PromptSpec], providers: list[ProviderSpec]) -> None:
    for i, prov in enumerate(providers):
        bad = _unknown(prov.prompts, prompts, prompt_matches)
        if bad is not None:
            raise ConfigError.at(prov.loc, f"provider {prov.name!r} lists prompt {bad!r}, which is not defined",
                                 key=f"providers[{i}].prompts", hint=_known(bad, [p.label for p in prompts],
                                                                            "prompt labels"))


def _check_test_filters(test: TestSpec, prompts: list[PromptSpec], providers: list[ProviderSpec]) -> None:
    bad = _unknown(test.prompts, prompts, prompt_matches)
    if bad is not None:
        raise ConfigError.at(test.loc, f"prompt {bad!r} is not defined", key=f"{test.key_path}.prompts",
                             hint=_known(bad, [p.label for p in prompts], "prompt labels"))
    bad = _unknown(test.providers, providers, _provider_match)
    if bad is not None:
        raise ConfigError.at(test.loc, f"provider {bad!r} is not defined", key=f"{test.key_path}.providers",
                             hint=_known(bad, [p.name for p in providers], "providers"))


def _used_prompts(test: TestSpec, prompts: list[PromptSpec], providers: list[ProviderSpec]) -> list[PromptSpec]:
    used = {id(prompt) for _, prompt in pairs(test, providers, prompts)}
    return [p for p in prompts if id(p) in used]


def _check_key(spec: AssertionSpec) -> Any:
    """What the template check reads of an assertion: its type alone when it holds no template (a plain string
    value, no config, metric or children), else its shared handler (equal assertions share one)."""
    value = spec.value
    if type(value) is str and not spec.config and not spec.metric and not spec.children \
            and not has_template(value):
        return spec.type
    return spec.handler


_UNSEEN = object()


def _has_graded(specs: Sequence[AssertionSpec]) -> bool:
    """Graded or embedding assertions (their grader and embedder are checked before a run)."""
    return any(getattr(s.handler, "graded", False) or getattr(s.handler, "needs_embedder", False)
               or _has_graded(s.children) for s in specs)


#: build_suite reports progress every this many tests (for large streamed test files).
PROGRESS_EVERY = 10_000
#: the test checks stop after this many errors (each is reported)
MAX_ERRORS = 50


def build_suite(cfg: FileConfig, cli_vars: dict[str, Any] | None = None,
                on_progress: Callable[[int], None] | None = None,
                on_test: Callable[[TestSpec, int, bool], None] | None = None) -> Suite:
    """Finish loading: defaults, checks, TestSpecs in promptfoo's order (tests, then scenario tests). `on_test(test,
    pairs, expand)` sees each test in the checking pass: its provider x prompt pairs, whether its list vars expand."""
    first = Location(cfg.files[0], 0) if cfg.files else None
    prompts = cfg.prompts or [PromptSpec(raw=DEFAULT_PROMPT, label=DEFAULT_PROMPT, id=DEFAULT_PROMPT)]
    providers = cfg.providers
    if not providers:
        raise ConfigError.at(first, "no providers: nothing to evaluate", key="providers",
                             hint="add `providers: [echo]` (offline) or a model such as `openai:gpt-4o-mini`")
    labels: dict[str, PromptSpec] = {}
    for p in prompts:
        other = labels.setdefault(p.label, p)
        if other is not p and other.raw != p.raw:
            raise ConfigError.at(p.loc, f"two different prompts have the label {p.label!r}", key="prompts",
                                 hint="give each prompt its own `label`")
    _check_filters(prompts, providers)
    default = cfg.default
    if cli_vars:  # --var k=v: set for every test, as defaultTest vars (a test's own vars win)
        base = default or TestPart()
        default = replace(base, vars={**base.vars, **cli_vars})
    parts: list[TestItem] = [*cfg.tests, *cfg.scenario_tests]
    if not parts and not cfg.has_scenarios:  # promptfoo runs the prompts once with no vars
        parts = [TestPart(loc=first, key_path="tests")]
    needs = {id(p): checks.prompt_needs(p) for p in prompts}
    streamed = any(isinstance(p, TestFile) for p in parts)
    kept: list[TestSpec] = []
    count = 0
    case_counts = array("q")  # streamed: cases per test (8 bytes a test), for splitting a run (run/workers.py)
    graded = False
    used_memo: dict[tuple[Any, Any], list[PromptSpec]] = {}
    pairs_memo: dict[tuple[Any, Any], int] = {}
    no_expansion = bool(default and default.options.get("disableVarExpansion"))
    passed: set[tuple[Any, ...]] = set()  # tests whose template check passed, by what the check reads
    akeys: dict[Any, Any] = {}  # what the check reads of an assertion, by its handler
    errors: list[ConfigError] = []  # every test is checked: all their errors are reported at once
    stored: set[str] = set()  # vars that earlier tests' outputs define at run time (options.storeOutputAs)
    suspects = checks.Suspects()  # likely typos, settled when every test's var names are known
    for test in iter_specs(parts, default):  # checks every test; keeps them unless they are streamed
        fkey = (test.providers, test.prompts)
        used = used_memo.get(fkey)
        if used is None:
            try:
                _check_test_filters(test, prompts, providers)
            except ConfigError as e:
                errors.append(e)
            used = used_memo[fkey] = _used_prompts(test, prompts, providers)
        # The check reads the var names, the prompts and each assertion's templates (one shared handler per
        # distinct assertion, config/asserts.py): tests that agree on those pass or fail alike.
        parts_read = []
        for spec in test.asserts:
            handler = spec.handler
            read = akeys.get(handler, _UNSEEN)
            if read is _UNSEEN:
                read = _check_key(spec)
                if handler is not None:
                    if len(akeys) >= 4096:
                        akeys.clear()
                    akeys[handler] = read
            parts_read.append(read)
        akey = tuple(parts_read)
        ckey = (frozenset(test.vars), fkey, bool(test.options.get("transformVars")),
                bool(test.options.get("rubricPrompt")), akey)
        suspects.defined.update(test.vars)
        if ckey not in passed:
            found = len(suspects.found)
            try:
                checks.check_test(test, [(p, needs[id(p)]) for p in used], suspects)
                missing = checks.check_context(test, stored)  # stored only grows: a passed key stays passed
                if missing:
                    raise ConfigErrors.of(missing)
            except ConfigError as e:
                errors.append(e)
                if len(errors) >= MAX_ERRORS:
                    break
                continue
            if len(passed) >= 4096:
                passed.clear()
            if len(suspects.found) == found:  # a test with a suspect is checked again: each may be an error
                passed.add(ckey)
            graded = graded or _has_graded(test.asserts)
        store_as = test.options.get("storeOutputAs")
        if store_as:
            stored.add(str(store_as))
        count += 1
        if streamed or on_test is not None:
            n_pairs = pairs_memo.get(fkey)
            if n_pairs is None:
                n_pairs = pairs_memo[fkey] = len(pairs(test, providers, prompts))
            expand_on = not (no_expansion or test.options.get("disableVarExpansion"))
            if on_test is not None:
                on_test(test, n_pairs, expand_on)
        if streamed:
            case_counts.append(n_pairs * count_combinations(test.vars, expand_on) if n_pairs else 0)
        else:
            kept.append(test)
        if on_progress is not None and count % PROGRESS_EVERY == 0:
            on_progress(count)
    if len(errors) < MAX_ERRORS:
        errors += suspects.settle()
    if errors:
        raise ConfigErrors.of(errors)
    tests: Sequence[TestSpec] = (TestList(parts, default, case_counts, graded=graded, store_output_as=bool(stored))
                                 if streamed else tuple(kept))
    settings = cfg.settings
    out = settings.get("outputPath")
    derived = tuple(dict(d) for d in settings.get("derivedMetrics") or ())
    if derived:  # a bad expression is a config error now, not when the run ends
        from evalrun.assertions.engine import compile_derived

        compile_derived(derived, loc=Location(cfg.files[-1]) if cfg.files else None)
    return Suite(description=cfg.description, prompts=tuple(prompts), providers=tuple(providers), tests=tests,
                 files=tuple(cfg.files), evaluate_options=dict(settings.get("evaluateOptions") or {}),
                 output_paths=tuple([out] if isinstance(out, str) else out or ()), derived_metrics=derived,
                 grader=settings.get("grader"), env=cfg.env, disable_var_expansion=no_expansion,
                 tags=dict(settings.get("tags") or {}),
                 base_dir=os.path.dirname(os.path.abspath(cfg.files[-1])) if cfg.files else ".")
