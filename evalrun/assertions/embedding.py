"""promptfoo's embedding metrics: similar (cosine, dot, euclidean) and answer-relevance, one embedding request per
evaluation (the model is chosen by grading/embeddings.py)."""

from __future__ import annotations

from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score
from evalrun.assertions.graded import GradedAssertion, mastra_input
from evalrun.assertions.registry import register
from evalrun.grading import schemas
from evalrun.grading.fence import block
from evalrun.grading.scoring import verdicts as judge_scoring
from evalrun.grading.steps import Step, judge_step

N_QUESTIONS = 3


class _Similar(Assertion):
    """The output's embedding against `value`'s (a string, or a list: pass when any is similar enough).

    YAML keys: `value` (required: text or list of texts); `threshold` (default 0.75; for similar:euclidean
    the largest passing distance); `provider` (embedding model, e.g. `{embedding: openai:embedding:MODEL}`).
    Score: the similarity (euclidean: 1 / (1 + distance)); with a list, the best. One embedding request.
    """

    metric = "cosine"
    requires_value = True
    needs_embedder = True
    default_threshold = 0.75
    config_keys = frozenset()
    value_hint = "give the expected text, or a list of texts"

    def parse(self, value: Any) -> list[str]:
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(v, str) and v.strip() for v in values):
            raise ValueError(f"{self.spec.type} needs a non-empty string or list of strings as `value`")
        return list(values)

    async def evaluate(self, ctx: AssertionContext) -> Score:
        values = self.value_of(ctx)
        embedder = ctx.embedder(self.spec)
        vectors = await embedder.embed([ctx.output, *values])
        thr = float(self.threshold if self.threshold is not None else 0.75)
        results = [judge_scoring.similar(vectors[0], v, self.metric, thr) for v in vectors[1:]]
        best = max(range(len(results)), key=lambda i: results[i][1])
        passed = any(r[0] for r in results)
        ok, score, raw = results[next((i for i, r in enumerate(results) if r[0]), best)]
        what = "distance" if self.metric == "euclidean" else f"{self.metric} similarity"
        op = ("<=" if ok else ">") if self.metric == "euclidean" else (">=" if ok else "<")
        which = f" (closest of {len(values)} values)" if len(values) > 1 else ""
        return Score(passed, score, f"{what} {raw:.3f} {op} threshold {thr:g}{which}",
                     {"embedder": embedder.id, "metric": self.metric, "raw": raw})


for _metric, _names, _what in (("cosine", ("similar", "similar:cosine"), "cosine similarity of embeddings"),
                               ("dot", ("similar:dot",), "dot product of embeddings"),
                               ("euclidean", ("similar:euclidean",), "distance of embeddings (lower is closer)")):
    register(*_names)(type(f"Similar{_metric.capitalize()}", (_Similar,), {
        "metric": _metric, "__module__": __name__,
        "__doc__": f"promptfoo's {_names[0]}: {_what}.\n\n" + (_Similar.__doc__ or "").split("\n\n", 1)[1]}))


QUESTIONS: Step[list[str]] = judge_step(
    "judge", "questions", lambda n: schemas.obj({"questions": schemas.exactly(n, {"type": "string"})}),
    lambda r: [str(q) for q in r["questions"]], ("output", "n"), "questions")


@register("answer-relevance")
class AnswerRelevance(GradedAssertion):
    """promptfoo's answer-relevance: the grader writes 3 questions the output answers; the score is their
    mean embedding cosine similarity to the query (`vars.query`, else the prompt).

    One grader call (promptfoo makes 3) and one embedding request; not Mastra's `answer-relevancy` (see
    docs/metrics.md). YAML keys: `threshold` (default 0.7); `provider` (`{text: GRADER, embedding: EMBEDDER}`);
    """

    grader_calls = 1
    takes_value = False
    needs_embedder = True
    default_threshold = 0.7
    config_keys = frozenset()
    steps = ("judge",)
    judge_step = QUESTIONS

    async def evaluate(self, ctx: AssertionContext) -> Score:
        query = mastra_input(ctx)
        questions, trace = await self.ask(ctx, {"output": block("ANSWER", ctx.output), "n": N_QUESTIONS},
                                          schema_args=(N_QUESTIONS,))
        embedder = ctx.embedder(self.spec)
        vectors = await embedder.embed([query, *questions])
        score = judge_scoring.answer_relevance(vectors[0], vectors[1:])
        passed, comparison = self.verdict(score)
        return self.score(passed, score, f"mean similarity of {len(questions)} generated questions to the query: "
                          f"{comparison}", {"questions": questions, "embedder": embedder.id}, trace)
