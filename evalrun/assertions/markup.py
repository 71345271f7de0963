"""Markup assertions: is-xml, contains-xml, is-html, contains-html, with the standard library's parsers in place of
promptfoo's (etree rejects DTD entity tricks; HTML validity is promptfoo's heuristic)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register


def _has_path(root: ET.Element, path: list[str]) -> bool:
    """`root.child.grandchild` (fast-xml-parser object paths): first segment is the root tag."""
    if not path or path[0] != root.tag:
        return False
    node = root
    for seg in path[1:]:
        if seg.startswith("@_"):
            return seg[2:] in node.attrib
        found = node.find(seg)
        if found is None:
            return False
        node = found
    return True


def validate_xml(text: str, required: list[str] | None) -> tuple[bool, str]:
    if not text.strip():
        return False, "Output is empty"
    try:
        root = ET.fromstring(text.strip())  # noqa: S314 - etree expands no external entities
    except ET.ParseError as e:
        return False, f"XML parsing failed: {e}"
    missing = [r for r in required or [] if not _has_path(root, r.split("."))]
    if missing:
        return False, f"XML is missing required elements: {', '.join(missing)}"
    return True, "Output is well-formed XML" + (" with all required elements" if required else "")


_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)(?:\s[^<>]*?)?(/?)>")


def xml_candidates(text: str) -> list[tuple[int, int]]:
    """Spans of balanced <tag>...</tag> (or self-closing) fragments, outermost first."""
    stack: list[tuple[str, int]] = []
    spans: list[tuple[int, int]] = []
    for m in _TAG.finditer(text):
        closing, name, selfclose = m.group(1), m.group(2), m.group(3)
        if selfclose:
            spans.append((m.start(), m.end()))
        elif not closing:
            stack.append((name, m.start()))
        elif stack and stack[-1][0] == name:
            spans.append((stack.pop()[1], m.end()))
        else:
            stack.clear()
    return sorted(spans, key=lambda s: (s[0], -s[1]))


def contains_xml(text: str, required: list[str] | None) -> tuple[bool, str]:
    spans = xml_candidates(text)
    if not spans:
        return False, "No XML content found in the output"
    if any(validate_xml(text[start:end], required)[0] for start, end in spans):
        return True, "Output contains well-formed XML" + (" with all required elements" if required else "")
    return False, "No valid XML content found matching the requirements"


class _XmlBase(Assertion):
    value_hint = "give required element paths: `root.child, root.other` or a list"
    judge = staticmethod(validate_xml)

    def parse(self, value: Any) -> list[str] | None:
        if value is None or value == "":
            return None
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list):
            return [str(v) for v in value]
        if isinstance(value, dict) and isinstance(value.get("requiredElements"), list):
            return [str(v) for v in value["requiredElements"]]
        raise ValueError(f"{self.spec.type} value must be a string, a list or {{requiredElements: [...]}}")

    async def evaluate(self, ctx: AssertionContext) -> Score:
        return binary(*self.judge(ctx.output, self.value_of(ctx)))


@register("is-xml")
class IsXml(_XmlBase):
    """The whole output is well-formed XML (optionally with required elements).

    YAML keys: `value` (optional): required element paths such as `root.child` (the first segment is the root
    element; `@_name` names an attribute), as a comma-separated string, a list, or `{requiredElements: [...]}`.
    """


@register("contains-xml")
class ContainsXml(_XmlBase):
    """The output contains a well-formed XML fragment (optionally with required elements).

    YAML keys: `value` (optional): required element paths, as for is-xml.
    """

    judge = staticmethod(contains_xml)


HTML_ELEMENTS = frozenset("""
    html head title base link meta style body article section nav aside h1 h2 h3 h4 h5 h6 header footer address p
    hr pre blockquote ol ul li dl dt dd figure figcaption main div a em strong small s cite q dfn abbr ruby rt rp
    data time code var samp kbd sub sup i b u mark bdi bdo span br wbr img iframe embed object param picture source
    video audio track map area svg math script noscript canvas ins del table caption colgroup col tbody thead tfoot
    tr td th form label input button select datalist optgroup option textarea output progress meter fieldset legend
    details summary dialog menu slot template""".split())
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_WRAPPERS = frozenset({"html", "head", "body"})
_HEAD_CONTENT = frozenset({"base", "link", "meta", "noscript", "script", "style", "template", "title"})
_FOREIGN = frozenset({"svg", "math"})


class _HtmlScan(HTMLParser):
    """What an HTML5 parser (parse5, promptfoo's) would build, as far as validate_html needs it: a literal
    `<html>`/`<head>`/`<body>` counts only when the parser creates that element from it; text directly in an
    implicitly created body is "top-level text"."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.recognised = False
        self.top_text = False
        self.started = False          # any tag or text seen (the html element exists)
        self.head_made = False        # the head element exists
        self.body_made = False        # the body element exists
        self.body_literal = False     # ...and came from a literal <body>

    def _element(self, tag: str) -> None:
        if tag == "html":
            self.recognised |= not self.started
        elif tag == "head":
            self.recognised |= not self.head_made and not self.body_made
            self.head_made = True
        elif tag == "body":
            if not self.body_made:
                self.recognised = True
                self.body_literal = True
            self.body_made = True
        elif tag in _HEAD_CONTENT and not self.body_made:
            self.head_made = True
            self.recognised = True
        else:
            self.head_made = self.body_made = True
            self.recognised |= (tag in HTML_ELEMENTS and tag not in _FOREIGN) or "-" in tag
        self.started = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._element(tag)
        if tag not in _VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._element(tag)
        # HTML5 ignores `/>` on non-void HTML elements: the element stays open (not inside svg/math)
        if tag not in _VOID and tag not in _FOREIGN and not _FOREIGN.intersection(self.stack):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.started:
            if tag not in ("html", "head", "body", "br"):
                return  # ignored before the document starts
            # these end tags make the parser create html and head (and, except </head>, body) implicitly
            self.started = self.head_made = True
            self.body_made = self.body_made or tag != "head"
            return
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if not data.strip():
            return
        if all(t in _WRAPPERS for t in self.stack):
            self.started = self.head_made = True
            if not self.body_made:
                self.body_made = True
            if not self.body_literal:
                self.top_text = True


def validate_html(text: str) -> tuple[bool, str]:
    s = text.strip()
    if not s:
        return False, "Output is empty"
    if re.match(r"<\?xml", s, re.I):
        return False, "Output appears to be XML, not HTML"
    scan = _HtmlScan()
    scan.feed(s)
    scan.close()
    if scan.top_text:
        return False, "Output must be wrapped in HTML tags"
    if not scan.recognised:
        return False, "Output does not contain recognized HTML elements"
    return True, "Output is valid HTML"


_HTML_TAGS = (re.compile(r"<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?>"), re.compile(r"</[a-zA-Z][a-zA-Z0-9-]*\s*>"))
#: (weight, pattern) of the other HTML signals promptfoo counts
_HTML_SIGNALS = (
    (1, re.compile(r"<[a-zA-Z][a-zA-Z0-9-]*(?:\s[^>]*)?/>")), (1, re.compile(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);")),
    (2, re.compile(r"<!DOCTYPE\s+html", re.I)), (1, re.compile(r"<!--[^-]*(?:-[^-]+)*-->")),
    (1, re.compile(r"\s[a-zA-Z-]+=\s*[\"'][^\"']*[\"']")),
    (2, re.compile(r"<(html|head|body|div|span|p|a|img|h[1-6]|ul|ol|li|table|tr|td|th|form|input|button|"
                   r"script|style|link|meta|br|hr)\b", re.I)))


@register("is-html")
class IsHtml(Assertion):
    """The whole output is an HTML document or fragment.

    YAML keys: none. Fails on empty output, XML, text outside elements (unless inside a literal `<body>`), or
    no recognised HTML element.
    """

    takes_value = False

    async def evaluate(self, ctx: AssertionContext) -> Score:
        return binary(*validate_html(ctx.output))


@register("contains-html")
class ContainsHtml(Assertion):
    """The output contains HTML (at least two HTML signals: tags, entities, doctype, comments, attributes).

    YAML keys: none.
    """

    takes_value = False

    async def evaluate(self, ctx: AssertionContext) -> Score:
        tags = sum(bool(rx.search(ctx.output)) for rx in _HTML_TAGS)  # an opening and a closing tag count 2
        ok = tags + sum(w for w, rx in _HTML_SIGNALS if rx.search(ctx.output)) >= 2  # promptfoo's count
        return binary(ok, "Output contains HTML" if ok else "Output does not contain HTML")
