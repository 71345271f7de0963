"""The config's JSON Schema (2020-12), built in code so the assertion-type enum follows the registry.

`build_schema(type_names)` returns the schema; with `type_names=None` the assertion `type` is any string (used at
run time, where `assertions.engine.build` reports unknown types with a did-you-mean). scripts/gen_schema.py writes
`build_schema(registry names)` to evalrun/schemas/evalrun.schema.json for editors.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

SCHEMA_ID = "https://evalrun.dev/schemas/evalrun.schema.json"

TEST_KEYS = ("description", "vars", "assert", "options", "threshold", "metadata", "providers", "prompts", "provider")
#: Test `options` keys promptfoo accepts and hands on to providers; evalrun accepts them and does not use them.
PASSTHROUGH_OPTIONS = ("timeout", "temperature", "maxTokens", "max_tokens", "top_p", "seed", "stop")
OPTION_KEYS = ("prefix", "suffix", "provider", "transform", "postprocess", "rubricPrompt", "disableVarExpansion",
               "disableConversationVar", "runSerially", "storeOutputAs", "transformVars", *PASSTHROUGH_OPTIONS)
PROVIDER_KEYS = ("id", "label", "config", "prompts", "transform", "delay", "env")


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _str(desc: str) -> dict[str, Any]:
    return {"type": "string", "description": desc}


_STR_LIST = {"type": "array", "items": {"type": "string"}}
_FILE_REF = {"type": "string", "description": "A path relative to the config file (`file://` prefix optional "
                                              "for tests), globs allowed."}


def _obj(desc: str, props: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "description": desc, "properties": props,
                           "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def build_schema(type_names: Sequence[str] | None = None) -> dict[str, Any]:
    """The config schema. `type_names`: registered assertion types (their `not-` forms are added)."""
    if type_names is None:
        type_schema: dict[str, Any] = _str("Assertion type; prefix with `not-` to negate.")
    else:
        names = sorted(set(type_names))
        type_schema = {"description": "Assertion type; prefix with `not-` to negate.",
                       "enum": names + [f"not-{n}" for n in names]}
    defs: dict[str, Any] = {
        "providerObject": _obj("A provider with options.", {
            "id": _str("Provider id: `echo`, `openai:gpt-4o-mini`, a litellm id such as `openai/gpt-4o-mini`, "
                       "`exec:CMD`, `file://provider.py[:call_api]`, `http(s)://...`."),
            "label": _str("Display name; also what `prompts`/test `providers` filters match."),
            "config": {"type": "object", "description": "Options passed to the provider (temperature, api_base, "
                                                        "...)."},
            "prompts": {**_STR_LIST, "description": "Labels or ids of the prompts this provider runs "
                                                    "(default: all)."},
            "transform": _str("Python expression applied to the output (`output` in scope)."),
            "delay": {"type": "number", "minimum": 0, "maximum": 3_600_000,
                      "description": "Milliseconds to wait before each call (at most an hour)."},
            "env": {"type": "object", "description": "promptfoo's per-provider environment: variables for this "
                                                    "provider's `{{ env.NAME }}` and its credentials "
                                                    "(`OPENAI_API_KEY`, `OPENAI_BASE_URL`, ...), over `env:` and "
                                                    "the process environment.",
                    "additionalProperties": {"type": ["string", "number", "boolean"]}},
        }, required=["id"]),
        "providerMap": {"type": "object", "description": "`{PROVIDER_ID: {label, config, ...}}`.",
                        "minProperties": 1, "maxProperties": 1,
                        "additionalProperties": {"type": "object"}},
        "provider": {"description": "A provider: an id string, an object, or a one-key map id -> options.",
                     "anyOf": [{"type": "string"}, _ref("providerObject"), _ref("providerMap")]},
        "providers": {"description": "Models or apps under test (alias `targets`).",
                      "anyOf": [{"type": "string"}, {"type": "array", "items": _ref("provider")}]},
        "message": {"type": "object", "description": "A chat message.",
                    "properties": {"role": {"type": "string"}, "content": {}}, "required": ["role"]},
        "promptObject": _obj("A prompt with a label.", {
            "id": _str("`file://` path of the prompt, or an id."),
            "raw": {"description": "Prompt text (a Jinja2 template) or a chat message list.",
                    "anyOf": [{"type": "string"}, {"type": "array", "items": _ref("message")}]},
            "label": _str("Display name; what provider/test `prompts` filters match."),
            "config": {"type": "object", "description": "promptfoo's per-prompt provider options: not supported by "
                                                 "evalrun (an error); use providers[].config."},
        }),
        "prompt": {"description": "Prompt text, `file://path` (glob allowed), an object, or a chat message list.",
                   "anyOf": [{"type": "string"}, _ref("promptObject"),
                             {"type": "array", "items": _ref("message")}]},
        "prompts": {"description": "Prompt templates (default `{{prompt}}`).",
                    "anyOf": [{"type": "string"}, {"type": "array", "items": _ref("prompt")},
                              {"type": "object", "description": "Map of path or text -> label.",
                               "additionalProperties": {"type": "string"}}]},
        "assertion": _obj("One check of the output.", {
            "type": type_schema,
            "value": {"description": "Expected value; strings are templates over the test's vars; "
                                     "`file://` loads a file."},
            "threshold": {"type": "number", "minimum": 0, "maximum": 1e12,
                          "description": "Pass threshold (meaning per type; 0..1 for scores)."},
            "weight": {"type": "number", "minimum": 0, "maximum": 1_000_000,
                       "description": "Weight in the test score; 0 = reported but never fails the test."},
            "metric": _str("Name under which the score is reported (template)."),
            "transform": _str("Python expression applied to the output before this assertion."),
            "provider": {"description": "Grader for this assertion: a provider id or object.",
                         "anyOf": [{"type": "string"}, {"type": "object"}]},
            "config": {"type": "object", "description": "Type-specific options."},
            "rubricPrompt": {"description": "Replaces the grader prompt.",
                             "anyOf": [{"type": "string"}, {"type": "array"}]},
            "contextTransform": _str("Python expression producing the context from the output."),
            "assert": {"type": "array", "items": _ref("assertion"),
                       "description": "Children of an `assert-set`."},
        }, required=["type"]),
        "testOptions": _obj("Per-test options.", {
            "prefix": _str("Text put before every prompt."),
            "suffix": _str("Text put after every prompt."),
            "provider": {"description": "Grader for this test's graded assertions.",
                         "anyOf": [{"type": "string"}, {"type": "object"}]},
            "transform": _str("Python expression applied to the output."),
            "postprocess": _str("Deprecated alias of transform."),
            "rubricPrompt": {"description": "Grader prompt override.",
                             "anyOf": [{"type": "string"}, {"type": "array"}]},
            "disableVarExpansion": {"type": "boolean", "description": "Do not expand list vars."},
            "disableConversationVar": {"type": "boolean"},
            "runSerially": {"type": "boolean"},
            "storeOutputAs": {"type": "string", "description": "Store this test's output (after transforms) as a var of the "
                              "tests that run after it; cases then run one at a time, in order."},
            "transformVars": _str("Code run before the prompt renders: returns a mapping merged into the vars "
                                  "(Python expression/body, `file://x.py[:fn]`, or `file://x.js[:fn]`)."),
            **{k: {"description": "Accepted for promptfoo compatibility; not used by evalrun."}
               for k in PASSTHROUGH_OPTIONS},
        }),
        "vars": {"description": "Template variables; a list of strings expands to one case per value.",
                 "anyOf": [{"type": "object"}, {"type": "string"}]},
        "test": _obj("One test case.", {
            "description": _str("Shown in reports."),
            "vars": _ref("vars"),
            "assert": {"type": "array", "items": _ref("assertion")},
            "options": _ref("testOptions"),
            "threshold": {"type": "number", "minimum": 0, "maximum": 1,
                          "description": "Pass when the weighted score reaches this (0..1)."},
            "metadata": {"type": "object"},
            "providers": {**_STR_LIST, "description": "Only these providers (ids or labels) run this test."},
            "prompts": {**_STR_LIST, "description": "Only these prompts (labels or ids) run this test."},
            "provider": {"type": ["string", "object"],
                         "description": "The provider this test's cases call instead of their column's (an id, or "
                                        "{id, label, config}); the column still names the case. The grader is "
                                        "`options.provider`."},
        }),
        "generator": _obj("A Python test generator.", {
            "path": _str("`file://gen.py:function`"),
            "config": {"type": "object", "description": "Passed to the function."},
        }, required=["path"]),
        "tests": {"description": "Tests: a list of tests, paths/globs (.yaml .json .jsonl .csv), "
                                 "`file://gen.py:fn` generators, or a mix.",
                  "anyOf": [{"type": "string"},
                            {"type": "array", "items": {"anyOf": [{"type": "string"}, _ref("test"),
                                                                  _ref("generator")]}}]},
        "scenarioEntry": _obj("One row of a scenario's config.", {
            "description": _str("Shown in reports."), "vars": _ref("vars"),
            "assert": {"type": "array", "items": _ref("assertion")}, "options": _ref("testOptions"),
            "metadata": {"type": "object"},
            "threshold": {"type": "number", "minimum": 0, "maximum": 1},
        }),
        "scenario": _obj("Every config entry x every test.", {
            "description": _str("Shown in reports."),
            "config": {"anyOf": [{"type": "string"}, {"type": "array", "items": _ref("scenarioEntry")}]},
            "tests": _ref("tests"),
        }, required=["config"]),
        "evaluateOptions": _obj("How the run behaves.", {
            "maxConcurrency": {"type": "integer", "minimum": 1, "maximum": 1000,
                               "description": "Concurrent cases (default 4, at most 1000)."},
            "repeat": {"type": "integer", "minimum": 1, "maximum": 10_000,
                       "description": "Run every case N times (at most 10,000)."},
            "delay": {"type": "number", "minimum": 0, "maximum": 3_600_000,
                      "description": "Milliseconds between calls (at most an hour)."},
            "cache": {"type": "boolean", "description": "Use the response cache (default true)."},
            "timeoutMs": {"type": "integer", "minimum": 0, "maximum": 86_400_000,
                          "description": "Per-case timeout (at most a day)."},
            "showProgressBar": {"type": "boolean"},
        }),
    }
    root = _obj("An evalrun (promptfoo-compatible) eval suite.", {
        "description": _str("What this suite checks."),
        "providers": _ref("providers"),
        "targets": {**_ref("providers"), "description": "Alias of providers."},
        "prompts": _ref("prompts"),
        "tests": _ref("tests"),
        "defaultTest": {"description": "Merged into every test (inline or `file://`).",
                        "anyOf": [{"type": "string"}, _ref("test")]},
        "scenarios": {"anyOf": [{"type": "string"},
                                {"type": "array", "items": {"anyOf": [{"type": "string"}, _ref("scenario")]}}]},
        "outputPath": {"anyOf": [{"type": "string"}, _STR_LIST], "description": "Where results are written."},
        "env": {"type": "object", "description": "Variables for `{{ env.NAME }}` (over the process environment).",
                "additionalProperties": {"type": ["string", "number", "boolean"]}},
        "evaluateOptions": _ref("evaluateOptions"),
        "derivedMetrics": {"type": "array", "items": _obj("A metric computed from other metrics.", {
            "name": {"type": "string"}, "value": {"type": "string"}}, required=["name", "value"])},
        "metadata": {"type": "object"},
        "tags": {"type": "object"},
        "grader": {"description": "evalrun: default grader for graded assertions (`builtin` or a model id or a "
                                  "provider object).",
                   "anyOf": [{"type": "string"}, {"type": "object"}]},
        "extends": {"description": "evalrun: config file(s) merged under this one.",
                    "anyOf": [{"type": "string"}, _STR_LIST]},
        "sharing": {"description": "promptfoo's sharing setting; accepted and ignored."},
        "nunjucksFilters": {"type": "object", "additionalProperties": {"type": "string"},
                            "description": "Custom template filters: name -> `file://filter.js` or "
                                           "`file://filter.py[:fn]` (path relative to the config)."},
        "assertionTemplates": {"type": "object", "additionalProperties": _ref("assertion"),
                               "description": "Reusable assertions, used as `$ref: '#/assertionTemplates/name'`."},
    })
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "evalrun config", **root, "$defs": defs}


@cache
def runtime_schema(definition: str | None = None) -> dict[str, Any]:
    """The run-time schema (any assertion type), or one named definition of it with `$defs` kept resolvable."""
    schema = build_schema(None)
    if definition is not None:
        schema = {"$defs": schema["$defs"], **schema["$defs"][definition]}
    return schema
