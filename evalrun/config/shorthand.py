"""promptfoo's CSV `__expected` shorthand -> an assertion mapping (`contains:x`, `rouge-n(0.8):y`, ...).

    from_shorthand(text, type_names, file=, line=, key=) -> dict    the mapping asserts.build_list then builds

A prefix naming a registered type becomes that type; a promptfoo type evalrun lacks is a ConfigError at the
cell's line; anything else means `equals`.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from evalrun.config import files
from evalrun.errors import ConfigError

_LIST_TYPES = frozenset({"contains-all", "contains-any", "icontains-all", "icontains-any"})
_RAW_VALUE_TYPES = frozenset({"contains-json", "is-json", "is-xml", "contains-xml", "is-sql", "contains-sql"})


@lru_cache(maxsize=8)
def _shorthand_regex(names: tuple[str, ...]) -> re.Pattern[str]:
    alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"^(not-)?({alts})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")


#: promptfoo assertion types that evalrun does not have (a CSV `__expected` prefix naming one is an error, not
#: a silent `equals`), with what to use instead where there is something.
PROMPTFOO_ONLY_TYPES: dict[str, str] = {
    "search-rubric": "use `llm-rubric`",
    "max-score": "", "classifier": "", "moderation": "", "perplexity": "",
    "perplexity-score": "", "guardrails": "", "webhook": "", "ruby": "", "gleu": "", "meteor": "",
    "is-valid-function-call": "use `is-valid-openai-tools-call`",
    "conversation-relevance": "", "tool-call-f1": "", "trace-span-count": "", "trace-span-duration": "",
    "trace-error-spans": "",
}
_TYPE_LIKE = re.compile(r"^(not-)?([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(\(\d+(?:\.\d+)?\))?:")


def _unsupported_prefix(s: str, type_names: tuple[str, ...], *, file: str | None, line: int,
                        key: str | None) -> None:
    """Raise for `word:` / `word(N):` naming a promptfoo type evalrun lacks, or `word(N):` misspelling one of ours.

    Anything else (`Time: 10:30`, `Paris: the capital`) is left to mean `equals`.
    """
    from evalrun.suggest import did_you_mean

    m = _TYPE_LIKE.match(s)
    if not m:
        return
    negate, word, thr = m.group(1) or "", m.group(2), m.group(3)
    if word in PROMPTFOO_ONLY_TYPES:
        advice = PROMPTFOO_ONLY_TYPES[word]
        if advice.startswith(word):
            raise ConfigError(f"__expected {s[:60]!r}: {advice}", file=file, line=line, key=key,
                              hint="check the output with `llm-rubric:`, `rouge-n(0.5):` or `levenshtein(5):`")
        raise ConfigError(f"__expected {s[:60]!r}: {negate}{word} is a promptfoo assertion type that evalrun "
                          "does not support", file=file, line=line, key=key,
                          hint=advice or "run `evalrun list` to see every assertion type")
    if thr and type_names:
        hint = did_you_mean(word, type_names)
        if hint:
            raise ConfigError(f"__expected {s[:60]!r}: unknown assertion type {negate + word!r}", file=file,
                              line=line, key=key, hint=hint)


def from_shorthand(expected: str, type_names: tuple[str, ...], *, file: str | None = None, line: int = 0,
                   key: str | None = None) -> dict[str, Any]:
    """promptfoo's `__expected` shorthand -> an assertion mapping (`contains:x`, `rouge-n(0.8):y`, ...).

    A prefix naming a promptfoo type that evalrun lacks (`similar(0.8):x`) is a ConfigError at `file`/`line`;
    a value whose start is not a known type means `equals`.
    """
    s = expected
    for prefix in ("javascript:", "fn:", "eval:"):
        if s.startswith(prefix):
            return {"type": "javascript", "value": s[len(prefix):].strip()}
    for prefix in ("grade:", "llm-rubric:"):
        if s.startswith(prefix):
            return {"type": "llm-rubric", "value": s[len(prefix):].strip()}
    if s.startswith("python:"):
        return {"type": "python", "value": s[len("python:"):].strip()}
    if files.is_ref(s):
        path, _ = files.split_ref(s)
        if path.endswith(".py"):
            return {"type": "python", "value": s}
        if path.endswith((".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")):
            return {"type": "javascript", "value": s}
    m = _shorthand_regex(type_names).match(s) if type_names else None
    if not m:
        _unsupported_prefix(s, type_names, file=file, line=line, key=key)
        return {"type": "equals", "value": s}
    negate, type_, thr, value = m.groups()
    out: dict[str, Any] = {"type": f"{negate or ''}{type_}"}
    if value is not None:
        if type_ in _LIST_TYPES:
            out["value"] = [v.strip() for v in value.split(",")]
        elif type_ in _RAW_VALUE_TYPES:
            out["value"] = value
        else:
            out["value"] = value.strip()
    if thr is not None:
        out["threshold"] = float(thr)
    return out
