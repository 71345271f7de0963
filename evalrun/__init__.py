"""evalrun: a YAML-configured assertion engine for LLM output, with exact, auditable graded RAG metrics."""

from __future__ import annotations

__version__ = "0.1.0"
#: The name on the package index (`pip install evalrun-llm`): "evalrun" there is another project (docs/install.md).
DISTRIBUTION = "evalrun-llm"
__all__ = ["DISTRIBUTION", "__version__"]
