"""The learned entailment head (evalrun/grading/entailment.py): shipped weights, numpy = torch, batching, cache."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from evalrun.grading import embeddings, entailment

ROOT = Path(__file__).resolve().parents[1]
#: printed by `scripts/train_entailment_head.py export`; also in benchmarks/grading/README.md
DIGEST = "0f1ca080aceb1cc8e027dc4cbb1388ac497e23aa30ffd3c1661904ac04e1aa0d"
#: scripts/train_entailment_head.py PROBE and the torch model's probabilities on them (`export` prints them)
PROBE = (("Digital downloads and gift cards are non-refundable.", "Gift cards can't be refunded."),
         ("Accidental damage is not covered by the warranty.", "The warranty covers accidental damage."),
         ("Standard shipping takes 3 to 5 business days and costs $4.99.", "Shipping costs $10."))
TORCH_PROBS = ((0.94207, 0.054591, 0.003339), (1.6e-05, 0.999984, 0.0), (0.508632, 0.287534, 0.203835))

pytestmark = pytest.mark.skipif(not embeddings.offline_available(), reason="the offline MiniLM model is not installed")


def test_shipped_weights_are_the_recorded_ones() -> None:
    data = resources.files("evalrun").joinpath(entailment.WEIGHTS).read_bytes()
    assert len(data) <= 10 * 1024 * 1024
    assert hashlib.sha256(data).hexdigest() == DIGEST
    assert DIGEST in (ROOT / "benchmarks" / "grading" / "README.md").read_text(encoding="utf-8")


def test_numpy_head_gives_the_torch_probabilities() -> None:
    head = entailment.EntailmentHead()
    got = np.array([head.probs([premise], claim)[0] for premise, claim in PROBE])
    np.testing.assert_allclose(got, np.array(TORCH_PROBS), atol=2e-3)


def test_loads_and_runs_without_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None\n"
            "from evalrun.grading.entailment import EntailmentHead\n"
            "p = EntailmentHead().probs(['Refunds are issued within 30 days.'], 'Refunds take a month.')\n"
            "assert p.shape == (1, 3), p.shape\nassert 'torch' not in [m for m in sys.modules if sys.modules[m]]\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_batched_premises_give_each_premise_its_own_row() -> None:
    head = entailment.EntailmentHead()
    premises = [p for p, _ in PROBE]
    claim = PROBE[0][1]
    batched = head.probs(premises, claim)
    assert batched.shape == (3, 3)
    np.testing.assert_allclose(batched.sum(1), 1.0, atol=1e-5)
    for k, premise in enumerate(premises):  # padding of the shorter premises changes nothing
        np.testing.assert_allclose(batched[k], head.probs([premise], claim)[0], atol=1e-5)
    assert head.probs([], claim).shape == (0, 3)


def test_each_text_is_encoded_once_and_the_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[str] = []
    real = embeddings.token_states

    def counting(texts: list[str]) -> list[np.ndarray]:
        encoded.extend(texts)
        return real(texts)

    monkeypatch.setattr(embeddings, "token_states", counting)
    head = entailment.EntailmentHead(cache_size=3)
    context = ["Gift cards are non-refundable.", "Shipping is free over $50."]
    head.probs(context, "Gift cards can't be refunded.")
    head.probs(context, "Shipping costs nothing above $50.")
    assert encoded == [*context, "Gift cards can't be refunded.", "Shipping costs nothing above $50."]
    head.probs(context, "Shipping costs nothing above $50.")  # all cached: nothing encoded
    head.probs(context, "Gift cards can't be refunded.")  # the least recently used text, evicted (3 kept)
    assert encoded[4:] == ["Gift cards can't be refunded."]
