"""is-valid-openai-function-call: promptfoo's check of a legacy OpenAI `function_call` reply.

The output must be a `{name, arguments}` object (JSON text, or the object a transform returned) naming one of the
provider's `config.functions` (a list, or a `file://` YAML/JSON file of them, relative to the config), with
`arguments` a JSON string that validates against that function's `parameters` schema.
"""

from __future__ import annotations

import json
import os
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register
from evalrun.assertions.structured import call_problem


def _functions(ctx: AssertionContext, base_dir: str) -> Any:
    funcs = ctx.case.provider.config.get("functions")
    if isinstance(funcs, str) and funcs.startswith("file://"):
        from evalrun.config.readers import parse_data

        path = funcs[len("file://"):]
        path = path if os.path.isabs(path) else os.path.join(base_dir, path)
        with open(path, encoding="utf-8") as f:
            funcs = parse_data(f.read(), path)
    return funcs


@register("is-valid-openai-function-call")
class IsValidOpenAiFunctionCall(Assertion):
    """The output is an OpenAI function call (`{name, arguments}`) matching the provider's `config.functions`.

    YAML keys: none.
    """

    takes_value = False
    summary = "output is a function call matching the provider's config.functions"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        call = ctx.output_value
        if call is None:
            try:
                call = json.loads(ctx.output)
            except ValueError:
                call = None
        if isinstance(call, dict) and isinstance(call.get("function_call"), dict):
            call = call["function_call"]
        if not (isinstance(call, dict) and isinstance(call.get("name"), str)
                and isinstance(call.get("arguments"), str)):
            return binary(False, f"OpenAI did not return a valid-looking function call: {ctx.output[:200]}")
        try:
            funcs = _functions(ctx, self.base_dir)
        except (OSError, ValueError) as e:
            return binary(False, f"cannot read the provider's config.functions: {e}")
        spec = next((f for f in funcs or () if isinstance(f, dict) and f.get("name") == call["name"]), None)
        if spec is None:
            return binary(False, f"Called {call['name']!r}, which is not among the provider's functions")
        problem = call_problem(call["name"], call["arguments"], spec)
        if problem:
            return binary(False, problem)
        return binary(True, f"valid call to {call['name']!r}")
