"""promptfoo's `classifier`: the output run through a text classifier (chosen by grading/classifiers.py)."""

from __future__ import annotations

from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.registry import register
from evalrun.errors import ConfigError, GraderError

EPSILON = 2.220446049250313e-16  # JavaScript's Number.EPSILON, as promptfoo compares


@register("classifier")
class Classifier(Assertion):
    """promptfoo's classifier: a classification model's score for class `value` must be >= `threshold`.

    Without `value`, the highest class score counts. YAML keys: `value` (optional): the expected class label, as the model names it (e.g. `POSITIVE`, `toxic`);
    `threshold` (default 1, as in promptfoo: set it, e.g. 0.5); `provider`: the classifier, e.g.
    `huggingface:text-classification:distilbert-base-uncased-finetuned-sst-2-english` (`config: {apiEndpoint,
    apiKey}`), `huggingface:token-classification:MODEL`, or `file://classify.py` with
    `call_classification_api(prompt, options)`; else the test's `options.provider.classification`.
    Score = that class's score (0 when the class is absent). `not-` passes when it is below the threshold and
    reports 1 - score. One classification request, no grader call.
    """

    default_threshold = 1.0
    config_keys = frozenset()
    value_hint = "give the expected class label as a string, or omit `value` to use the highest class score"

    def parse(self, value: Any) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise ValueError('"classifier" assertion type must have a string value or be undefined')
        return value

    def check(self) -> None:
        super().check()
        from evalrun.grading.classifiers import candidate, check_config
        try:  # the assertion's own provider must be a classifier (a typo is a config error at load time)
            found = candidate(self.spec.provider, self.base_dir, own=True)
            if found is not None:
                check_config(found)
        except ConfigError as e:
            raise self.error(e.message, key="provider", hint=e.hint) from None

    async def evaluate(self, ctx: AssertionContext) -> Score:
        from evalrun.grading import classifiers
        expected = self.value_of(ctx)
        found = classifiers.classifier_spec(self.spec, ctx.case.test, self.base_dir)
        if found is None:
            raise GraderError(f"classifier needs a classification provider and none is configured; "
                              f"{classifiers.HINT}")
        scores = await classifiers.classify(found, ctx.output)
        if not scores:
            raise GraderError(f"{found.id}: no classification scores returned")
        score = max(scores.values()) if expected is None else scores.get(expected, 0.0)
        thr = float(self.threshold if self.threshold is not None else 1.0)
        passed = score >= thr - EPSILON
        subject = "Maximum classification score" if expected is None else f"Classification {expected} has score"
        reason = f"{subject} {score:.2f} {'>=' if passed else '<'} {thr:g}"
        if expected is not None and expected not in scores:
            reason += f" (the classifier returned no class {expected!r}; its classes: {', '.join(sorted(scores))})"
        return Score(passed, score, reason, {"classifier": found.id, "classification": scores})
