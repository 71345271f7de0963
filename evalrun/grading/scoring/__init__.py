"""Pure scoring formulas (no I/O, no globals): judgements in, numbers out. See docs/metrics.md.

    claims         the claim-pipeline (RAG) metrics: faithfulness, hallucination, noise sensitivity, context
                   relevance / precision / recall, noise robustness, and their weights
    verdicts       the judge-style metrics (Mastra's LLM scorers, promptfoo's model-graded types)
    deterministic  Mastra's deterministic scorers (string similarity, keywords, sentiment, tool calls)
"""
