"""Assertions on the provider's response beyond its text: latency, cost, finish-reason, and tool-call-accuracy
(Mastra's code and LLM variants; the calls come from `message.tool_calls`, else from the output when it is JSON)."""

from __future__ import annotations

import json
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.graded import mastra_input
from evalrun.assertions.judges import REASON, REASON_KEY, MastraJudge, wants_reason
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.scoring import deterministic as text_scoring
from evalrun.grading.scoring import verdicts as judge_scoring
from evalrun.grading.steps import Step, judge_step


class _Limit(Assertion):
    unit = ""
    takes_value = False

    def check(self) -> None:
        t = self.spec.threshold
        if t is None:
            raise self.error(f"{self.spec.type} needs a threshold", key="threshold",
                             hint=f"e.g. `threshold: {1000 if self.spec.type == 'latency' else 0.01}`")
        if t < 0:  # the loader has made it a number
            raise self.error(f"threshold must be a non-negative number, got {t!r}", key="threshold")

    def measure(self, ctx: AssertionContext) -> float:
        raise NotImplementedError

    async def evaluate(self, ctx: AssertionContext) -> Score:
        got = self.measure(ctx)
        limit = float(self.spec.threshold or 0)
        ok = got <= limit
        return binary(ok, f"{self.spec.type.capitalize()} {got:g}{self.unit} is "
                          f"{'<=' if ok else '>'} threshold {limit:g}{self.unit}")


@register("latency")
class Latency(_Limit):
    """Provider latency in milliseconds is at most `threshold`.

    YAML keys: `threshold` (required): milliseconds. A cached response has no latency: the assertion is an
    ERROR then (run with --no-cache).
    """

    unit = "ms"

    def measure(self, ctx: AssertionContext) -> float:
        if ctx.response.cached:
            raise AssertionRuntimeError("latency is unknown for a cached response; rerun with --no-cache")
        return ctx.response.latency_ms


@register("cost")
class Cost(_Limit):
    """Provider cost of the call (USD) is at most `threshold`.

    YAML keys: `threshold` (required): dollars. A provider that reports no cost makes it an ERROR.
    """

    def measure(self, ctx: AssertionContext) -> float:
        if ctx.response.cost is None:
            raise AssertionRuntimeError("the provider reported no cost for this call")
        return ctx.response.cost


@register("finish-reason")
class FinishReason(Assertion):
    """The provider's finish reason equals `value` (case-insensitive), e.g. `stop`, `length`, `tool_calls`.

    YAML keys: `value` (required): the expected reason. No reported reason fails the assertion.
    """

    requires_value = True

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"finish-reason needs a string value, got {value!r}")
        return value

    async def evaluate(self, ctx: AssertionContext) -> Score:
        want = self.value_of(ctx)
        got = ctx.response.finish_reason
        if not got:
            return binary(False, "Provider did not supply a finish reason")
        ok = got.lower() == want.lower()
        return binary(ok, f"Finish reason {got!r} {'equals' if ok else 'is not'} {want!r}")


_EVAL = schemas.obj({"toolCalled": {"type": "string"}, "wasAppropriate": {"type": "boolean"},
                     "reasoning": {"type": "string"}})
TOOL_SELECTION: Step[tuple[list[tuple[str, bool, str]], list[str]]] = judge_step(
    "judge", "tool_selection",
    lambda n: schemas.obj({"evaluations": schemas.exactly(n, _EVAL),
                           "missingTools": {"type": "array", "items": {"type": "string"}}}),
    lambda r: ([(str(e["toolCalled"]), bool(e["wasAppropriate"]), str(e["reasoning"])) for e in r["evaluations"]],
               [str(t) for t in r["missingTools"] if str(t).strip()]),
    ("input", "output", "available_tools", "tools_called", "n_calls"), "tool evaluations")


def _name(call: Any) -> str | None:
    if not isinstance(call, dict):
        return None
    fn = call.get("function")
    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
        return fn["name"]
    return next((str(call[k]) for k in ("name", "toolName") if isinstance(call.get(k), str)), None)


def _calls_in(data: Any) -> list[Any] | None:
    if isinstance(data, dict):
        return next((list(data[k]) for k in ("tool_calls", "toolCalls", "toolInvocations")
                     if isinstance(data.get(k), list)), None)
    if isinstance(data, list) and data and all(_name(c) is not None for c in data):
        return data
    return None


def tool_names(ctx: AssertionContext) -> list[str]:
    """Names of the tools called, in call order."""
    raw = ctx.response.raw
    calls: list[Any] | None = None
    if isinstance(raw, dict):
        choices = raw.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            calls = _calls_in(choices[0].get("message") or {})
        if calls is None:
            calls = _calls_in(raw)
    if calls is None:
        try:
            calls = _calls_in(json.loads(ctx.output))
        except ValueError:
            calls = None
    return [n for n in (_name(c) for c in calls or []) if n is not None]


@register("tool-call-accuracy")
class ToolCallAccuracy(MastraJudge):
    """Mastra's tool-call accuracy: were the expected tools called (by code, or judged by the grader)?

    Code variant (default): 1 when the expected tool was called (strictMode: as
    the only call), or with expectedToolOrder when the tools came in that order (strictMode: exactly that
    sequence); 0 otherwise and when no tool was called. LLM variant (`config.judge: llm`): appropriate calls /
    calls, judged by the grader against `config.availableTools`; with no call, 1 unless a tool was missing.

    YAML keys: `config.expectedTool`, `config.expectedToolOrder` (code: one of them required),
    `config.strictMode` (default false), `config.judge` (code | llm, default code), `config.availableTools`
    (llm: list of {name, description} or strings); the grader keys for the LLM variant (2 calls):
    """

    config_keys = frozenset({"expectedTool", "expectedToolOrder", "strictMode", "judge", "availableTools",
                             "scale", REASON_KEY})
    numeric_config = frozenset({"scale"})
    steps = ("judge", "reason")
    reason_about = ("Each tool call was judged appropriate for the user's request or not, against the available "
                    "tools, and tools that should have been called are listed as missing; the score is the share "
                    "of appropriate calls (with no call: 1, unless a tool was missing).")

    def __init__(self, spec: Any) -> None:
        super().__init__(spec)
        self.llm = spec.config.get("judge", "code") == "llm"
        self.graded = self.llm  # type: ignore[misc]  # per instance: only the LLM variant needs a grader
        self.grader_calls = self.grader_calls if self.llm else 0  # type: ignore[misc]

    def grading_steps(self) -> tuple[Step[Any], ...]:  # type: ignore[override]
        if not self.llm:
            return ()
        return (TOOL_SELECTION, REASON) if wants_reason(self.spec.config) else (TOOL_SELECTION,)

    def check(self) -> None:
        super().check()
        cfg = self.spec.config
        if cfg.get("judge", "code") not in ("code", "llm"):
            raise self.error(f"config.judge must be code or llm, got {cfg['judge']!r}", key="config.judge")
        if REASON_KEY in cfg and cfg.get("judge") != "llm":
            raise self.error(f"config.{REASON_KEY} applies to the LLM variant only (config.judge: llm)",
                             key=f"config.{REASON_KEY}", hint="the code variant makes no grader call")
        if cfg.get("judge") == "llm":
            tools = cfg.get("availableTools")
            if not isinstance(tools, list) or not tools:
                raise self.error("the LLM variant needs config.availableTools", key="config.availableTools",
                                 hint="a list of {name, description} (or tool names)")
            return
        tool, order = cfg.get("expectedTool"), cfg.get("expectedToolOrder")
        if tool is None and order is None:
            raise self.error("tool-call-accuracy needs config.expectedTool or config.expectedToolOrder",
                             key="config", hint="e.g. `config: {expectedTool: weather-tool}`")
        if tool is not None and not isinstance(tool, str):
            raise self.error("config.expectedTool must be a tool name", key="config.expectedTool")
        if order is not None and (not isinstance(order, list) or not all(isinstance(t, str) for t in order)):
            raise self.error("config.expectedToolOrder must be a list of tool names", key="config.expectedToolOrder")
        if not isinstance(cfg.get("strictMode", False), bool):
            raise self.error("config.strictMode must be true or false", key="config.strictMode")

    def score_code(self, ctx: AssertionContext, names: list[str], scale: float) -> Score:
        """Mastra's code variant: 1 or 0 (times config.scale)."""
        cfg = ctx.config
        order, strict = cfg.get("expectedToolOrder"), bool(cfg.get("strictMode", False))
        value = scale * text_scoring.tool_call_accuracy(names, expected_tool=cfg.get("expectedTool"), strict=strict,
                                                        expected_order=order)
        if order:
            want = f"order {' -> '.join(order)}{' (strict)' if strict else ''}"
        else:
            want = f"{cfg.get('expectedTool')}{' as the only call' if strict else ''}"
        passed = value >= (self.spec.threshold if self.spec.threshold is not None else 0.5 * scale)
        return Score(passed, value, f"called {', '.join(names) or 'no tool'}; expected {want}", {
            "actualTools": names, "hasToolCalls": bool(names), "correctToolCalled": cfg.get("expectedTool") in names,
            "scale": scale})

    async def evaluate(self, ctx: AssertionContext) -> Score:
        scale = self.scale(ctx)
        names = tool_names(ctx)
        if not self.llm:
            return self.score_code(ctx, names, scale)
        tools = "\n".join(f"{t.get('name', t.get('id', '?'))}: {t.get('description', '')}" if isinstance(t, dict)
                          else str(t) for t in ctx.config["availableTools"])
        _, trace = self.grader_for(ctx)
        evaluations, missing = await self.step(ctx, TOOL_SELECTION, {
            "input": block("USER REQUEST", mastra_input(ctx)), "output": block("AGENT RESPONSE", ctx.output),
            "available_tools": block("TOOLS", tools), "tools_called": ", ".join(names) or "none",
            "n_calls": len(names)}, trace, (len(names),))
        TOOL_SELECTION.check_count(len(evaluations), len(names))
        value = judge_scoring.tool_selection([ok for _, ok, _ in evaluations], missing) * scale
        bad = [n for n, ok, _ in evaluations if not ok]
        what = (f"{len(evaluations) - len(bad)} of {len(evaluations)} call(s) appropriate"
                + (f"; inappropriate: {', '.join(bad)}" if bad else "")
                + (f"; missing: {', '.join(missing)}" if missing else ""))
        judgements = {"evaluations": [{"toolCalled": n, "wasAppropriate": ok, "reasoning": why}
                                      for n, ok, why in evaluations], "missingTools": missing}
        return await self.judged(ctx, value, what, {**judgements, "actualTools": names}, trace,
                                 judgements=judgements, input_text=mastra_input(ctx))


def _f1_names(data: Any) -> set[str]:
    """Tool names in an output, in every shape promptfoo's tool-call-f1 reads (OpenAI, Anthropic, Google)."""
    if data is None:
        return set()
    if isinstance(data, str):
        try:
            return _f1_names(json.loads(data))
        except (ValueError, RecursionError):
            pass
        found: set[str] = set()
        for line in data.split("\n"):  # one JSON call per line
            t = line.strip()
            if t.startswith(("{", "[")):
                try:
                    found |= _f1_names(json.loads(t))
                except (ValueError, RecursionError):
                    continue
        return found
    if isinstance(data, dict):
        calls = data.get("tool_calls")
        if isinstance(calls, list):
            names: set[str] = set()
            for c in calls:
                if isinstance(c, dict):
                    fn = c.get("function")
                    if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                        names.add(fn["name"])
                    if isinstance(c.get("name"), str):
                        names.add(c["name"])
            return names
        if data.get("type") == "tool_use" and isinstance(data.get("name"), str):
            return {data["name"]}
        for key, inner in (("functionCall", None), ("toolCall", "functionCalls")):
            sub = data.get(key)
            if isinstance(sub, dict):
                listed = sub.get(inner) if inner is not None else None
                items: list[Any] = [sub] if inner is None else (listed if isinstance(listed, list) else [])
                return {i["name"] for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)}
        return set()
    found = set()
    for item in data if isinstance(data, list) else ():
        if not isinstance(item, dict):
            continue
        if item.get("type") == "tool_use" and isinstance(item.get("name"), str):
            found.add(item["name"])
            continue
        for key in ("functionCall", "function"):
            if isinstance(item.get(key), dict):
                if isinstance(item[key].get("name"), str):
                    found.add(item[key]["name"])
                break
        else:
            if isinstance(item.get("name"), str):
                found.add(item["name"])
    return found


@register("tool-call-f1")
class ToolCallF1(Assertion):
    """F1 of the tools called against the expected tool names (sets: order and repeats do not count).

    precision = expected tools called / distinct tools called, recall = expected tools called / expected;
    F1 = their harmonic mean (0 when no tool was called). The calls are read from the output (OpenAI
    `tool_calls`, Anthropic `tool_use` blocks, Google `functionCall`, a list of them, or one JSON per line).
    YAML keys: `value` (required): a list of tool names or a comma-separated string; `threshold` (default 1).
    The score is F1 (`not-` keeps it).
    """

    requires_value = True
    default_threshold = 1.0
    config_keys = frozenset()
    value_hint = "e.g. `value: [get_weather, search]` or `value: get_weather, search`"

    def parse(self, value: Any) -> frozenset[str]:
        if isinstance(value, list):
            names = [v if isinstance(v, str) else json.dumps(v) for v in value]
        elif isinstance(value, str):
            names = [n.strip() for n in value.split(",")]
        else:
            raise ValueError('"tool-call-f1" assertion requires a value: array of tool names or comma-separated '
                             f"string, got {value!r}")
        if not names:
            raise ValueError('"tool-call-f1" assertion requires at least one expected tool name')
        return frozenset(names)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        expected = self.value_of(ctx)
        actual = _f1_names(ctx.code_output)
        hit = len(expected & actual)
        precision = hit / len(actual) if actual else 0.0
        recall = hit / len(expected)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        threshold = self.threshold if self.threshold is not None else 1.0
        passed = f1 >= threshold
        called = ", ".join(sorted(actual)) or "(none)"
        lists = f"Expected: [{', '.join(sorted(expected))}], Called: [{called}]"
        reason = (f"Tool Call F1: {f1:.3f} (precision={precision:.3f}, recall={recall:.3f}). {lists}" if passed else
                  f"Tool Call F1 score {f1:.3f} is below threshold {threshold:g}. {lists}. "
                  f"Precision={precision:.3f}, Recall={recall:.3f}")
        return Score(passed, f1, reason, {"precision": precision, "recall": recall, "called": sorted(actual)},
                     keep_score_on_negate=True)
