"""Builtin grader speed: claim verifications per second on one core (target >= 1,000/s).

Workloads, each timed cold (every cache of the grader cleared first, each claim judged once):
  * qa+summaries: the claims of every answer in faithfulness_eval/items.jsonl verified against its context
    (the BuiltinGrader.verify path: one evidence set per answer, all its claims);
  * long context: 40 claims verified against a 60-chunk context (~8,000 words), as a RAG context would be,
    cold (the one-time evidence preparation included) and with the evidence already prepared (the cache the
    grader keeps per distinct evidence), plus the preparation alone in words per second;
  * attribution: the same 40 claims x 60 chunks (2,400 claim-chunk judgements, the attribute step).
The ratio is against the 1,000 verifications/s target, and against a floor measured in the same run:
tokenising the same claims and evidence (the scorer cannot be faster than reading its input once).

Usage: python benchmarks/builtin_speed.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

from evalrun.grading.builtin import BuiltinGrader, evidence, extract_claims, judge, segment, terms
from evalrun.grading.builtin.grader import clear_caches
from evalrun.types import GraderTrace

TARGET = 1000.0
ITEMS = Path(__file__).parent / "faithfulness_eval" / "items.jsonl"
_TOPICS = ("harbour", "railway", "library", "museum", "bridge", "school", "hospital", "market", "stadium",
           "airport", "theatre", "park")
_CITIES = ("Valletta", "Porto", "Gdansk", "Bergen", "Trieste", "Cork", "Ghent", "Tartu", "Split", "Bari")


def _clear() -> None:
    clear_caches()


def _long_context() -> tuple[list[str], list[str]]:
    chunks = []
    for k in range(60):
        topic, city = _TOPICS[k % len(_TOPICS)], _CITIES[k % len(_CITIES)]
        chunks.append(" ".join(
            f"The {topic} in {city} was rebuilt in {1900 + (k * 7 + j) % 120} after a storm damaged {j + 3} of its "
            f"{k + 10} sections, and the council approved {k + j} million euros for the work." for j in range(5)))
    claims = []
    for i in range(40):
        k = (i * 13) % 60
        topic, city = _TOPICS[k % len(_TOPICS)], _CITIES[k % len(_CITIES)]
        year = 1900 + (k * 7 + i % 5) % 120 + (i % 3 == 0)
        claims.append(f"The {topic} in {city} was rebuilt in {year} after storm damage.")
    return chunks, claims


def _time(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    """Best wall time over `repeat` cold runs, and the number of judgements per run."""
    best = float("inf")
    count = 0
    for _ in range(repeat):
        _clear()
        t0 = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - t0)
    return best, count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    grader = BuiltinGrader()
    items = [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines() if line]
    per_item = [(extract_claims(it["answer"], it.get("question")), it["context"]) for it in items]
    chunks, long_claims = _long_context()
    n_words = sum(len(c.split()) for c in chunks)
    warm: list[float] = []

    def qa() -> int:
        n = 0
        for claims, ctx in per_item:
            for c in claims:
                judge(c, (ctx,))
                n += 1
        return n

    def qa_via_grader() -> int:
        async def run() -> int:
            n = 0
            for claims, ctx in per_item:
                n += len(await grader.verify(claims, [ctx], GraderTrace("builtin")))
            return n
        return asyncio.run(run())

    def long_verify() -> int:
        return len(asyncio.run(grader.verify(long_claims, chunks, GraderTrace("builtin"))))

    def long_prepared() -> int:
        _clear()
        evidence.prepare(tuple(chunks))
        t0 = time.perf_counter()
        n = len(asyncio.run(grader.verify(long_claims, chunks, GraderTrace("builtin"))))
        warm.append(time.perf_counter() - t0)
        return n

    def prepare_only() -> int:
        evidence.prepare(tuple(chunks))
        return n_words

    def attribution() -> int:
        m = asyncio.run(grader.attribute(long_claims, chunks, GraderTrace("builtin")))
        return sum(len(r) for r in m)

    def floor() -> int:
        n = 0
        for claims, ctx in per_item:
            for s in segment.sentences(ctx):
                terms.tokenize(s)
            for c in claims:
                terms.tokenize(c)
                n += 1
        return n

    print(f"{'workload':<34}{'judgements':>11}{'seconds':>10}{'per second':>12}{'x target':>10}")
    floor_s, floor_n = _time(floor, args.repeat)
    for name, fn in (("qa+summaries (scorer)", qa), ("qa+summaries (BuiltinGrader.verify)", qa_via_grader),
                     ("long context: verify, cold", long_verify),
                     ("attribution 40 claims x 60 chunks", attribution)):
        secs, n = _time(fn, args.repeat)
        rate = n / secs
        print(f"{name:<34}{n:>11}{secs:>10.4f}{rate:>12,.0f}{rate / TARGET:>10.1f}")
    _time(long_prepared, args.repeat)
    secs = min(warm)
    rate = len(long_claims) / secs
    print(f"{'long context: verify, prepared':<34}{len(long_claims):>11}{secs:>10.4f}{rate:>12,.0f}"
          f"{rate / TARGET:>10.1f}")
    secs, n = _time(prepare_only, args.repeat)
    print(f"{'long context: preparation (words)':<34}{n:>11}{secs:>10.4f}{n / secs:>12,.0f}")
    print(f"{'floor: tokenising the same input':<34}{floor_n:>11}{floor_s:>10.4f}{floor_n / floor_s:>12,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
