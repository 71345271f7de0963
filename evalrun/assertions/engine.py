"""Builds handlers from specs and turns handler Scores into AssertionResults (owner: assertion library).

    build(spec) -> Assertion                 config time; ConfigError for unknown types (did-you-mean) and bad args
    async evaluate(spec, ctx) -> AssertionResult
        renders nothing itself (ctx.value/config are rendered), applies the assertion transform, not-,
        weight, metric; a GraderError/AssertionRuntimeError becomes result.error (never inverted by not-)
    aggregate(test, results) -> (status, pass, score, reason)
        promptfoo's rules: weighted mean score; pass = all pass (weight 0 never fails) or score >= test threshold;
        any result with error -> status "error".
"""
