"""Untrusted text in grader prompts: labelled blocks (`<<<CHUNK 2>>> ... <<<END CHUNK 2>>>`), with look-alike
delimiters inside the text neutralised first so a chunk cannot close its own block or open a fake one."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

#: Characters that render as nothing: removed first, so `<\u200b<<` cannot slip past as three `<`.
_INVISIBLE = re.compile("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
                        "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]")
_LEFT = r"(?:<|＜|﹤|‹|«|〈|〈|⟨|❮|❰|⧼|&lt;?|&#0*60;?|&#x0*3c;?)"
_RIGHT = r"(?:>|＞|﹥|›|»|〉|〉|⟩|❯|❱|⧽|&gt;?|&#0*62;?|&#x0*3e;?)"
#: A delimiter look-alike: three or more angle brackets in any script or spelling (entities included), or two
#: guillemets; whitespace between them does not hide them.
_LOOKALIKE = re.compile(rf"{_LEFT}(?:\s*{_LEFT}){{2,}}|{_RIGHT}(?:\s*{_RIGHT}){{2,}}|«\s*«|»\s*»", re.I)
_TOKEN = re.compile(rf"{_LEFT}|{_RIGHT}", re.I)


def neutralise(text: str) -> str:
    """Invisible characters removed, then every delimiter look-alike (`<<<`, `‹‹‹`, `﹤﹤﹤`, `&lt;&lt;&lt;`,
    mixed) rewritten as single `<`/`>` separated by ` ' `, which no fence contains."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFC", text))
    return _LOOKALIKE.sub(lambda m: " ' ".join(_plain(t) for t in _TOKEN.findall(m.group(0))), text)


def _plain(token: str) -> str:
    return ">" if re.fullmatch(_RIGHT, token, re.I) else "<"


def block(label: str, text: str) -> str:
    """One delimited block: `<<<LABEL>>>`, the neutralised text, `<<<END LABEL>>>`."""
    label = re.sub(r"[^A-Za-z0-9 _-]", "", label).upper() or "TEXT"
    return f"<<<{label}>>>\n{neutralise(text)}\n<<<END {label}>>>"


def numbered(kind: str, texts: Sequence[str]) -> str:
    """Blocks `<<<KIND 0>>>`, `<<<KIND 1>>>`, ... (0-based indices, as the JSON replies use)."""
    return "\n\n".join(block(f"{kind} {i}", t) for i, t in enumerate(texts))
