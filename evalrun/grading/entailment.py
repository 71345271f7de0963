"""A learned entailment head: does a premise support, refute or not decide a hypothesis (issue 34)?

An ESIM-style head over the frozen token states (`last_hidden_state`) of the offline MiniLM model that the default
install ships (embeddings.token_states): per-token projection 384 -> 192, cross-attention both ways,
[a, ã, a - ã, a * ã] -> FFN, mean + max pooling per side, [va, vb, |va - vb|, va * vb] -> 192 -> 3 classes.
Trained with torch by scripts/train_entailment_head.py (data, splits, licences and figures in its docstring and in
benchmarks/grading/README.md); at run time numpy only, weights from package data `data/entail_head.npz`.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources

import numpy as np

from evalrun.grading import embeddings

WEIGHTS = "data/entail_head.npz"
CLASSES = ("supported", "refuted", "nei")
#: Token states kept per EntailmentHead, by text. A run's cases often share one context: encoding a sentence
#: costs ~13 ms batched (43 ms alone) on one thread, the head itself ~3 ms per pair, so the context's sentences
#: are encoded once per run, not once per claim.
CACHE_SIZE = 4096


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread (threadpoolctl, where installed): the head's matrices are small, and on a shared 2-core
    machine OpenBLAS's threads made a pair 100 ms instead of 6 ms (measured; OPENBLAS_NUM_THREADS=1 does the same)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(1, user_api="blas"):
        yield


@cache
def load_weights() -> dict[str, np.ndarray]:
    """The shipped weights (float32 arrays named as the torch module's layers: proj, ffn, cls1, cls2)."""
    with resources.files("evalrun").joinpath(WEIGHTS).open("rb") as f, np.load(f) as npz:
        return {k: npz[k].astype(np.float32) for k in npz.files}


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    x = x - x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _pool(w: dict[str, np.ndarray], a: np.ndarray, aligned: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Mean and max over the real tokens of the FFN over [a, ã, a - ã, a * ã]: (batch, 2 * hidden)."""
    m = np.maximum(np.concatenate([a, aligned, a - aligned, a * aligned], -1) @ w["ffn.weight"] + w["ffn.bias"], 0)
    mean = (m * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    top = np.where(mask[..., None] > 0, m, -1e4).max(1)
    return np.concatenate([mean, top], -1)


def head_probs(w: dict[str, np.ndarray], premises: Sequence[np.ndarray], hypothesis: np.ndarray) -> np.ndarray:
    """[p_supported, p_refuted, p_nei] of each premise's token states against the hypothesis's: (n, 3)."""
    n, width = len(premises), max(len(p) for p in premises)
    x = np.zeros((n, width, hypothesis.shape[1]), dtype=np.float32)
    xm = np.zeros((n, width), dtype=np.float32)
    for r, p in enumerate(premises):
        x[r, :len(p)] = p
        xm[r, :len(p)] = 1
    a = x @ w["proj.weight"] + w["proj.bias"]  # (n, La, h)
    b = np.broadcast_to(hypothesis @ w["proj.weight"] + w["proj.bias"], (n, *hypothesis.shape[:1],
                                                                         w["proj.bias"].shape[0]))
    e = a @ b.transpose(0, 2, 1) / np.sqrt(a.shape[-1])  # (n, La, Lb)
    a_aligned = _softmax(e, 2) @ b  # the hypothesis has no padding
    b_aligned = _softmax(np.where(xm[:, :, None] > 0, e, -1e4), 1).transpose(0, 2, 1) @ a
    ym = np.ones(b.shape[:2], dtype=np.float32)
    va, vb = _pool(w, a, a_aligned, xm), _pool(w, b, b_aligned, ym)
    h = np.maximum(np.concatenate([va, vb, np.abs(va - vb), va * vb], -1) @ w["cls1.weight"] + w["cls1.bias"], 0)
    return _softmax(h @ w["cls2.weight"] + w["cls2.bias"], 1)


class EntailmentHead:
    """`probs(premises, hypothesis)`: per premise [p_supported, p_refuted, p_nei]; token states cached by text."""

    def __init__(self, cache_size: int = CACHE_SIZE) -> None:
        self.weights = load_weights()
        self.cache_size = cache_size
        self._states: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()  # cases are graded in several worker threads at once

    def states(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Token states of `texts`, encoding (in one batch) only those not cached."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._states))
        encoded = embeddings.token_states(missing) if missing else []
        with self._lock:
            for text, s in zip(missing, encoded, strict=True):
                self._states[text] = s
            out = []
            for t in texts:
                self._states.move_to_end(t)
                out.append(self._states[t])
            while len(self._states) > self.cache_size:
                self._states.popitem(last=False)
        return out

    def probs(self, premises: Sequence[str], hypothesis: str) -> np.ndarray:
        """[p_supported, p_refuted, p_nei] per premise against `hypothesis`: shape (len(premises), 3)."""
        if not premises:
            return np.zeros((0, 3), dtype=np.float32)
        *prem, hyp = self.states([*premises, hypothesis])
        with one_blas_thread():
            return head_probs(self.weights, prem, hyp)


@cache
def shared() -> EntailmentHead:
    """The process's head: one token-state cache for every case of a run."""
    return EntailmentHead()
