"""Colour that does not depend on seeing red against green, and text that meets WCAG 2.2 AA contrast.

Every colour the figures use comes from viz/palette.py (a scan of the source checks that); here
the colours that mean different things in one figure are simulated for deuteranopia, protanopia
and tritanopia (Machado et al. 2009 at full severity, colorspacious) and must stay apart by
ΔE ≥ 15 in CAM02-UCS (about 10 just-noticeable differences; Okabe & Ito's blue and orange are
~50 apart), and every sequential colour scale must stay monotone in lightness J' under each
simulation, so it reads as "more" to everyone. The browser half (axe-core, keyboard, screen
reader names) is in tests/test_browser_accessibility.py."""
from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from plotly.colors import get_colorscale, sample_colorscale

from scripts.accessibility import MIN_DELTA_E, VISIONS, rgb1, seen
from viz import palette as P

ROOT = Path(__file__).resolve().parents[1]
@pytest.mark.parametrize("meaning", list(P.MEANINGS))
def test_colours_of_different_meaning_stay_apart_for_every_colour_vision(meaning):
    colours = P.MEANINGS[meaning]
    for vision in VISIONS:
        j = seen(colours, vision)
        for (a, ca), (b, cb) in itertools.combinations(enumerate(colours), 2):
            d = float(np.linalg.norm(j[a] - j[b]))
            assert d >= MIN_DELTA_E, f"{meaning}: {ca} and {cb} are ΔE {d:.1f} apart for {vision}"


def test_red_against_green_fails_the_check():
    """The check can fail: the Why page's old pair (green raised, red lowered), far apart for most
    people, is too close for deuteranopes."""
    assert np.linalg.norm(np.subtract(*seen(["#16963C", "#D62728"], "deuteranomaly"))) < MIN_DELTA_E
    assert np.linalg.norm(np.subtract(*seen(["#16963C", "#D62728"], "normal"))) > MIN_DELTA_E


def lightness(scale, vision: str, n: int = 33) -> np.ndarray:
    return seen(sample_colorscale(scale, np.linspace(0, 1, n).tolist()), vision)[:, 0]


@pytest.mark.parametrize("name", P.SEQUENTIAL + P.MASK_SCALES)
def test_sequential_scales_are_monotone_in_lightness_for_every_colour_vision(name):
    for vision in VISIONS:
        d = np.diff(lightness(get_colorscale(name), vision))
        assert (d > 0).all() or (d < 0).all(), f"{name} for {vision}: lightness goes up and down"


def test_the_diverging_scale_darkens_evenly_from_its_centre_and_its_halves_stay_apart():
    for vision in VISIONS:
        j = lightness(P.DIVERGING, vision)
        assert (np.diff(j[:17]) > 0).all() and (np.diff(j[16:]) < 0).all(), vision
        lo, hi = seen([P.DIVERGING[1][1], P.DIVERGING[-2][1]], vision)
        assert np.linalg.norm(lo - hi) >= MIN_DELTA_E, vision
    assert lightness("Jet", "normal").argmax() not in (0, 32)  # the check sees a scale that is not monotone


def contrast(fg: str, bg: str) -> float:
    """WCAG 2.2 contrast ratio of two sRGB colours."""
    def lum(c):
        x = rgb1(c)
        x = np.where(x <= 0.04045, x / 12.92, ((x + 0.055) / 1.055) ** 2.4)
        return float(x @ [0.2126, 0.7152, 0.0722])

    a, b = sorted((lum(fg), lum(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def over_white(rgb: tuple[int, int, int], alpha: float) -> str:
    return "#%02X%02X%02X" % tuple(round(alpha * c + (1 - alpha) * 255) for c in rgb)


def test_text_colours_meet_4_5_to_1_on_white_and_on_the_darkest_shade_they_sit_on():
    for colour in (P.TEXT, P.MUTED_TEXT, P.NOTE_TEXT):
        assert contrast(colour, "#FFFFFF") >= 4.5, colour
    darkest = over_white(P.SHADE, P.SHADE_MAX)  # a sentence row with score 1
    for colour in (P.TEXT, P.NOTE_TEXT):
        assert contrast(colour, darkest) >= 4.5, colour
    for rgb in (P.RAISED, P.LOWERED):  # a word shaded at its strongest (viz.explain: alpha 0.8), black text
        assert contrast("#000000", over_white(rgb, 0.8)) >= 4.5, rgb
    assert contrast("#888888", "#FFFFFF") < 4.5  # the grey the document used before fails


def test_statuses_differ_without_colour_and_bars_are_outlined_at_3_to_1(trace):
    """Each status has its own symbol and hatching (pairs all distinct), named in the legend; the
    summary chart's bars are outlined ≥ 3:1 on white (WCAG 1.4.11: the light ones' fill is not);
    Plotly's text colour (titles, ticks, annotations) is ≥ 4.5:1 on the white page."""
    import plotly.io as pio

    from viz import summary

    marks = [(P.STATUS_SYMBOLS[k], P.STATUS_PATTERNS[k]) for k in P.STATUS_COLORS]
    assert len(set(marks)) == len(marks)
    fig = summary.score_bars(trace.summary)
    for bar in fig.data:
        assert contrast(bar.marker.line.color, "#FFFFFF") >= 3.0 and bar.marker.line.width >= 1
    for bar in fig.data[1:]:  # the legend entries say the symbol too
        k = next(k for k, v in summary.STATUS_NAMES.items() if bar.name.endswith(v))
        assert bar.name.startswith(P.STATUS_SYMBOLS[k]) and bar.marker.pattern.shape == P.STATUS_PATTERNS[k]
    assert contrast(P.STATUS_COLORS["below-k"], "#FFFFFF") < 3.0  # why the outline is needed
    assert contrast(pio.templates["plotly"].layout.font.color, "#FFFFFF") >= 4.5


COLOUR_LITERAL = re.compile(r"#[0-9A-Fa-f]{6}\b|#[0-9A-Fa-f]{3}\b|rgba?\(\s*\d")
SCALE_NAME = re.compile(r"colorscale=\"(\w+?)(_r)?\"")


def test_every_colour_in_the_figures_and_pages_comes_from_the_palette():
    """A colour written anywhere else would escape the checks above."""
    files = [p for d in ("viz", "ui", "pages") for p in (ROOT / d).glob("*.py") if p.name != "palette.py"]
    files.append(ROOT / "app.py")
    stray = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in files
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if COLOUR_LITERAL.search(line)]
    assert not stray, "\n".join(stray)
    scales = {m.group(1) for p in files for m in SCALE_NAME.finditer(p.read_text(encoding="utf-8"))}
    assert scales <= set(P.SEQUENTIAL) | set(P.MASK_SCALES), scales - set(P.SEQUENTIAL) - set(P.MASK_SCALES)


def test_a_chart_as_text_says_what_it_draws(trace):
    """viz.alt reads the figure: the shown head's strongest cells (its true weights, to the 1/10,000
    the map sends), never a hidden head's; every bar of the score chart with its status mark."""
    from viz import alt, attention, summary

    fig = attention.token_heatmap(trace, 2, 3)
    title, cols, rows = alt.describe(fig)
    a = trace.bert_attention[2, 3].astype(np.float64)
    assert title.startswith("BERT layer 3, head 4") and cols == ["query token (attending)", "key token (attended to)",
                                                                   "value"]
    assert float(rows[0][2]) == pytest.approx(a.max(), abs=1e-4)
    assert [float(r[2]) for r in rows] == sorted((float(r[2]) for r in rows), reverse=True)
    i, j = np.unravel_index(a.argmax(), a.shape)
    assert rows[0][:2] == [f"{i + 1} {trace.tokens[i]}", f"{j + 1} {trace.tokens[j]}"]
    other = trace.bert_attention[2, 0].astype(np.float64).max()
    if other > a.max() + 1e-3:  # a hidden head's larger weight is not reported
        assert float(rows[0][2]) < other
    _, cols, rows = alt.describe(summary.score_bars(trace.summary))
    assert cols == ["bar", "value", "label", "note"] and len(rows) == len(trace.summary.sentences)
    assert sum(r[2].startswith("★") for r in rows) == len(trace.summary.selected)
    assert all(r[3] for r in rows)  # each sentence's reason, which the hover alone said (issue 52)
    html_table = alt.table_html(attention.token_heatmap(trace, 0, 0))
    assert html_table.count("<tr>") == 9 and "<caption" in html_table  # a header and 8 cells


def test_every_chart_of_every_page_has_plain_words():
    """Issue 50: each chart the pages draw (plot's key, head_map's chart key) is of a kind with a
    paragraph for someone who has never seen attention; each paragraph is one paragraph and names
    what a map is not where it matters (attention is where the model looked)."""
    import ast

    from viz.plain import KINDS, PLAIN, kind

    keys = set()
    for path in sorted((ROOT / "pages").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            if node.func.id == "plot":
                key = next((k.value for k in node.keywords if k.arg == "key"), None)
            elif node.func.id == "head_map" and len(node.args) >= 4:
                key = node.args[3]
            else:
                continue
            text = key.value if isinstance(key, ast.Constant) else (
                key.values[0].value if isinstance(key, ast.JoinedStr) and isinstance(key.values[0], ast.Constant) else None)
            keys.add((path.name, text))
    assert len(keys) > 30 and all(text for _, text in keys), keys
    missing = [(p, k) for p, k in keys if kind(k) not in PLAIN]
    assert not missing, missing
    assert set(KINDS.values()) == set(PLAIN) and all("\n" not in t and 150 < len(t) < 800 for t in PLAIN.values())
    assert all("not what it used" in PLAIN[k] for k in ("attention", "heads", "sentences", "encoder"))
