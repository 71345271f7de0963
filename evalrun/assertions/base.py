"""The assertion handler contract: a handler is built once per assertion at load time (`check()` raises
ConfigError); `evaluate()` returns the un-negated `Score`. Handlers keep no per-case state (house rule 5)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from evalrun.errors import ConfigError
from evalrun.types import AssertionSpec, Case, GraderTrace, Output

if TYPE_CHECKING:
    from evalrun.grading.steps import Grader
    from evalrun.pyexpr import UserCode


class ItemError(ValueError):
    """A bad item in a list value; `path` (`[1].relevant`) lets the config error point at the item's own line."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class Score:
    """What a handler returns: the un-negated verdict."""

    pass_: bool
    score: float | None
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    trace: GraderTrace | None = None  # graded handlers return their grader calls here
    keep_score_on_negate: bool = False  # `not-` flips pass, keeps the score (promptfoo's python/javascript rule)


@dataclass
class AssertionContext:
    """Everything a handler may read for one case. `value` and `config` are already rendered for the case."""

    output: str  # the provider output after test- and assertion-level transforms
    response: Output  # the full provider response (latency, cost, tokens, finish_reason, metadata)
    vars: dict[str, Any]
    prompt: str  # the rendered prompt (chat prompts as JSON text)
    case: Case
    value: Any
    config: dict[str, Any]
    get_grader: Callable[[AssertionSpec], Grader] | None = None
    run_child: Callable[[AssertionSpec], Awaitable[Any]] | None = None  # evaluates assert-set children
    get_embedder: Callable[[AssertionSpec], Any] | None = None
    #: A transform's non-string result (`output` holds it as JSON text); code assertions receive it as is.
    output_value: Any = None
    #: The results of the case's other top-level assertions, for a handler with `after_siblings` (max-score).
    siblings: tuple[Any, ...] = ()

    @property
    def code_output(self) -> Any:
        """The output as code assertions see it: the transform's object, else the text."""
        return self.output if self.output_value is None else self.output_value

    def as_dict(self) -> dict[str, Any]:
        """promptfoo's `context` object for user code (python assertions, transforms): plain data only."""
        case = self.case
        test = case.test
        resp = self.response
        return {
            "prompt": self.prompt,
            "vars": self.vars,
            "test": {**test.extra, "description": test.description, "vars": test.vars, "options": test.options,
                     "metadata": test.metadata, "threshold": test.threshold,
                     "assert": [_assertion_dict(s) for s in test.asserts]},
            "config": self.config,
            "provider": {"id": case.provider.id, "label": case.provider.label},
            "providerResponse": {"output": resp.text if resp.value is None else resp.value, "cost": resp.cost,
                                 "cached": resp.cached, "latencyMs": resp.latency_ms,
                                 "finishReason": resp.finish_reason, "metadata": resp.metadata,
                                 "tokenUsage": asdict(resp.tokens)},
            "metadata": resp.metadata,
        }

    def embedder(self, spec: AssertionSpec) -> Any:
        if self.get_embedder is None:
            from evalrun.errors import GraderError
            raise GraderError("no embedding model in this context")
        return self.get_embedder(spec)

    def grader(self, spec: AssertionSpec) -> Grader:
        assert self.get_grader is not None, "no grader resolver in context"  # the runner always sets it
        return self.get_grader(spec)


class Assertion:
    """Base class of every assertion handler. Subclasses set the class attributes and implement evaluate()."""

    name: ClassVar[str] = ""  # the type name in YAML (without `not-`), set by @register
    summary: ClassVar[str] = ""  # for `evalrun list` (default: the docstring's first paragraph)
    graded: ClassVar[bool] = False  # uses a grader model (counted in --dry-run, shown in validate)
    grader_calls: ClassVar[int] = 0  # most grader calls one evaluation makes (--dry-run estimates)
    #: True when a lower score is better (noise-sensitivity, bias, ...): the result is marked `lower_is_better`
    #: (unless negated), the case score counts 1 - score, and `compare` reads a rise as a regression.
    lower_is_better: ClassVar[bool] = False
    default_threshold: ClassVar[float | None] = None  # when the YAML gives none (None: no threshold)
    requires_value: ClassVar[bool] = False
    takes_value: ClassVar[bool] = True  # False: giving a `value` is a config error
    raw_value: ClassVar[bool] = False  # the handler gets the un-rendered value (python, javascript code)
    #: Evaluated after the case's other assertions, which it reads from `ctx.siblings` (max-score).
    after_siblings: ClassVar[bool] = False
    config_keys: ClassVar[frozenset[str] | None] = None  # keys allowed in `config:` (None: any)
    transform_fn: UserCode | None = None  # the compiled assertion-level `transform`
    #: A `value: file://x.js|py[:fn]` of a type that is not code: called per case, its return is the value.
    value_script: UserCode | None = None
    _static_value: Any  # the value parsed at load time, when it holds no template and is immutable

    def __init__(self, spec: AssertionSpec) -> None:
        self.spec = spec
        if self.requires_value and spec.value is None:
            raise self.error("a value is required", key="value", hint=f"give `value:` for {spec.full_type}")
        if not self.takes_value and spec.value is not None:
            raise self.error(f"{spec.type} takes no value", key="value",
                             hint="remove `value:` (see `evalrun list` for the keys this type reads)")
        if self.config_keys is not None:
            for k in spec.config:
                if k not in self.config_keys:
                    from evalrun.errors import did_you_mean
                    raise self.error(f"unknown config key {k!r} for {spec.type}", key=f"config.{k}",
                                     hint=did_you_mean(k, self.config_keys) or
                                     f"allowed: {', '.join(sorted(self.config_keys)) or 'none'}")
        if spec.transform:
            self.transform_fn = self.compile(spec.transform, "transform", "get_transform")
        if not self.raw_value and isinstance(spec.value, str) and spec.value.startswith("file://"):
            from evalrun.pyexpr import is_script_ref
            if is_script_ref(spec.value):
                self.value_script = self.compile(spec.value, "value", "get_assert")
        self.check()

    def compile(self, code: str, key: str, default_fn: str) -> UserCode:
        """The user code at `key` over (output, context), Python or JavaScript; a ConfigError if it does not compile."""
        from evalrun.pyexpr import compile_code
        return compile_code(code, ("output", "context"), loc=self.spec.loc, key=self.key_path(key),
                            base_dir=self.base_dir, default_fn=default_fn)

    @property
    def base_dir(self) -> str:
        """The directory relative file:// references in this assertion resolve against."""
        import os
        return os.path.dirname(os.path.abspath(self.spec.loc.file)) if self.spec.loc and self.spec.loc.file else "."

    def key_path(self, key: str) -> str:
        """The key path of one of this assertion's keys (`tests[2].assert[0].transform`), for messages."""
        return self.spec.key_path + ("." + key if key else "") if self.spec.key_path else key

    @property
    def threshold(self) -> float | None:
        return self.spec.threshold if self.spec.threshold is not None else self.default_threshold

    @classmethod
    def common_keys(cls) -> str:
        """The YAML keys a family of types shares, added to each type's docstring by `evalrun list`."""
        return ""

    def missing_key(self, test_options: Mapping[str, Any]) -> str | None:
        """Why this assertion's hosted service cannot be called (its API key is not set), checked before a run
        (run/runner.py); None when nothing is missing. `test_options`: the test's `options`."""
        return None

    def check(self) -> None:
        """Validate arguments at load time (raise self.error()); the default parses a value without templates."""
        if self.value_script is None and not is_template(self.spec.value):
            try:
                parsed = self.parse(self.spec.value)
            except ValueError as e:
                raise self.error(str(e), key="value" + getattr(e, "path", ""), hint=self.value_hint) from None
            if not isinstance(parsed, (list, dict, set)):  # immutable: reused by every case (value_of)
                self._static_value = parsed

    #: Shown with a bad-value ConfigError (e.g. the accepted forms of `value`).
    value_hint: ClassVar[str | None] = None

    def parse(self, value: Any) -> Any:
        """Validate and normalise a (rendered) value; raise ValueError with a user-facing message."""
        return value

    def value_of(self, ctx: AssertionContext) -> Any:
        return self.parsed(ctx.value)

    def parsed(self, value: Any) -> Any:
        """A rendered value parsed; a bad one is an AssertionRuntimeError (the assertion is an ERROR)."""
        if value is self.spec.value and "_static_value" in self.__dict__:  # not a template: parsed at load
            return self._static_value
        try:
            return self.parse(value)
        except ValueError as e:
            from evalrun.errors import AssertionRuntimeError
            raise AssertionRuntimeError(str(e)) from None  # the case's reason names the type (engine.aggregate)

    def error(self, message: str, *, key: str = "", hint: str | None = None) -> ConfigError:
        return ConfigError.at(self.spec.loc, message, key=self.key_path(key) or None, hint=hint)

    def check_numbers(self, values: Mapping[str, Any], keys: Iterable[str], prefix: str = "config.") -> None:
        """Each of `keys` given in `values` is a number >= 0 (`scale` > 0), else a ConfigError naming it."""
        for key in keys:
            v = values.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0
                                  or (key == "scale" and v == 0)):
                raise self.error(f"{prefix}{key} must be a {'positive' if key == 'scale' else 'non-negative'} "
                                 f"number, got {v!r}", key=prefix + key, hint="e.g. `scale: 10` for scores "
                                 "from 0 to 10" if key == "scale" else None)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        raise NotImplementedError


class TextAssertion(Assertion):
    """A handler whose verdict is `judge_text(output, value)` alone (the output text and the rendered value)."""

    async def evaluate(self, ctx: AssertionContext) -> Score:
        return self.judge_text(ctx.output, ctx.value)

    def judge_text(self, output: str, value: Any) -> Score:
        raise NotImplementedError


def is_template(value: Any) -> bool:
    """True when `value` (or a string inside a list/dict) holds a Jinja template, rendered only per case."""
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    if isinstance(value, (list, tuple)):
        return any(is_template(v) for v in value)
    if isinstance(value, dict):
        return any(is_template(v) for v in value.values())
    return False


def binary(passed: bool, reason: str, **details: Any) -> Score:
    """A pass/fail Score with score 1.0 or 0.0 (promptfoo's deterministic assertions)."""
    return Score(passed, 1.0 if passed else 0.0, reason, details)  # `details`: a new dict each call


def against(score: float, threshold: float, lower_is_better: bool = False) -> tuple[bool, str]:
    """(pass, "0.50 >= threshold 0.20"): a score against a threshold, in the metric's direction."""
    passed = score <= threshold if lower_is_better else score >= threshold
    op = ("<=" if passed else ">") if lower_is_better else (">=" if passed else "<")
    return passed, f"{score:.2f} {op} threshold {threshold:.2f}"


def _assertion_dict(spec: AssertionSpec) -> dict[str, Any]:
    """An assertion as promptfoo's `context.test.assert` lists it (the keys given)."""
    out = {"type": spec.full_type, "value": spec.value, "threshold": spec.threshold, "metric": spec.metric,
           "weight": None if spec.weight == 1.0 else spec.weight}
    return {k: v for k, v in out.items() if v is not None}
