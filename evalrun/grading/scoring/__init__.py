"""Pure scoring formulas (no I/O, no globals; docs/metrics.md): `claims` for the claim-pipeline (RAG) metrics,
`verdicts` for the judge-style ones, `deterministic` for Mastra's deterministic scorers."""
