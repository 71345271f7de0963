"""Small inline SVG charts for the HTML reports (no library, no network). Pure: numbers in, SVG text out."""

from __future__ import annotations

from html import escape

PASS, FAIL, ERROR, BAR = "#2e7d32", "#c62828", "#b26a00", "#3f6fb5"


def histogram(bins: list[int], name: str, width: int = 240, height: int = 64) -> str:
    """Bars of score counts over [0, 1] in len(bins) equal bins, with 0 and 1 marked. One neutral colour:
    whether a score passes depends on each assertion's threshold, not on where the bar sits."""
    top = max(bins) or 1
    n = len(bins)
    bw = (width - 4) / n
    bars = []
    for i, count in enumerate(bins):
        h = 0 if count == 0 else max(1.0, (height - 16) * count / top)
        lo, hi = i / n, (i + 1) / n
        bars.append(f'<rect x="{2 + i * bw:.1f}" y="{height - 12 - h:.1f}" width="{bw - 1:.1f}" height="{h:.1f}" '
                    f'fill="{BAR}"><title>{lo:.1f}–{hi:.1f}: {count}</title></rect>')
    return (f'<svg class="chart" role="img" aria-label="score distribution of {escape(name)}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">{"".join(bars)}'
            f'<line x1="2" y1="{height - 11}" x2="{width - 2}" y2="{height - 11}" stroke="#999"/>'
            f'<text x="2" y="{height - 1}" font-size="9">0</text>'
            f'<text x="{width - 8}" y="{height - 1}" font-size="9">1</text></svg>')


def status_bar(passed: int, failed: int, errors: int, width: int = 320, height: int = 14) -> str:
    """One stacked bar: pass / fail / error shares."""
    total = passed + failed + errors or 1
    x = 0.0
    parts = []
    for count, colour, label in ((passed, PASS, "passed"), (failed, FAIL, "failed"), (errors, ERROR, "errors")):
        w = width * count / total
        if w > 0:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{colour}">'
                         f"<title>{count} {label}</title></rect>")
        x += w
    return (f'<svg class="chart statusbar" role="img" aria-label="pass fail error shares" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">{"".join(parts)}</svg>')


def delta_bars(items: list[tuple[str, float, bool]], width: int = 360, row: int = 16) -> str:
    """Horizontal bars of signed deltas (-1..1) around a centre line, one per named item: (name, delta, lower is
    better). A change for the better is green whichever its sign (a fall, for a lower-is-better metric)."""
    if not items:
        return ""
    label_w, value_w = 150, 44
    mid = label_w + (width - label_w - value_w) / 2
    half = (width - label_w - value_w) / 2 - 4
    rows = []
    for i, (name, delta, lower) in enumerate(items):
        y = i * row
        w = min(1.0, abs(delta)) * half
        x = mid if delta >= 0 else mid - w
        colour = PASS if (delta < 0 if lower else delta > 0) else FAIL
        name = name + (" ↓" if lower else "")
        rows.append(f'<text x="0" y="{y + 11}" font-size="10">{escape(name[:26])}</text>'
                    f'<rect x="{x:.1f}" y="{y + 3}" width="{max(w, 0.5):.1f}" height="{row - 6}" fill="{colour}">'
                    f"<title>{escape(name)}: {delta:+.3f}</title></rect>"
                    f'<text x="{width - 2}" y="{y + 11}" font-size="10" text-anchor="end">{delta:+.3f}</text>')
    height = row * len(items)
    return (f'<svg class="chart" role="img" aria-label="score deltas" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}">{"".join(rows)}'
            f'<line x1="{mid}" y1="0" x2="{mid}" y2="{height}" stroke="#999"/></svg>')
