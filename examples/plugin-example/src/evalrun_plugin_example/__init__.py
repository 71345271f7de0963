"""An evalrun assertion plugin: `is-palindrome`."""

from __future__ import annotations

import re
from typing import Any

from evalrun.assertions import Assertion, AssertionContext, Score


class IsPalindrome(Assertion):
    """The output reads the same backwards, ignoring case, spaces and punctuation.

    YAML keys: `value` (optional): `{min_length: N}`, the fewest letters the output must have (default 1).
    """

    summary = "output is a palindrome (letters and digits only, ignoring case)"
    value_hint = "write `value: {min_length: 3}` or omit value"

    def parse(self, value: Any) -> int:
        """Validate the YAML value (called at load time for static values, per case for templated ones)."""
        if value is None:
            return 1
        if not isinstance(value, dict) or set(value) - {"min_length"}:
            raise ValueError("is-palindrome takes only {min_length: N}")
        n = value.get("min_length", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"min_length must be a positive integer, got {n!r}")
        return n

    async def evaluate(self, ctx: AssertionContext) -> Score:
        """Return the un-negated verdict; evalrun applies `not-`, weight, metric and error handling."""
        min_length = self.value_of(ctx)
        letters = re.sub(r"[\W_]", "", ctx.output.lower())
        ok = len(letters) >= min_length and letters == letters[::-1]
        return Score(ok, 1.0 if ok else 0.0, f"{ctx.output[:40]!r} {'is' if ok else 'is not'} a palindrome")
