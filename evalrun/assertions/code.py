"""User-code assertions: python (in process) and javascript (one shared Node.js process), their results read as
promptfoo reads them (`normalize_result`)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.errors import AssertionRuntimeError
from evalrun.pyexpr import UserFunction, compile_user_code


def normalize_result(result: Any, threshold: float | None, language: str) -> Score:
    """promptfoo's normalizeScriptResult: bool / "true" / number / {pass, score, reason} / JSON text."""
    if isinstance(result, str) and result.strip().lower() in ("true", "false"):
        result = result.strip().lower() == "true"
    if isinstance(result, bool):
        return Score(result, 1.0 if result else 0.0, f"{language} code returned {str(result).lower()}")
    if isinstance(result, str) and result.lstrip().startswith("{"):
        try:
            result = json.loads(result)
        except ValueError as e:
            raise AssertionRuntimeError(f"{language} assertion returned invalid JSON: {e}") from None
    if isinstance(result, dict):
        return _from_mapping(result, threshold, language)
    if isinstance(result, float) and math.isnan(result):  # promptfoo: Python's an error, JavaScript's a number
        raise AssertionRuntimeError(f"{language} assertion returned NaN")  # a broken check never passes negated
    try:
        score = float(result) if isinstance(result, (int, float)) else float(str(result))
    except ValueError:
        raise AssertionRuntimeError(f"{language} assertion must return a boolean, number, or {{pass, score, "
                                    f"reason}}; got {type(result).__name__}: {str(result)[:200]}") from None
    passed = score > 0 if threshold is None else score >= threshold
    return Score(passed, score, f"{language} code returned {score:g}" +
                 (f" (threshold {threshold:g})" if threshold is not None else ""), keep_score_on_negate=True)


def _from_mapping(obj: dict[str, Any], threshold: float | None, language: str) -> Score:
    """A grading result, `pass`, `score` and `reason` all required (promptfoo); Python's threshold may fail it."""
    passed, score, reason = obj.get("pass", obj.get("pass_")), obj.get("score"), obj.get("reason")
    if not isinstance(passed, bool) or isinstance(score, bool) or not isinstance(score, (int, float)) \
            or not isinstance(reason, str):
        raise AssertionRuntimeError(
            f"{language} assertion must return a boolean, a number, or a mapping with `pass` (boolean), "
            f"`score` (number) and `reason` (text); got {json.dumps(obj, default=str)[:200]}")
    if language == "Python" and threshold is not None and score < threshold:
        passed = False
        reason = f"{language} score {score:g} is less than threshold {threshold:g}: {reason}"
    details = {k: v for k, v in obj.items() if k not in ("pass", "pass_", "score", "reason")}
    return Score(passed, float(score), reason, details, keep_score_on_negate=True)


@register("python")
class Python(Assertion):
    """Python code judges the output: an expression, a function body, or `file://x.py:fn`.

    YAML keys: `value` (required): a one-line expression over `output` and `context` (e.g.
    `len(output) < 100`), several lines forming a function body that `return`s, or `file://check.py:fn`
    (default function `get_assert`); `threshold` (optional) for numeric results. `context` holds `vars`,
    `prompt`, `test`, `config`, `provider`, `providerResponse`. `json`, `re`, `math` are imported. Code that
    does not compile is a config error; an exception at run time, or a result that is no verdict, FAILS the
    assertion with the reason, as in promptfoo (an ERROR under `not-`).
    """

    requires_value = True
    raw_value = True

    def check(self) -> None:
        if not isinstance(self.spec.value, str):
            raise self.error("python needs code as a string", key="value")
        self.fn: UserFunction = compile_user_code(
            self.spec.value, ("output", "context"), loc=self.spec.loc, key=self.key_path("value"),
            base_dir=self.base_dir, default_fn="get_assert")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        try:
            try:
                result = await self.fn.call(ctx.code_output, ctx.as_dict())
            except AssertionRuntimeError as e:
                if e.__cause__ is None:  # sys.exit()/KeyboardInterrupt in user code: no verdict, an ERROR
                    raise AssertionRuntimeError(str(e)) from e
                raise
            if result is None:
                raise AssertionRuntimeError("Python assertion returned None; a multi-line value is a function "
                                            "body, so it needs `return`")
            return normalize_result(result, self.spec.threshold, "Python")
        except AssertionRuntimeError as e:
            return _failed_code(self.spec.negate, e)


@register("javascript")
class Javascript(Assertion):
    """JavaScript code judges the output, run by Node.js (one shared process per run).

    YAML keys: `value` (required): a one-line expression over `output` and `context` (e.g.
    `output.length < 100`; leading `const x = ...;` statements allowed), several lines forming a function
    body with `return`, or `file://check.js:fn`; `threshold` (optional) for numeric results. Needs `node` on
    PATH: without it the assertion is an ERROR saying so.
    """

    requires_value = True
    raw_value = True

    def check(self) -> None:
        if not isinstance(self.spec.value, str) or not self.spec.value.strip():
            raise self.error("javascript needs code as a non-empty string", key="value")
        from evalrun import jsnode
        ref = self.spec.value.strip()
        if ref.startswith("file://"):  # a TypeScript file needs type stripping or tsx (evalrun/jsnode.py)
            path = ref[len("file://"):]
            head, sep, tail = path.rpartition(":")
            if sep and "/" not in tail and jsnode.is_typescript(head):
                path = head
            jsnode.require(Path(self.base_dir, path), loc=self.spec.loc, key=self.key_path("value"))
        problem = jsnode.check_syntax(self.spec.value)
        if problem:
            raise self.error(f"JavaScript code does not compile: {problem}", key="value",
                             hint="a one-line value is an expression (e.g. `output.length < 100`); "
                                  "use several lines with `return` for statements")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        from evalrun.jsnode import call_js, node_path
        if node_path() is None:  # no verdict is possible: an ERROR, never a FAIL
            return normalize_result(await call_js(self.spec.value, ctx.output, {}, base_dir=self.base_dir),
                                    self.spec.threshold, "JavaScript")
        try:
            result = await call_js(self.spec.value, ctx.code_output, json.loads(json.dumps(ctx.as_dict(), default=str)),
                                   base_dir=self.base_dir)
            if result is None:
                raise AssertionRuntimeError("JavaScript assertion returned nothing (missing `return`?)")
            if isinstance(result, (str, list)):  # promptfoo accepts no strings from JS
                raise AssertionRuntimeError("JavaScript assertion must return a boolean, number, or {pass, score, "
                                            f"reason}}; got {type(result).__name__}: {str(result)[:200]}")
            return normalize_result(result, self.spec.threshold, "JavaScript")
        except AssertionRuntimeError as e:
            return _failed_code(self.spec.negate, e)


def _failed_code(negated: bool, e: AssertionRuntimeError) -> Score:
    """Code that threw or returned nothing usable FAILS with the reason, as in promptfoo; under `not-` it stays an
    ERROR (a flipped failure must never become a pass)."""
    from evalrun.jsnode import CodeTimeout
    if negated or isinstance(e, CodeTimeout) or isinstance(e.__cause__, AssertionRuntimeError):
        raise e
    return Score(False, 0.0, str(e))



_RUBY_RUNNER = """
if __FILE__ == $0
  args = JSON.parse(File.read(ARGV[0]))
  File.write(ARGV[1], JSON.generate({"result" => main(*args)}))
end
"""


def ruby_script(code: str) -> str:
    """promptfoo's buildRubyScript: one line is `return <line>`, several lines the body of
    `main(output, context)` (indented like its first indented line), plus evalrun's runner."""
    if "\n" in code:
        found = re.search(r"^(?!\s*$)[ \t]+", code, re.M)
        indent = found.group(0) if found else "  "
        body = "\n".join(indent + line for line in code.split("\n"))
    else:
        body = f"  return {code}"
    return f"require 'json'\n\ndef main(output, context)\n{body}\nend\n{_RUBY_RUNNER}"


@register("ruby")
class Ruby(Assertion):
    """Ruby code judges the output, run by the `ruby` binary (PROMPTFOO_RUBY overrides it), one process a case.

    YAML keys: `value` (required): a one-line expression over `output` and `context` (e.g. `output.length <
    100`), or several lines forming the body of `main(output, context)` with `return`; `threshold` (optional)
    for numeric results. Results are read as for python (true/false, a number, {pass, score, reason}). An
    exception FAILS the assertion with the reason, as in promptfoo (an ERROR under `not-`); no `ruby` binary is
    an ERROR naming it.
    """

    requires_value = True
    config_keys = frozenset()

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"ruby assertion must have a string value, got {value!r}")
        if value.strip().startswith("file://"):
            raise ValueError("ruby: file:// references are not supported; put the code in `value`")
        return value

    async def evaluate(self, ctx: AssertionContext) -> Score:
        import asyncio
        import os
        import shutil
        import tempfile
        code = self.value_of(ctx)
        binary = os.environ.get("PROMPTFOO_RUBY") or "ruby"
        path = shutil.which(binary)
        if path is None:
            raise AssertionRuntimeError(f"the ruby assertion needs the `{binary}` binary, which is not on PATH: "
                                        "install Ruby, or set PROMPTFOO_RUBY to its path")
        with tempfile.TemporaryDirectory(prefix="evalrun-ruby-") as tmp:
            script, args, out = (Path(tmp, n) for n in ("script.rb", "input.json", "output.json"))
            script.write_text(ruby_script(code), encoding="utf-8")
            args.write_text(json.dumps([ctx.code_output, ctx.as_dict()], default=str), encoding="utf-8")
            proc = await asyncio.create_subprocess_exec(path, str(script), str(args), str(out),
                                                        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            _, err = await proc.communicate()
            try:
                if proc.returncode != 0:
                    lines = err.decode("utf-8", "replace").strip().splitlines()
                    raise AssertionRuntimeError("Ruby code execution failed: " + (lines[0] if lines else
                                                f"exit status {proc.returncode}"))
                result = json.loads(out.read_text(encoding="utf-8"))["result"]
                if result is None:
                    raise AssertionRuntimeError("Ruby assertion returned nil (no verdict): return true/false, a "
                                                "number or {'pass' => ..., 'score' => ..., 'reason' => ...}")
                return normalize_result(result, self.spec.threshold, "Ruby")
            except AssertionRuntimeError as e:
                return _failed_code(self.spec.negate, e)
