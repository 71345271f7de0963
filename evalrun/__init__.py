"""evalrun: a YAML-configured assertion engine for LLM output, with exact, auditable graded RAG metrics."""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
