"""Every colour the figures use, in one place, chosen to survive colour-vision deficiency.

Categorical colours are Okabe & Ito's (2008) colour-blind-safe set; signed quantities (a word
raised or lowered a score, a change, a fraction restored) run on one blue–orange diverging scale,
never red against green (1 man in 12 cannot tell those apart). ``MEANINGS`` lists, per figure, the
colours that stand for different things; tests/test_accessibility.py simulates deuteranopia,
protanopia and tritanopia (Machado et al. 2009, via colorspacious) and checks that they stay
apart, and that every sequential scale stays monotone in lightness. Statuses are also told apart
without colour (a symbol or a pattern: viz.summary)."""
from __future__ import annotations

# Okabe & Ito, "Color Universal Design" (2008)
BLUE, ORANGE, VERMILLION, SKY, BLACK = "#0072B2", "#E69F00", "#D55E00", "#56B4E9", "#000000"
LIGHT_BLUE, LIGHT_GREY, MID_GREY, DARK_GREY = "#8EBFE3", "#E6E6E6", "#8C8C8C", "#4D4D4D"

# text and marks drawn over the page (white) or a figure; contrast checked in tests/test_accessibility.py
TEXT, MUTED_TEXT, NOTE_TEXT = "#222222", "#595959", "#5C2E00"  # ≥ 4.5:1 on white; TEXT, NOTE_TEXT on SHADE too
ERROR_TEXT = "#A93226"  # 6.6:1 on white: the theme's primary colour (.streamlit/config.toml)
WHITE = "#FFFFFF"  # text on BLUE (5.1:1): the shown head's button
SHADE, SHADE_MAX = (0, 114, 178), 0.48  # a sentence's row in the document, by score: BLUE at alpha ≤ SHADE_MAX
CLEAR, LABEL_BG, SENTENCE_LINE = "rgba(0,0,0,0)", "rgba(255,255,255,0.8)", "rgba(255,255,255,0.35)"

# signed: positive (raised the score) blue, negative (lowered it) orange; the diverging scale's ends
RAISED, LOWERED = (33, 102, 172), (179, 88, 6)
DIVERGING = [[0.0, "#7F3B08"], [0.15, "#B35806"], [0.3, "#E08214"], [0.42, "#FDB863"], [0.5, "#F7F7F7"],
             [0.58, "#92C5DE"], [0.7, "#4393C3"], [0.85, "#2166AC"], [1.0, "#053061"]]  # ColorBrewer PuOr/RdBu halves

# sequential scales offered for weights (light to dark or dark to light, monotone in lightness)
SEQUENTIAL = ("Viridis", "Blues", "Magma", "Cividis", "Greys", "YlOrRd")
SCALES = ("sqrt", "log", "linear")  # how a weight maps to the scale (viz.common.weight_colorscale): the contrast
MASK_SCALES = ("Reds", "Blues")  # masks: 0 … −10000 added, 0/1 kept

# a sentence's status (analysis.explain.selection): colour and, for those who cannot see it, a symbol
STATUS_COLORS = {"selected": BLUE, "trigram-blocked": ORANGE, "below-k": LIGHT_BLUE, "too-short": LIGHT_GREY,
                 "not-fed": DARK_GREY}
STATUS_SYMBOLS = {"selected": "★", "trigram-blocked": "⊘", "below-k": "", "too-short": "✕", "not-fed": "✂"}
STATUS_PATTERNS = {"selected": "", "trigram-blocked": "/", "below-k": "", "too-short": "x", "not-fed": "."}

# What if's patching components, grouped
GROUP_COLORS = {"position row": ORANGE, "sentence vector": BLUE, "BERT layers": SKY, "encoder layers": DARK_GREY,
                "encoder heads": MID_GREY, "all": BLACK, "none": LIGHT_GREY}  # the 7 most apart under CVD
SEGMENT_COLORS = ("#FDD49E", BLUE)  # segment id 0 / 1

# the Why page's attribution methods (analysis.attribution), and random orders (dashed besides)
METHOD_COLORS = {"grad-input": BLUE, "integrated-gradients": ORANGE, "occlusion": VERMILLION, "random": MID_GREY}

# the colours that must stay apart, per figure that uses them together
MEANINGS = {
    "sentence status (summary chart, document, sentence encoder bars)": list(STATUS_COLORS.values()),
    "word attribution (raised / lowered)": ["#%02X%02X%02X" % RAISED, "#%02X%02X%02X" % LOWERED],
    "diverging scale ends": [DIVERGING[1][1], DIVERGING[-2][1]],
    "position chart (real / neutral score)": [BLUE, ORANGE],
    "patching components": list(GROUP_COLORS.values()),
    "head ablation (summary unchanged / changes)": [BLUE, VERMILLION],
    "fine-tuning (before / after)": [LIGHT_BLUE, VERMILLION],
    "padding row (real / padded key)": [BLUE, VERMILLION],
    "learn (recomputed / captured)": [BLUE, VERMILLION],
    "segment ids (A / B)": list(SEGMENT_COLORS),
    "attribution methods (faithfulness curves)": list(METHOD_COLORS.values()),
}

# Streamlit's chart theme: its Plotly template's placeholder colours (#000001…#000040) → the colours
# Streamlit 1.67's browser code puts in their place for this app's light theme (.streamlit/config.toml).
# ui.figures fills them in on the server (the browser's own swap is slow); not our choice of colours:
# tests/test_browser_chart_theme.py reads them back from Chromium.
STREAMLIT_THEME = {
    **dict(zip((f"#{i:06d}" for i in range(1, 11)), (  # categorical
        "#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0", "#d5dae5"))),
    **dict(zip((f"#{i:06d}" for i in range(11, 21)), (  # sequential
        "#e4f5ff", "#c7ebff", "#a6dcff", "#83c9ff", "#60b4ff", "#3d9df3", "#1c83e1", "#0068c9", "#0054a3", "#004280"))),
    **dict(zip((f"#{i:06d}" for i in range(21, 31)), (  # diverging
        "#7d353b", "#bd4043", "#ff4b4b", "#ff8c8c", "#ffc7c7", "#a6dcff", "#60b4ff", "#1c83e1", "#0054a3", "#004280"))),
    "#000032": "#29b09d", "#000033": "#ff2b2b", "#000034": "#0068c9",  # increasing, decreasing, total
    "#000036": "#808495", "#000037": "#262730", "#000038": "#FFFFFF",  # grey 70, grey 90, background
    "#000039": "rgba(17, 17, 17, 0.1)", "#000040": "rgba(252, 252, 251, 1)"}  # faded text, background mix
