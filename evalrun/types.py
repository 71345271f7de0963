"""Data passed between stages (config -> expand -> run -> assertions -> report); frozen where it crosses a
module boundary."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Literal, TypeVar

from evalrun.errors import Location

Messages = list[dict[str, Any]]
VerdictLabel = Literal["supported", "contradicted", "unsupported"]
RelevanceLevel = Literal["high", "medium", "low", "none"]
Status = Literal["pass", "fail", "error"]
T = TypeVar("T")


class _Missing:
    def __repr__(self) -> str:
        return "<factory default>"


_MISSING = _Missing()


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass `cls`, made per case, an `__init__` that sets its `__dict__` in one go instead of an
    `object.__setattr__` per field (same signature and defaults): 13% of a run's instructions (docs/design-notes.md)."""
    params = getattr(cls, "__dataclass_params__", None)
    found = fields(cls)  # type: ignore[arg-type]
    if (params is None or not params.frozen or "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__")
            or any(not f.init or f.kw_only for f in found)):
        return cls
    ns: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": _MISSING}
    args: list[str] = []
    lines: list[str] = []
    for f in found:
        if f.default is not MISSING:
            ns[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not MISSING:
            ns[f"_f_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            lines.append(f"    if {f.name} is _MISSING: {f.name} = _f_{f.name}()")
        else:
            args.append(f.name)
    items = ", ".join(f"{f.name!r}: {f.name}" for f in found)
    src = (f"def __init__(self, {', '.join(args)}):\n" + "".join(line + "\n" for line in lines)
           + f"    _set(self, '__dict__', {{{items}}})\n")
    exec(src, ns)  # noqa: S102 - generated from the class's own field names, as dataclasses itself does
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


@dataclass(frozen=True)
class PromptSpec:
    """One prompt: raw template text, or a chat message list whose contents are templates."""

    raw: str | Messages
    label: str
    id: str
    loc: Location | None = None
    #: promptfoo's per-prompt `config`, merged over the provider's config for calls with this prompt
    config: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: A prompt function (`file:///abs/prompts.js:fn`, `.mjs`, `.py`): called per case with {vars, provider}
    #: to build the prompt (config/prompts.py); `raw` then holds the reference as written.
    function: str | None = None
    #: The label (or path) shared by the prompts of one multi-prompt file: a provider's or test's `prompts` entry
    #: naming it selects them all, as promptfoo's `LABEL: ...` labels of such files do (config/suite.py).
    group: str | None = None


@dataclass(frozen=True)
class ProviderSpec:
    """A provider as written in the config, not yet built. `id` is e.g. 'echo', 'openai:gpt-4o-mini'."""

    id: str
    label: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    prompts: tuple[str, ...] | None = None  # labels/ids of prompts this provider runs; None = all
    transform: str | None = None
    delay_ms: int = 0
    loc: Location | None = None
    #: The id as written in the config (`file://prov.py`) when it differs from the resolved `id`.
    written_id: str | None = field(default=None, compare=False)
    #: promptfoo's per-provider `env`: this provider's credentials and `{{ env.NAME }}` (providers/ids.env_params)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.label or self.id


@fast_init
@dataclass(frozen=True)
class AssertionSpec:
    """One assertion as configured: `type` without the `not-` prefix (`negate` says it was there), `value` may hold
    templates (rendered per case), `children` set for `assert-set`."""

    type: str
    negate: bool = False
    value: Any = None
    threshold: float | None = None
    weight: float = 1.0
    metric: str | None = None
    transform: str | None = None
    provider: Any = None  # grader spec (str or dict) for graded assertions
    config: dict[str, Any] = field(default_factory=dict)
    rubric_prompt: Any = None
    context_transform: str | None = None
    children: tuple[AssertionSpec, ...] = ()
    loc: Location | None = None
    key_path: str = ""  # e.g. "tests[2].assert[0]"
    #: The built handler (an assertions.base.Assertion), set by the config loader via assertions.engine.build.
    handler: Any = field(default=None, compare=False, repr=False)
    #: Where `threshold` came from when a calibration file set it (a config.calibration.Calibrated), else None.
    calibration: Any = field(default=None, compare=False, repr=False)

    @property
    def full_type(self) -> str:
        return f"not-{self.type}" if self.negate else self.type


def every_assertion(specs: Iterable[AssertionSpec]) -> Iterator[AssertionSpec]:
    """Every assertion of `specs`, an assert-set's children after it (depth first)."""
    for spec in specs:
        yield spec
        yield from every_assertion(spec.children)


@fast_init
@dataclass(frozen=True)
class TestSpec:
    """One test after defaultTest (and scenario) merge."""

    index: int
    description: str | None
    vars: dict[str, Any]
    asserts: tuple[AssertionSpec, ...]
    options: dict[str, Any] = field(default_factory=dict)
    threshold: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    providers: tuple[str, ...] | None = None  # filter: provider ids/labels; None = all
    prompts: tuple[str, ...] | None = None  # filter: prompt labels/ids; None = all
    loc: Location | None = None
    key_path: str = ""
    #: Keys of the test beyond evalrun's (`expected` in a JSONL row): promptfoo keeps them on the test, and code
    #: assertions read them as `context.test.expected`.
    extra: dict[str, Any] = field(default_factory=dict)
    #: The test's own `provider:` (or defaultTest's): its cases call it instead of their column's provider,
    #: which still names the case, applies its transform and its delay (promptfoo's activeProvider). None = none.
    provider: ProviderSpec | None = None


@dataclass(frozen=True)
class Suite:
    """A loaded, validated config: everything needed to expand and run."""

    description: str | None
    prompts: tuple[PromptSpec, ...]
    providers: tuple[ProviderSpec, ...]
    tests: Sequence[TestSpec]  # a tuple, or a config.tests.TestList when tests are streamed from files
    files: tuple[str, ...]  # the config files loaded
    evaluate_options: dict[str, Any] = field(default_factory=dict)
    output_paths: tuple[str, ...] = ()
    derived_metrics: tuple[dict[str, Any], ...] = ()
    grader: Any = None  # evalrun's own top-level `grader:` key
    env: dict[str, str] = field(default_factory=dict)
    disable_var_expansion: bool = False
    base_dir: str = "."
    warnings: tuple[str, ...] = ()  # what promptfoo lets pass and evalrun warns of (errors.lenient_warn)
    #: An undefined template variable renders as empty text, as in promptfoo (the loader has warned of each, or
    #: refused a likely typo); False: it is an error (--strict, or a suite built in code).
    undefined_renders_empty: bool = False
    tags: dict[str, Any] = field(default_factory=dict)  # `tags:` and `evalrun eval --tag K=V`, in the reports


@fast_init
@dataclass(frozen=True)
class Case:
    """One cell of the test matrix: a test, one var combination, one provider, one prompt, one repeat."""

    id: str  # stable hash of (test index, vars, provider id, prompt id, repeat)
    index: int  # position in promptfoo's expansion order
    test: TestSpec
    vars: dict[str, Any]
    provider: ProviderSpec
    prompt: PromptSpec
    repeat: int = 0


@fast_init
@dataclass(frozen=True)
class TokenUsage:
    prompt: int = 0
    completion: int = 0
    total: int = 0
    cached: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(self.prompt + other.prompt, self.completion + other.completion,
                          self.total + other.total, self.cached + other.cached)


#: No tokens: the default of outputs and assertion results (frozen, so one instance serves all).
NO_TOKENS = TokenUsage()


@fast_init
@dataclass(frozen=True)
class Output:
    """What a provider returned for one case."""

    text: str
    raw: Any = None
    tokens: TokenUsage = NO_TOKENS
    cost: float | None = None
    latency_ms: float = 0.0
    cached: bool = False
    finish_reason: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. retrieved context from a RAG app
    #: The output itself when the provider returned an object, a list or a number rather than text (`text` holds
    #: it as JSON): transforms and code assertions receive it as it is, as in promptfoo.
    value: Any = None


@dataclass(frozen=True)
class Verdict:
    verdict: VerdictLabel
    reason: str = ""
    #: Indices of the evidence items (e.g. context chunks) the grader cites for this verdict; () when none.
    evidence: tuple[int, ...] = ()
    #: The grader's probability that the claim is supported, when it gives one (the builtin grader's calibrated
    #: score); None when the label is all there is (an LLM grader): then supported counts 1, anything else 0.
    support: float | None = None


@dataclass(frozen=True)
class ChunkJudgement:
    level: RelevanceLevel
    used: bool
    reason: str = ""


@dataclass(frozen=True)
class ChunkRelevance:
    chunks: tuple[ChunkJudgement, ...]
    missing: tuple[str, ...] = ()


@dataclass
class GraderCall:
    """One grader call, for the audit trail."""

    step: str  # extract | verify | attribute | classify | judge
    raw: str | None
    cached: bool = False
    tokens: TokenUsage = field(default_factory=TokenUsage)
    cost: float | None = None
    latency_ms: float = 0.0


@dataclass
class GraderTrace:
    """Accumulates the grader calls of one assertion evaluation (owned by that evaluation only)."""

    grader: str
    calls: list[GraderCall] = field(default_factory=list)

    @property
    def tokens(self) -> TokenUsage:
        return sum((c.tokens for c in self.calls), TokenUsage())

    @property
    def cost(self) -> float:
        return sum(c.cost or 0.0 for c in self.calls)


@fast_init
@dataclass(frozen=True)
class AssertionResult:
    type: str  # with `not-` prefix when negated
    pass_: bool
    score: float | None
    threshold: float | None
    weight: float
    reason: str
    metric: str | None = None
    error: str | None = None  # set when the assertion could not be evaluated: the case is an ERROR
    details: dict[str, Any] = field(default_factory=dict)
    grader: str | None = None
    tokens: TokenUsage = NO_TOKENS  # grader tokens
    cost: float = 0.0  # grader cost
    children: tuple[AssertionResult, ...] = ()
    #: The score is a lower-is-better measurement (e.g. noise-sensitivity without `not-`): the case score
    #: counts it as 1 - score, so a case's score always means higher is better.
    lower_is_better: bool = False
    #: The value as written, shortened (`engine.value_label`): with the type, the assertion's name where it has
    #: no `metric` (`evalrun compare`, the repeat statistics); None for a type without a value.
    value: str | None = None


@fast_init
@dataclass(frozen=True)
class CaseResult:
    case_id: str
    index: int
    status: Status
    pass_: bool
    score: float | None
    reason: str
    error: str | None
    provider: str
    prompt_label: str
    prompt: str  # rendered prompt (chat prompts as JSON)
    vars: dict[str, Any]
    description: str | None
    output: str | None
    latency_ms: float
    cached: bool
    tokens: TokenUsage
    cost: float | None
    assertions: tuple[AssertionResult, ...]
    test_index: int = 0
    repeat: int = 0
    metadata: dict[str, Any] = field(default_factory=dict)
    #: The whole error message when `error` holds only its first line, cut (errors.one_line).
    error_detail: str | None = None
