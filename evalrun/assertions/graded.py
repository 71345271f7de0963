"""The base of graded assertions (grader, `rubricPrompt` overrides, threshold) and their inputs: context chunks
(`contextTransform`, `vars.context`) and the query."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evalrun.assertions.base import Assertion, AssertionContext, ItemError, Score, against, is_template
from evalrun.errors import AssertionRuntimeError, ConfigError
from evalrun.types import GraderTrace

if TYPE_CHECKING:
    from evalrun.grading.steps import Grader, Step
    from evalrun.pyexpr import UserCode
    from evalrun.types import AssertionSpec


@dataclass(frozen=True)
class Chunk:
    """One context chunk; `relevant` is None when unlabelled."""

    text: str
    relevant: bool | None = None


def parse_chunks(value: Any, what: str) -> list[Chunk]:
    """Chunks from a string (one chunk), or a list of strings / {text, relevant?} objects. ValueError if bad."""
    if isinstance(value, str):
        return [Chunk(value)]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{what} must be a string or a list of chunks, not {type(value).__name__}")
    chunks = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, Mapping):
            raise ItemError(f"{what}[{i}] must be a string or an object with `text`, not {type(item).__name__}",
                            f"[{i}]")
        text = item.get("text")
        if not isinstance(text, str):
            raise ItemError(f"{what}[{i}] needs a string `text`", f"[{i}].text" if "text" in item else f"[{i}]")
        relevant = item.get("relevant")
        if relevant is not None and not isinstance(relevant, bool):
            raise ItemError(f"{what}[{i}].relevant must be true or false, not {relevant!r}", f"[{i}].relevant")
        unknown = sorted(map(str, set(item) - {"text", "relevant"}))
        if unknown:
            raise ItemError(f"{what}[{i}] has unknown key(s) {', '.join(unknown)} (allowed: text, relevant)",
                            f"[{i}].{unknown[0]}")
        chunks.append(Chunk(text, relevant))
    return chunks


def missing_context(spec: AssertionSpec, var_names: Collection[str]) -> str | None:
    """Why `spec` can never have context in a test whose vars (its own and defaultTest's, after --var) are
    `var_names`, or None when it can, might (a templated config), or needs none. Call it only where no code can
    add vars at run time (transformVars, a stored output)."""
    handler = spec.handler
    if spec.context_transform or not isinstance(handler, GradedAssertion) or not handler.needs_context():
        return None
    var_keys, config_keys = handler.context_vars, handler.context_config
    if any(v in var_names for v in var_keys) or any(k in spec.config for k in config_keys):
        return None
    sources = [f"`vars.{v}`" for v in var_keys] + [f"`config.{k}`" for k in config_keys] + ["`contextTransform`"]
    return f"{spec.full_type} has no context: no {', no '.join(sources)} in this test or defaultTest"


CONTEXT_HINT = ("set `vars.context` (a string or a list of chunks) in the test or defaultTest, or read what the "
                "provider retrieved with `contextTransform: \"context['metadata']['retrieved']\"` (docs/metrics.md)")


def runtime_chunks(value: Any, where: str) -> list[Chunk]:
    """parse_chunks for a value met at run time: a bad one makes the assertion an ERROR."""
    try:
        return parse_chunks(value, where)
    except ValueError as e:
        raise AssertionRuntimeError(str(e)) from None


def mastra_input(ctx: AssertionContext) -> str:
    """The question an output answers (Mastra's input): vars.query when present, else the rendered prompt."""
    return query_of(ctx, required=False) or ctx.prompt


def query_of(ctx: AssertionContext, *, required: bool) -> str | None:
    """vars.query as text (AssertionRuntimeError when required and missing)."""
    q = ctx.vars.get("query")
    if q is None or (isinstance(q, str) and not q.strip()):
        if required:
            raise AssertionRuntimeError("no query: set `vars.query` to the question the output answers")
        return None
    return q if isinstance(q, str) else str(q)


class GradedAssertion(Assertion):
    """Base class: subclasses set `steps` (overridable grader steps, main step first)."""

    graded = True
    steps: ClassVar[tuple[str, ...]] = ()
    list_steps: ClassVar[tuple[str, ...]] = ()  # the steps of a rubricPrompt list, in order (default: `steps`)
    #: Reads context: `contextTransform`, else the `context_vars`, or the `context_config` keys.
    uses_context: ClassVar[bool] = False
    context_vars: ClassVar[tuple[str, ...]] = ("context",)
    context_config: ClassVar[tuple[str, ...]] = ()
    #: The judge step of a judge-style metric (grading/steps.py); None for pipeline-only metrics.
    judge_step: ClassVar[Step[Any] | None] = None

    @classmethod
    def common_keys(cls) -> str:
        context = "; `contextTransform`" if cls.uses_context else ""
        steps = f"; `rubricPrompt` (steps {', '.join(cls.steps)})" if cls.steps else ""
        return f"`provider` (the grader){context}{steps}."

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "grader_calls" not in cls.__dict__:  # one call per step unless the class says otherwise
            cls.grader_calls = len(cls.steps)

    def needs_context(self) -> bool:
        """True when no score can be had without context (every case would be an ERROR, or score alike)."""
        return self.uses_context

    @classmethod
    def grading_steps(cls) -> tuple[Step[Any], ...]:
        """Every grader step this metric performs (pipeline steps named in `steps`, plus its judge step):
        `validate` checks the chosen grader supports each one before any call."""
        from evalrun.grading.steps import PIPELINE
        judge = () if cls.judge_step is None else (cls.judge_step,)
        return tuple(PIPELINE[n] for n in cls.steps if n in PIPELINE) + judge

    #: What a required text `value` holds (e.g. "the reference answer"): then it must be a non-empty string.
    value_text: ClassVar[str | None] = None
    context_fn: UserCode | None = None
    prompt_overrides: dict[str, str] = {}  # replaced per instance in check()

    def check(self) -> None:
        super().check()
        from evalrun.grading.select import normalise_spec
        if self.spec.provider is not None:
            normalise_spec(self.spec.provider, loc=self.spec.loc, key=self.key_path("provider"))
        if self.spec.context_transform and not self.uses_context:
            raise self.error(f"{self.spec.type} takes no context", key="contextTransform",
                             hint="remove contextTransform")
        if self.uses_context and self.spec.context_transform:
            self.context_fn = self.compile(self.spec.context_transform, "contextTransform", "get_context")
        self.prompt_overrides = self._parse_rubric_prompt(self.spec.rubric_prompt)

    def check_chunks(self, value: Any, key: str) -> None:
        """Load-time check of a chunk list that holds no template (ConfigError naming `key`, or its item)."""
        if value is not None and not is_template(value):
            try:
                parse_chunks(value, key)
            except ValueError as e:
                raise self.error(str(e), key=key + getattr(e, "path", ""), hint="give a list of {text, relevant} "
                                 "objects, a list of strings, or one string") from None

    async def raw_context(self, ctx: AssertionContext) -> tuple[Any, str] | None:
        """(the context, where it came from): contextTransform's result, else vars.context, else None."""
        if self.context_fn is not None:
            return await self.context_fn.call(ctx.output, ctx.as_dict()), "contextTransform result"
        return (ctx.vars["context"], "vars.context") if "context" in ctx.vars else None

    async def context_texts(self, ctx: AssertionContext) -> list[str]:
        """The context chunks' texts (AssertionRuntimeError when there is no context)."""
        raw = await self.raw_context(ctx)
        if raw is None:
            raise AssertionRuntimeError("no context: set `vars.context` (a string or a list of chunks) "
                                        "or `contextTransform` on the assertion")
        return [c.text for c in runtime_chunks(*raw)]

    def parse(self, value: Any) -> Any:
        if self.value_text is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{self.spec.type} needs {self.value_text} as a non-empty string `value`")
        return value

    def _parse_rubric_prompt(self, raw: Any) -> dict[str, str]:
        if raw is None:
            return {}
        key = "rubricPrompt"
        hint = (f"give a template string, a list for steps {list(self.steps)}, a mapping step -> template, or "
                "chat messages [{role, content}]")
        if not self.steps:
            raise self.error(f"{self.spec.type} takes no rubricPrompt", key=key)
        if isinstance(raw, str):
            return {self.steps[0]: self._read(raw, key)}
        if isinstance(raw, list) and raw and all(isinstance(m, Mapping) and "role" in m for m in raw):
            import json  # promptfoo's chat form: [{role, content}, ...], each content a template (steps.render_prompt)
            if not all(isinstance(m.get("content"), str) for m in raw):
                raise self.error("each rubricPrompt message needs a `content` string", key=key, hint=hint)
            return {self.steps[0]: json.dumps([dict(m) for m in raw], ensure_ascii=False)}
        if isinstance(raw, list):
            order = self.list_steps or self.steps
            if len(raw) > len(order) or not all(isinstance(t, str) for t in raw):
                raise self.error(f"rubricPrompt list must hold at most {len(order)} template string(s) "
                                 f"for steps {', '.join(order)}", key=key, hint=hint)
            return {order[i]: self._read(t, f"{key}[{i}]") for i, t in enumerate(raw)}
        if isinstance(raw, Mapping):
            out = {}
            for step, t in raw.items():
                if step not in self.steps:
                    raise self.error(f"unknown grader step {step!r} in rubricPrompt", key=f"{key}.{step}",
                                     hint=f"{self.spec.type} uses steps: {', '.join(self.steps)}")
                if not isinstance(t, str):
                    raise self.error("a rubricPrompt template must be a string", key=f"{key}.{step}", hint=hint)
                out[str(step)] = self._read(t, f"{key}.{step}")
            return out
        raise self.error(f"rubricPrompt must be a string, list or mapping, not {type(raw).__name__}",
                         key=key, hint=hint)

    def _read(self, template: str, key: str) -> str:
        if not template.startswith("file://"):
            return template
        path = Path(self.base_dir, template[len("file://"):])
        try:
            return path.read_text(encoding="utf-8")
        except OSError as e:
            raise self.error(f"cannot read rubricPrompt file {str(path)!r}: {e.strerror}", key=key,
                             hint="paths are relative to the config file") from None

    def overrides(self, ctx: AssertionContext) -> dict[str, str]:
        """The assertion's rubricPrompt overrides, else the test's `options.rubricPrompt` (promptfoo's order)."""
        if self.spec.rubric_prompt is not None:
            return self.prompt_overrides
        raw = ctx.case.test.options.get("rubricPrompt")
        if raw is None or not self.steps:
            return {}
        if isinstance(raw, Mapping):  # a test-wide mapping: the steps this assertion uses
            raw = {k: v for k, v in raw.items() if k in self.steps}
        elif self.steps[0] != "judge":  # a test-wide string/list is a judge prompt (llm-rubric & co.)
            return {}
        try:
            return self._parse_rubric_prompt(raw)
        except ConfigError as e:
            raise AssertionRuntimeError(f"options.rubricPrompt: {e.message}") from None

    async def ask(self, ctx: AssertionContext, variables: dict[str, Any], *,
                  schema_args: tuple[Any, ...] = ()) -> tuple[Any, GraderTrace]:
        """Ask this metric's judge step: (typed result, a fresh trace)."""
        assert self.judge_step is not None, f"{self.spec.type} has no judge step"
        _, trace = self.grader_for(ctx)
        return await self.step(ctx, self.judge_step, variables, trace, schema_args), trace

    async def step(self, ctx: AssertionContext, step: Step[Any], variables: dict[str, Any], trace: GraderTrace,
                   schema_args: tuple[Any, ...] = ()) -> Any:
        """Ask one judge-style step, with this assertion's rubricPrompt override for it (if any)."""
        from evalrun.grading.steps import ask
        return await ask(ctx.grader(self.spec), step, variables, trace, schema_args=schema_args,
                         override=self.overrides(ctx).get(step.name), extra=ctx.vars)

    def grader_for(self, ctx: AssertionContext) -> tuple[Grader, GraderTrace]:
        """The grader for this case (with the prompt overrides) and a fresh trace; a GraderError before any call
        when it cannot perform this metric's steps."""
        from evalrun.errors import GraderError
        from evalrun.grading.steps import CHOOSE_LLM, Checked, unsupported
        grader = ctx.grader(self.spec)
        message = unsupported(grader, self.spec.type, self.grading_steps())
        if message:
            raise GraderError(f"{message}; {CHOOSE_LLM}")
        with_prompts = getattr(grader, "with_prompts", None)
        overrides = self.overrides(ctx)
        if overrides and callable(with_prompts):
            grader = with_prompts(overrides, ctx.vars)
        return Checked(grader), GraderTrace(grader.id)

    def verdict(self, score: float) -> tuple[bool, str]:
        """(pass, "0.50 >= threshold 0.20") for a score against this assertion's threshold."""
        thr = self.threshold if self.threshold is not None else (1.0 if self.lower_is_better else 0.0)
        return against(score, thr, self.lower_is_better)

    def score(self, passed: bool, value: float | None, reason: str, details: dict[str, Any],
              trace: GraderTrace) -> Score:
        details.setdefault("grader", trace.grader)
        return Score(passed, value, reason, details, trace=trace)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def quote(text: str, limit: int = 80) -> str:
    """'text' shortened for a reason line."""
    t = " ".join(text.split())
    return repr(t if len(t) <= limit else t[: limit - 3] + "...")

