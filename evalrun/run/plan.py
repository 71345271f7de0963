"""`--dry-run`: expand everything, call nothing; count the provider calls and (an upper bound) the grader calls
(each handler's `graded` / `grader_calls`). The cost estimate covers litellm models with a known price, at ~4
characters a prompt token and `max_tokens` (else 256) completion tokens; only then is litellm imported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evalrun import templating
from evalrun.types import AssertionSpec, Case

ASSUMED_COMPLETION_TOKENS = 256


@dataclass
class Plan:
    cases: int = 0
    provider_calls: Counter[str] = field(default_factory=Counter)
    grader_calls: Counter[str] = field(default_factory=Counter)  # by assertion type
    prompt_chars: Counter[str] = field(default_factory=Counter)  # by provider id
    max_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def total_grader_calls(self) -> int:
        return sum(self.grader_calls.values())


def _count_asserts(specs: Iterable[AssertionSpec], into: Counter[str]) -> None:
    for spec in specs:
        h = spec.handler
        if h is not None and getattr(h, "graded", False):
            into[spec.full_type] += int(getattr(h, "grader_calls", 0) or 0)
        if spec.children:
            _count_asserts(spec.children, into)


def build(cases: Iterable[Case]) -> Plan:
    plan = Plan()
    for case in cases:
        plan.cases += 1
        pid = case.provider.id
        plan.provider_calls[case.provider.name] += 1
        try:
            prompt = templating.render_prompt(case.prompt.raw, case.vars, lenient=True)
            plan.prompt_chars[pid] += len(prompt if isinstance(prompt, str) else str(prompt))
        except Exception:  # the real run reports template errors per case
            pass
        mt = case.provider.config.get("max_tokens") or case.provider.config.get("maxTokens")
        if isinstance(mt, int):
            plan.max_tokens[pid] = mt
        _count_asserts(case.test.asserts, plan.grader_calls)
    return plan


def estimate_cost(plan: Plan, provider_calls_by_id: dict[str, int]) -> dict[str, float | None]:
    """Provider id -> estimated USD (None when unknown: no litellm price, or user code behind exec/python/http).

    Only `echo` is known to be free."""
    from evalrun.providers import is_builtin

    result: dict[str, float | None] = {}
    model_ids = [p for p in provider_calls_by_id if not is_builtin(p)]
    for p in provider_calls_by_id:
        if is_builtin(p):
            result[p] = 0.0 if p == "echo" else None
    if not model_ids:
        return result
    from evalrun.providers import ids, litellm_

    litellm: Any = litellm_.load_litellm()
    for pid in model_ids:
        try:
            model = ids.to_litellm_model(pid)
            price = litellm.model_cost.get(model) or litellm.model_cost.get(model.split("/", 1)[-1])
        except Exception:
            price = None
        if not price or "input_cost_per_token" not in price:
            result[pid] = None
            continue
        calls = provider_calls_by_id[pid]
        prompt_tokens = plan.prompt_chars[pid] / 4.0
        completion_tokens = calls * plan.max_tokens.get(pid, ASSUMED_COMPLETION_TOKENS)
        result[pid] = prompt_tokens * float(price["input_cost_per_token"]) + \
            completion_tokens * float(price.get("output_cost_per_token") or 0.0)
    return result


def describe(plan: Plan, costs: dict[str, float | None], graders: list[str]) -> str:
    lines = [f"Dry run: {plan.cases} cases, nothing was called.",
             f"Provider calls: {sum(plan.provider_calls.values())}"]
    for name, n in plan.provider_calls.most_common():
        lines.append(f"  {name}: {n}")
    lines.append(f"Grader calls (upper bound, before caching): {plan.total_grader_calls}")
    for t, n in sorted(plan.grader_calls.items()):
        lines.append(f"  {t}: {n}")
    known = [c for c in costs.values() if c is not None]
    if costs and len(known) == len(costs):
        lines.append(f"Estimated provider cost: ${sum(known):.4f} (grader cost not estimated)")
    elif known:
        unknown = ", ".join(p for p, c in costs.items() if c is None)
        lines.append(f"Estimated provider cost: ${sum(known):.4f} plus unknown for {unknown}")
    elif costs:
        lines.append("Estimated provider cost: unknown (no price known for these providers)")
    if plan.total_grader_calls:
        lines.append("Grader: " + (", ".join(graders) if graders else "builtin (offline)"))
    return "\n".join(lines)
