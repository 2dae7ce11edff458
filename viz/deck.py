"""A story as one offline HTML file (issue 50): one slide per step (title, note, the chart with
its hover, the chart in plain words, the summary where the step shows one, the settings that made
it), stepped with ←/→, PageUp/PageDown and Space, Plotly's JavaScript inline, no request leaves
the file. ``printable=True``: every slide on a page of its own, for Chromium's print to PDF.
Every text is HTML-escaped; figures travel as JSON in ``<script type="application/json">``."""
from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

import plotly.graph_objects as go

from .common import bold_html
from .palette import MUTED_TEXT, TEXT, WHITE


@dataclass
class Slide:
    title: str
    note: str
    figure: go.Figure | None = None
    plain: str = ""                 # the chart's kind in plain words (viz.plain), Markdown bold allowed
    summary: list[str] = field(default_factory=list)
    settings: str = ""
    missing: str = ""               # why there is no chart (e.g. the document is no longer on the server)
    html: str = ""                  # a page's HTML instead of a chart (the Why page's words; its text escaped)
    answer_space: list[str] = field(default_factory=list)  # a question's answer lines on a handout (☐ per option)
    picked: tuple[int, ...] = ()    # the model's summary (sentences from 0): a handout's answer to "which sentences"


STYLE = f"""
*{{box-sizing:border-box}} body{{margin:0;font-family:system-ui,sans-serif;color:{TEXT};background:{WHITE}}}
.slide{{display:none;min-height:100vh;padding:2.2vh 3vw 1vh}} .slide.on{{display:block}}
h1{{font-size:clamp(1.4rem,3.2vh,2.6rem);margin:0 0 .4em}} .note{{font-size:clamp(1rem,2.4vh,1.8rem);white-space:pre-wrap;margin:0 0 .6em}}
.chart{{height:62vh}} .plain,.settings,.count{{color:{MUTED_TEXT};font-size:clamp(.8rem,1.6vh,1.1rem)}}
.summary{{font-size:clamp(.9rem,2vh,1.4rem)}} .missing{{font-size:1.3rem;padding:1em;border:2px dashed {MUTED_TEXT}}}
.count{{text-align:right;margin:0}}  /* in the flow: it never covers text */
.answer{{border:1px solid {MUTED_TEXT};padding:.4em .8em;margin:.4em 0;font-size:clamp(.9rem,2vh,1.3rem)}}
.answer p{{margin:.5em 0}} .answers li{{margin:.4em 0;font-size:clamp(.9rem,2vh,1.3rem)}}
.words{{max-height:62vh;overflow:auto;font-size:clamp(.8rem,1.6vh,1.1rem)}}
/* printed: each slide is a page, and the chart takes what its text leaves (the same on screen and on
   paper: Plotly sizes the chart before printing) */
.print .slide{{display:flex;flex-direction:column;min-height:0;height:188mm;padding:0}}
.print .chart{{flex:1 1 auto;min-height:60mm;height:auto}} .print .words{{max-height:none;overflow:visible}}
.print .slide[data-long]{{height:auto;min-height:188mm}}  /* a page's words run on to the next page, never cut */
@page{{size:A4 landscape;margin:10mm}}
@media print{{ .slide{{display:flex;min-height:0;height:188mm;overflow:hidden;padding:0;break-after:page}}
  .slide[data-long]{{display:block;height:auto;overflow:visible}}
  .slide:last-of-type{{break-after:auto}}
  h1{{font-size:20pt}} .note{{font-size:13pt}} .summary{{font-size:11pt}}
  .plain,.settings{{font-size:9pt}} }}
"""

SCRIPT = """
const slides = [...document.querySelectorAll('.slide')];
const drawn = new Set();
function draw(i) {
  if (drawn.has(i)) return;
  drawn.add(i);
  const holder = slides[i].querySelector('.chart');
  if (!holder) return;
  const fig = JSON.parse(document.getElementById('fig-' + i).textContent);
  fig.layout.height = undefined; fig.layout.autosize = true;
  const found = (fig.layout.meta || {}).labels || {};  // viz.deck.slide_labels
  for (const [name, axis] of Object.entries(fig.layout)) {  // as viz.deck.fit_labels, at this slide's size
    if (!/^[xy]axis/.test(name) || !(axis.type === 'category' || axis.nticks)) continue;
    const span = axis.domain ? axis.domain[1] - axis.domain[0] : 1;  // (a subplot's share of the chart)
    const px = ((name[0] === 'y' ? holder.clientHeight : holder.clientWidth) - 190) * span;
    if (name[0] === 'x' && axis.tickangle) axis.tickangle = -90;  // upright labels' boxes stay a line apart
    const most = Math.max(2, Math.min(axis.nticks || 1e6, Math.floor(px / LABEL_PX)));
    if (!found[name]) { axis.nticks = most; continue; }
    const [cats, labels, marked] = found[name], step = Math.ceil(cats.length / most);
    const kept = cats.map((_, i) => i).filter((i) => marked[i]);
    for (let i = 0; i < cats.length; i++) {
      if (!marked[i] && kept.every((k) => Math.abs(k - i) >= step)) kept.push(i);
    }
    kept.sort((a, b) => a - b);
    const gap = Math.min(step, ...kept.slice(1).map((k, j) => k - kept[j])) * px / cats.length;
    Object.assign(axis, {tickmode: 'array', tickvals: kept.map((i) => cats[i]), ticktext: kept.map((i) => labels[i]),
                         nticks: undefined});
    if (gap < 13) axis.tickfont = {...(axis.tickfont || {}), size: Math.max(MIN_FONT, Math.floor(gap) - 1)};
  }
  Plotly.newPlot(holder, fig.data, fig.layout, {displaylogo: false, responsive: true, staticPlot: PRINT});
}
let at = 0;
function show(i) {
  at = Math.max(0, Math.min(slides.length - 1, i));
  slides.forEach((s, j) => s.classList.toggle('on', j === at));
  draw(at);
  if (!PRINT) history.replaceState(null, '', '#' + (at + 1));
}
document.addEventListener('keydown', (e) => {
  const go = {ArrowRight: 1, PageDown: 1, ' ': 1, ArrowLeft: -1, PageUp: -1, Home: -1e9, End: 1e9}[e.key];
  if (go === undefined) return;
  e.preventDefault();
  show(at + go);
});
if (PRINT) { slides.forEach((s, i) => { s.classList.add('on'); draw(i); }); }
else { show((parseInt(location.hash.slice(1)) || 1) - 1); }
"""


LABEL_PX = 16  # a token label's line on a slide: at most one label per this many pixels of its axis


def for_slide(figure: go.Figure, height: int | None = None, width: int = 1280) -> go.Figure:
    """A copy of an app figure for a slide: the step's view only (no head or layer buttons, which
    are controls, nor their "head" and "layer" labels), room for its labels (the app's margins are
    fixed for speed) and, at ``height``, no more category labels than its axes hold (hover still
    names every cell)."""
    fig = go.Figure(figure)
    fig.layout.updatemenus = ()  # (update_layout(updatemenus=[]) would keep them)
    fig.layout.annotations = [a for a in fig.layout.annotations if a.text not in ("head", "layer")]
    fig.update_layout(margin=dict(l=40, r=30, t=60, b=40))
    if height is not None:
        fig.update_layout(height=height)
        fit_labels(fig, height, width - 80)
    else:  # the deck's script thins them at the slide's size
        fig.layout.meta = {**(fig.layout.meta or {}), "labels": slide_labels(fig)}
    return fig.update_xaxes(automargin=True).update_yaxes(automargin=True)


MARKS = ("★", "◆")  # ★ the model's pick, ◆ the oracle's: a label carrying one is never thinned away
MIN_FONT = 8  # px: the smallest tick label, where two marked labels are neighbours on a crowded axis


def slide_labels(fig: go.Figure) -> dict[str, tuple[list[str], list[str], list[bool]]]:
    """Per category axis ("yaxis2"): its categories in their traces' order, the label each gets on a
    slide, and whether it is marked. A category is marked where its label or a bar's text at it
    carries a MARK (the score bars' "★ 0.555"), and its label then shows the mark; on an x axis a
    sentence's label keeps its number only ("★ 4: The drop in…" → "★ 4": the y axis has the words), and
    a token that continues a word shows an ellipsis, not BERT's "##"."""
    out = {}
    for name in [k for k in fig.layout if k.startswith(("xaxis", "yaxis"))]:
        if fig.layout[name].type != "category":
            continue
        letter, ref, found = name[0], name[0] + name[5:], {}
        for t in fig.data:
            values = getattr(t, letter, None)
            if (getattr(t, letter + "axis", None) or letter) != ref or values is None:
                continue
            texts = t.text if t.type == "bar" and isinstance(t.text, (tuple, list)) else ()
            for j, v in enumerate(values):
                said = str(v) + (str(texts[j]) if j < len(texts) else "")
                found[str(v)] = found.get(str(v)) or "".join(m for m in MARKS if m in said)
        if found:
            cats = list(found)
            short = [c.split(":")[0] if letter == "x" and re.match(r"(?:[★◆]+ )?\d+: ", c) else
                     re.sub(r"^(\d+) ##", r"\1 …", c) for c in cats]  # a word's piece: "274 ##s" → "274 …s"
            out[name] = (cats, [s if not found[c] or any(m in s for m in MARKS) else f"{s} {found[c]}"
                                for c, s in zip(cats, short)], [bool(found[c]) for c in cats])
    return out


def fit_labels(fig: go.Figure, height: int, width: int) -> None:
    """Thin the labels of ``fig``'s category axes to about one per LABEL_PX pixels of a plot area
    about ``height`` × ``width`` (the labels themselves take ~130 px of it), placed on their own
    categories (tickvals, not nticks, which let a label drift off its bar) and worded for a slide
    (``slide_labels``). A marked label is always kept; the others stay a thinning step away from
    every kept one; where two kept labels are closer than a line, the axis's font shrinks (to
    MIN_FONT at least). The deck's script does the same at the slide's own size."""
    found = slide_labels(fig)
    for name in [k for k in fig.layout if k.startswith(("xaxis", "yaxis"))]:
        axis = fig.layout[name]
        if not (axis.type == "category" or axis.nticks):
            continue
        span = axis.domain[1] - axis.domain[0] if axis.domain else 1  # (a subplot's share of the chart)
        px = int(((height if name.startswith("y") else width) - 190) * span)
        most = max(2, min(axis.nticks or 10**6, px // LABEL_PX))
        if name.startswith("x") and axis.tickangle:  # slanted labels' boxes overlap their neighbours': upright
            axis.tickangle = -90
        if name not in found:
            axis.nticks = most
            continue
        cats, labels, marked = found[name]
        step = -(-len(cats) // most)
        kept = [i for i, m in enumerate(marked) if m]
        for i in range(len(cats)):
            if not marked[i] and all(abs(k - i) >= step for k in kept):
                kept.append(i)
        kept.sort()
        gap = min([step, *(b - a for a, b in zip(kept, kept[1:]))]) * px / len(cats)
        axis.update(tickmode="array", tickvals=[cats[i] for i in kept], ticktext=[labels[i] for i in kept], nticks=None)
        if gap < 13:
            axis.tickfont.size = max(MIN_FONT, int(gap) - 1)
        if name == "yaxis":  # bars' own numbers: a row's height, not Plotly's shrink to the bar (~5 px on a slide)
            fig.update_traces(constraintext="none", textfont_size=max(MIN_FONT, min(12, int(px / len(cats)) - 1)),
                              selector=dict(type="bar", orientation="h"))


def deck_html(title: str, slides: list[Slide], printable: bool = False,
              answers: list[tuple[int, str]] = ()) -> str:
    """The story as one standalone HTML file (see the module's docstring). A slide with an answer
    space is a handout's question; ``answers`` ((step from 1, the answer in words)) make a last page,
    for the teacher."""
    from plotly.offline import get_plotlyjs

    body = []
    n = len(slides) + bool(answers)
    for i, s in enumerate(slides):
        long = " data-long" if s.html and s.figure is None else ""  # a page's words: over more pages when printed
        part = [f"<section class='slide'{long} aria-label='Step {i + 1} of {n}'>",
                f"<h1>{html.escape(s.title or f'Step {i + 1}')}</h1>"]
        if s.note:
            part.append(f"<p class='note'>{html.escape(s.note)}</p>")
        if s.answer_space:
            part.append("<div class='answer'>" + "".join(f"<p>{html.escape(x)}</p>" for x in s.answer_space) + "</div>")
        if s.figure is not None:
            fig = for_slide(s.figure).to_json().replace("</", "<\\/")  # no "</script>" inside the script
            part.append(f"<div class='chart' id='chart-{i}'></div>"
                        f"<script type='application/json' id='fig-{i}'>{fig}</script>")
        elif s.html:
            part.append(f"<div class='words'>{s.html}</div>")
        elif s.missing:
            part.append(f"<p class='missing'>{html.escape(s.missing)}</p>")
        if s.summary:
            part.append("<ol class='summary'>" + "".join(f"<li>{html.escape(x)}</li>" for x in s.summary) + "</ol>")
        if s.plain:
            part.append(f"<p class='plain'>{bold_html(s.plain)}</p>")
        if s.settings:
            part.append(f"<p class='settings'>{html.escape(s.settings)}</p>")
        part.append(f"<p class='count'>{i + 1} / {n}</p></section>")
        body.append("".join(part))
    if answers:
        body.append("<section class='slide' aria-label='Answers'><h1>Answers, for the teacher</h1><ul class='answers'>"
                    + "".join(f"<li>Step {k}: {html.escape(a)}</li>" for k, a in answers)
                    + f"</ul><p class='count'>{n} / {n}</p></section>")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width,initial-scale=1'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body class='{'print' if printable else ''}'>" + "".join(body)
            + f"<script>const PRINT = {json.dumps(printable)}, LABEL_PX = {LABEL_PX}, MIN_FONT = {MIN_FONT};{SCRIPT}</script></body></html>")

