"""The route from words to a sentence's score (issue 61; after Ferrando & Voita 2024, "Information
Flow Routes"): the contributions that carry a score, built from the ALTI contributions the project
already computes (analysis.mixing: Ferrando et al. 2022), pruned by a threshold.

From the score down: the sentence's vector after the sentence encoder's last layer ← the
sentences after the layer below (ALTI of that layer: row = the sentence receiving) ← … ← the
encoder's input (each sentence's pooled vector) ← the tokens of BERT's top layer it pools (their
pooling weights) ← the tokens of the layer below (BERT's ALTI) ← … ← BERT's input tokens. Each
edge has its **share** (the ALTI value: a node's shares sum to what ALTI gives, 1 for a whole row)
and its **flow** (the share times the flow of the node above, the score's node having 1): an edge
is kept when its flow reaches the threshold times the strongest flow of its stage (the flow
spreads thinner at every stage: a mean-pooled sentence gives each of its tokens a few percent), and
the nodes it reaches are followed down. Sentences pooled in another BERT window than the chosen sentence's end at the encoder's
input (the mixing is of one window). Pure NumPy over a ``Mixing``; ``sentence_route`` finds the
window and the part of a sentence (``python -m analysis route FILE --sentence I``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Route:
    nodes: dict[tuple[str, int, int], float]           # (stage, layer, index) → flow; stage "enc" or "bert"
    edges: list[tuple[tuple, tuple, float, float]]     # (upper node, lower node, share, flow)


def route(mix, part: int, threshold: float = 0.05) -> Route:
    """The route of part ``part``'s score (an index into the sentence encoder's parts). Stages:
    ("enc", l, part) for l = L2 … 0 (0: the encoder's input), ("bert", l, token) for l = L … 0
    (0: BERT's input)."""
    L2, L = len(mix.inter_alti_layer), len(mix.alti_layer)
    nodes: dict[tuple[str, int, int], float] = {("enc", L2, part): 1.0}
    edges = []

    def spread(upper_stage, layer, rows, lower_stage, lower_layer):
        found = []  # every edge from this stage's nodes, then those kept
        for (stage, lay, i), flow in list(nodes.items()):
            row = rows(i) if stage == upper_stage and lay == layer and flow > 0 else None
            if row is not None:
                found += [((stage, lay, i), (lower_stage, lower_layer, int(j)), float(row[j]), flow * float(row[j]))
                          for j in np.flatnonzero(row)]
        strongest = max((e[3] for e in found), default=0.0)
        for upper, lower, share, f in found:
            if f >= threshold * strongest and f > 0:
                nodes[lower] = nodes.get(lower, 0.0) + f
                edges.append((upper, lower, share, f))

    for layer in range(L2, 0, -1):  # the sentence encoder, top down
        spread("enc", layer, lambda i, m=mix.inter_alti_layer[layer - 1]: m[i], "enc", layer - 1)
    window = {int(p): n for n, p in enumerate(mix.parts)}  # the parts this window pools
    spread("enc", 0, lambda i: mix.pooling[window[i]] if i in window else None, "bert", L)
    for layer in range(L, 0, -1):  # BERT, top down
        spread("bert", layer, lambda i, m=mix.alti_layer[layer - 1]: m[i], "bert", layer - 1)
    return Route(nodes, edges)


def sentence_route(summarizer, text: str, sentence: int, threshold: float = 0.05, mask_heads=()):
    """The route of sentence ``sentence``'s score (0-based, a document sentence: its scoring part
    found, in the BERT window that reads it) → (Route, Mixing)."""
    from analysis.mixing import capture, encoded, mixing, sentence_window
    from model.summarizer import best_part

    enc = encoded(summarizer, text)
    if not 0 <= sentence < len(enc.sentences):
        raise ValueError(f"--sentence {sentence}: the document has {len(enc.sentences)} sentences, numbered 0 to "
                         f"{len(enc.sentences) - 1} here")
    if not 0 <= threshold <= 1:
        raise ValueError(f"--threshold {threshold}: a fraction from 0 to 1")
    cap = capture(summarizer, enc, sentence_window(summarizer, enc, sentence, mask_heads), mask_heads)
    mix = mixing(summarizer, cap)
    return route(mix, best_part(enc.input_sentences, cap.scores, sentence), threshold), mix


def add_arguments(parser) -> None:
    parser.add_argument("--sentence", type=int, metavar="I", help="the sentence (0-based; default: the first selected)")
    parser.add_argument("--threshold", type=float, default=0.3,
                        help="keep an edge whose flow is at least this × the strongest of its stage (default 0.3)")


def cli(args, summarizer) -> dict:
    """Nodes (stage "enc": sentence-encoder layer 0-L2, index = part; "bert": BERT layer 0-L, index
    = token of the window) with their flow and label, and edges (upper, lower, share, flow)."""
    from model.__main__ import read_text

    text = read_text(args.file)
    sentence = args.sentence
    summary = summarizer.summarize(text, args.k, args.block)
    if sentence is None:
        if not summary.selected:
            raise ValueError("no sentence is selected: name one with --sentence")
        sentence = summary.selected[0]
    elif 0 <= sentence < len(summary.scores) and summary.scores[sentence] is None:
        raise ValueError(f"--sentence {sentence} (0-based) is not scored (too short, or not fed)")
    r, mix = sentence_route(summarizer, text, sentence, args.threshold)
    enc = summarizer.encode(text, summarizer.max_windows)
    label = {"enc": lambda i: f"sentence {enc.input_sentences[i]}", "bert": lambda i: mix.tokens[i]}
    node = lambda n: {"stage": n[0], "layer": n[1], "index": n[2], "label": label[n[0]](n[2])}  # noqa: E731
    return {"route": {"sentence": sentence, "threshold": args.threshold, "window": int(mix.window),
                      "nodes": [{**node(n), "flow": f} for n, f in r.nodes.items()],
                      "edges": [{"from": node(u), "to": node(v), "share": s, "flow": f} for u, v, s, f in r.edges]}}
