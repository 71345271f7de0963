"""Load-time template checks: every template compiles, every variable it reads is defined for the test. A name
close to a defined one is a typo (an error), any other renders empty as in promptfoo (a warning): docs/config.md."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Iterator
from typing import Any

from evalrun import template_env, templating
from evalrun.errors import ConfigError, is_strict, lenient_warn
from evalrun.types import AssertionSpec, PromptSpec, Suite, TestSpec, every_assertion

#: Always defined when a template renders.
BUILTIN_VARS = frozenset({"env", "_conversation"})


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if templating.has_template(value):
            yield value
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def needs(source: str) -> frozenset[str]:
    """Variables a template needs (and `env.NAME` for an unset NAME it reads); raises TemplateSyntaxError."""
    # `x | default(...)` and `x is defined` make x optional
    found = templating.variables_of(source) - templating.guarded_names(source)
    if "env" in found:  # the environment may change between loads: not cached
        unset = {f"env.{n}" for n in templating.env_names_of(source) if not template_env.has(n)}
        if templating.reads_whole_env(source):
            unset.add(WHOLE_ENV)
        if unset:
            return found | unset
    return found


#: What `needs` adds for a template that reads the bare `env` object (`{{ env }}`, `env | tojson`): refused.
WHOLE_ENV = "env.*"


def _env_error(name: str, what: str, loc: Any, key: str | None) -> ConfigError:
    if name == WHOLE_ENV:
        return ConfigError.at(loc, f"{what} reads the whole environment (`env`): it would send every environment "
                              "variable, credentials too, to the provider and into the results", key=key,
                              hint="use env.NAME for the one variable you need (docs/security.md)")
    var = name[len("env."):]
    return ConfigError.at(loc, f"environment variable {var!r} used in {what} is not set", key=key,
                          hint=f"export {var}=... before running, or set it under the config's `env:` key")


def prompt_needs(prompt: PromptSpec) -> frozenset[str]:
    raw = prompt.raw
    sources = [raw] if isinstance(raw, str) else [m.get("content") for m in raw]
    return frozenset().union(*[needs(s) for s in sources if isinstance(s, str) and templating.has_template(s)])


def test_name(test: TestSpec) -> str:
    """A test as messages name it: its key path (`tests[4]`, 0-based) and description; a streamed row by its line."""
    path = test.key_path
    name = path if path and not path.startswith("[") else f"the test at {test.loc}" if test.loc else \
        f"tests[{test.index}]"
    return f"{name} ({test.description!r})" if test.description else name


def _used_by(test: TestSpec) -> str:
    name = test_name(test)
    return f"{name} at {test.loc}" if test.loc and not name.startswith("the test at") else name


def _inside(spec: AssertionSpec, test: TestSpec) -> bool:
    """The assertion is written inside the test (not under defaultTest or in another file)."""
    return spec.loc is not None and test.loc is not None and spec.loc.file == test.loc.file \
        and spec.loc.line >= test.loc.line


@dataclasses.dataclass
class Suspects:
    """Likely typos found so far in a pass over the tests (docs/design-notes.md), and the var names tests define."""

    defined: set[str] = dataclasses.field(default_factory=set)
    found: list[tuple[str, ConfigError, tuple[Any, ...]]] = dataclasses.field(default_factory=list)

    def settle(self) -> list[ConfigError]:
        """Warn of each suspect whose name some test defines; the others are errors, returned."""
        for name, _, warning in self.found:
            if name in self.defined:
                _warn_empty(*warning)
        errors = [err for name, err, _ in self.found if name not in self.defined]
        self.found.clear()
        return errors


def near_miss(name: str, defined: Iterable[str]) -> str | None:
    """The defined name `name` is a misspelling of: at most 1 edit away (2 for names over 5 characters; a swap of
    two letters is one edit), the nearest first; None when none is that close. Sharing a word is no typo:
    `context` is not a misspelled `text` (docs/design-notes.md, "Template-variable typos")."""
    from rapidfuzz.distance import OSA  # only when a variable is undefined

    limit = 1 if len(name) <= 5 else 2
    scored = sorted((OSA.distance(name.lower(), d.lower()), d) for d in defined if d != name)
    return next((d for dist, d in scored if dist <= limit), None)


def _undefined(name: str, what: str, test: TestSpec, defined: set[str], spec: AssertionSpec | None = None,
               prompt: PromptSpec | None = None, suspects: Suspects | None = None,
               reads: Collection[str] = ()) -> None:
    """A variable the test does not define: a ConfigError when close to a defined one (a typo; `suspects`, `reads`:
    docs/design-notes.md), else a warning (an error under --strict): promptfoo renders it as empty text."""
    near = near_miss(name, defined - BUILTIN_VARS)
    deferred = near is not None and near in reads and suspects is not None
    if deferred and suspects is not None and name in suspects.defined:
        near = None  # another test's var, not a misspelling of this test's
    close = f"did you mean `{near}`?" if near else None
    hint = (f"{close} " if close else "") + f"define `{name}` under this test's `vars:` (or defaultTest.vars)"
    at: AssertionSpec | TestSpec = spec if spec is not None and spec.loc is not None else test
    err = ConfigError.at(at.loc, f"undefined template variable {name!r} in {what}", key=at.key_path or None,
                         hint=hint, used_by=None if spec is None or at is test or _inside(spec, test) else _used_by(test))
    if prompt is not None and prompt.loc is not None and prompt.loc.line:  # the line that reads it; names the test
        err.used_by = _used_by(test)
        err.file, err.line, err.key = prompt.loc.file, prompt.loc.line, None
    if prompt is not None and prompt.loc is None and name == "prompt":  # no `prompts:`, no `prompt` var: no prompt
        err.hint = "no `prompts:` given, so the prompt is `{{prompt}}`: add `prompts:` or a `prompt` var"
        raise err
    warning = (name, what, test, err, spec, prompt)
    if close:
        if not deferred or suspects is None:
            raise err
        suspects.found.append((name, err, warning))
        return
    _warn_empty(*warning)


def _warn_empty(name: str, what: str, test: TestSpec, err: ConfigError, spec: AssertionSpec | None,
                prompt: PromptSpec | None) -> None:
    """The warning that an undefined variable renders as empty text (an error under --strict)."""
    if is_strict():
        err.hint = f"{err.hint} (promptfoo renders it as empty text; --strict makes it an error)"
        raise err
    loc = (prompt.loc if prompt is not None else None) or (spec.loc if spec is not None else None) or test.loc
    key = err.key if err.file == (loc.file if loc else None) else None
    lenient_warn(loc, key, f"undefined template variable {name!r} in {what} renders as empty text, as in "
                 f"promptfoo (first used by {_used_by(test)})",
                 f"define `{name}` under the test's `vars:` (or defaultTest.vars) if it should have a value",
                 once=(loc, name, what))


def _sources(spec: AssertionSpec) -> list[tuple[str, str]]:
    """(template, the field holding it) of an assertion's value (not code), config and metric."""
    out = [] if getattr(spec.handler, "raw_value", False) else [(s, "value") for s in _strings(spec.value)]
    return out + [(s, "config") for s in _strings(spec.config)] + [(s, "metric") for s in _strings(spec.metric)]


def _assertion_reads(specs: Iterable[AssertionSpec]) -> set[str]:
    """The variables assertions' templates read (a template that does not parse is reported when checked)."""
    out: set[str] = set()
    for spec in every_assertion(specs):
        for src, _ in _sources(spec):
            try:
                out |= needs(src)
            except Exception:  # a TemplateError: _check_assertion reports it
                continue
    return out


def _check_assertion(spec: AssertionSpec, test: TestSpec, defined: set[str], suspects: Suspects | None,
                     reads: Collection[str]) -> None:
    for src, field in _sources(spec):
        try:
            missing = needs(src) - defined
        except Exception as e:
            import jinja2  # a template Jinja2 parsed: imported already

            if not isinstance(e, jinja2.TemplateError):
                raise
            msg = getattr(e, "message", None) or str(e)
            raise ConfigError.at(spec.loc, f"template syntax error: {msg}", key=f"{spec.key_path}.{field}",
                                 hint="templates use Jinja2 syntax: {{ var }}") from None
        for name in sorted(missing):
            if name.startswith("env."):
                raise _env_error(name, f"the {field} of {spec.full_type}", spec.loc, spec.key_path or None)
            _undefined(name, f"the {field} of {spec.full_type}", test, defined, spec, suspects=suspects,
                       reads=reads)


def check_test(test: TestSpec, prompts: list[tuple[PromptSpec, frozenset[str]]],
               suspects: Suspects | None = None) -> None:
    """Raise a ConfigError for the first undefined variable that looks like a typo (warn of the others), or with
    `suspects` record it there; `prompts`: the prompts this test runs, each with the variables it reads."""
    _check_rubric_values(test)
    if test.options.get("transformVars"):  # its code may define any var: checked per case at run time
        return
    defined = set(test.vars) | BUILTIN_VARS
    reads: set[str] = set()
    if suspects is not None:
        reads = _assertion_reads(test.asserts).union(*(wanted for _, wanted in prompts))
    for prompt, wanted in prompts:
        for name in sorted(wanted - defined):
            if name.startswith("env."):
                raise _env_error(name, f"prompt {prompt.label[:60]!r}", prompt.loc, None)
            _undefined(name, f"prompt {prompt.label[:60]!r}", test, defined, prompt=prompt, suspects=suspects,
                       reads=reads)
    for spec in every_assertion(test.asserts):
        _check_assertion(spec, test, defined, suspects, reads)


def check_context(test: TestSpec, stored: Collection[str] = ()) -> list[ConfigError]:
    """An error at each graded assertion of this test that can never have context (assertions/graded.py); `stored`:
    vars earlier tests store (options.storeOutputAs); a test with transformVars is not judged."""
    if test.options.get("transformVars"):
        return []
    from evalrun.assertions.graded import CONTEXT_HINT, missing_context

    names = set(test.vars).union(stored) if stored else test.vars
    out = []
    for spec in every_assertion(test.asserts):
        if not getattr(spec.handler, "uses_context", False):
            continue
        why = missing_context(spec, names)
        if why:
            out.append(ConfigError.at(spec.loc, why, key=spec.key_path or None, hint=CONTEXT_HINT,
                                      used_by=None if _inside(spec, test) else _used_by(test)))
    return out


def _check_rubric_values(test: TestSpec) -> None:
    """llm-rubric needs a `value` unless a custom `rubricPrompt` (the assertion's or test's) holds the rubric."""
    if test.options.get("rubricPrompt"):
        return
    for spec in test.asserts:
        if spec.type == "llm-rubric" and spec.value is None and not spec.rubric_prompt:
            raise ConfigError.at(spec.loc, "a value is required", key=f"{spec.key_path}.value" if spec.key_path
                                 else "value", hint="give `value:` (the rubric) for llm-rubric, or a custom "
                                                    "`rubricPrompt` that holds the whole rubric")


#: The var graded assertions read as their context when no contextTransform is given.
CONTEXT_VAR = "context"


def context_expansion_warnings(suite: Suite, tests: Iterable[TestSpec] | None = None) -> list[str]:
    """One warning per test whose `context` list var expands (one case per item) under a graded assertion: 6 chunks
    become 6 one-chunk cases. `tests`: the suite's tests with a graded assertion, when the caller knows them."""
    out: list[str] = []
    if tests is None and getattr(suite.tests, "graded", True) is False:  # streamed, no graded test: no pass
        return out
    for test in suite.tests if tests is None else tests:
        if suite.disable_var_expansion or test.options.get("disableVarExpansion"):
            continue
        value = test.vars.get(CONTEXT_VAR)
        if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
            continue
        graded = [s for s in every_assertion(test.asserts)
                  if getattr(s.handler, "graded", False) and not s.context_transform]
        if not graded:
            continue
        where = f"{test.loc}: " if test.loc else ""
        out.append(f"{where}{test_name(test)}: vars.{CONTEXT_VAR} is a list of {len(value)} strings, so it expands "
                   f"into {len(value)} cases of one chunk each, and {graded[0].full_type} grades each chunk alone; "
                   "to grade all chunks together set `options.disableVarExpansion: true` on the test "
                   "(or under defaultTest)")
    return out
