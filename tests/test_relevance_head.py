"""The learned relevance head (issue 34; measured in benchmarks/grading, not shipped): weights, numpy = torch, no torch."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks.grading import relevance_model
from benchmarks.grading.relevance_model import RelevanceHead, esim_forward, load_weights
from evalrun.grading import embeddings

#: sha256 of benchmarks/grading/relevance_head.npz as scripts/train_relevance_head.py wrote it.
WEIGHTS_SHA256 = "c2644bd6c81157ca3a5f0dfdc0cccc3efe8fce62229fc066eec91f11fe4e16d3"
#: The torch model's logits on scripts/relevance_head_torch.FIXED_PAIRS (written by the training run, fixed.json).
FIXED = [
    ('How long do refunds take?',
     'Refunds reach your card within five business days.',
     [-0.768837, 0.996432]),
    ('How long do refunds take?',
     'Refunds are not available for gift cards.',
     [0.307392, 0.260650]),
    ('Who wrote the novel?',
     'The book was written by Jane Austen in 1813.',
     [-0.212962, 0.239772]),
]


def test_shipped_weights_digest() -> None:
    data = relevance_model.WEIGHTS_FILE.read_bytes()
    assert len(data) <= 10 * 1024 * 1024
    assert hashlib.sha256(data).hexdigest() == WEIGHTS_SHA256


def test_numpy_forward_equals_torch_logits() -> None:
    weights = load_weights()
    for question, passage, expected in FIXED:
        a, b = embeddings.token_states([question, passage])
        assert np.allclose(esim_forward(weights, a, b), expected, atol=2e-3)


def test_probs_rank_the_answering_passage_first_and_cache_texts() -> None:
    head = RelevanceHead(cache_size=2)
    question, answering, other = FIXED[0][0], FIXED[0][1], FIXED[1][1]
    p = head.probs(question, [answering, other])
    assert p.shape == (2,) and np.all((p >= 0) & (p <= 1))
    assert p[0] > 0.5 > p[1]
    assert np.allclose(head.probs(question, [answering]), p[:1], atol=1e-6)
    assert head.probs(question, []).shape == (0,)
    assert len(head._cache) <= 2  # noqa: SLF001 - the LRU bound


def test_loads_and_scores_without_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None\n"
            "from benchmarks.grading.relevance_model import RelevanceHead\n"
            "print(float(RelevanceHead().probs('How long do refunds take?', ['Refunds take five days.'])[0]))")
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert 0.0 <= float(out.stdout) <= 1.0
