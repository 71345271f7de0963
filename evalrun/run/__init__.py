"""The run engine: cases in, results streamed to disk, a tally for the reports (runner.Runner)."""
