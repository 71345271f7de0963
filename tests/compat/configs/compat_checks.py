"""Assertion functions used by files.yaml (loaded by both evalrun and promptfoo)."""


def get_assert(output, context):
    return "hello" in output


def scored(output, context):
    return {"pass": len(output) > 3, "score": 0.75, "reason": "length " + str(len(output))}


def uses_vars(output, context):
    return output == context["vars"]["expected"]


def numeric(output, context):
    return len(output) / 10
