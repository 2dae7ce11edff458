"""BertSumExt (Liu & Lapata 2019, Fig. 1): text → sentences → [CLS] s1 [SEP] [CLS] s2 [SEP] …
→ BERT → the [CLS] vectors → inter-sentence Transformer → one score per sentence → top k.

``Summarizer`` is stateless after loading: ``summarize`` and ``trace`` keep everything they
compute in locals, so one instance serves many threads. ``trace`` attaches forward hooks
for the duration of the call; each hook records only the thread that attached it.
"""
from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import load
from .bert import BertModel, extended_mask
from .cancel import checkpoint
from .hooks import names, record, split_heads
from .inter_encoder import InterEncoderConfig, TransformerInterEncoder, sinusoidal_table
from .load import DEFAULT_CHECKPOINT
from .text import CLS, SEP, WordPieceTokenizer, reading, split_sentences
from .trace import BatchTrace, Cache, Summary, Trace


class EmptyDocumentError(ValueError):
    """The text holds no sentence to summarise."""


class DocumentTooLongError(ValueError):
    """The text is longer than ``Summarizer.max_chars``."""


# control characters but \t and \n, and the bidi embeddings/overrides/isolates that would show
# text reversed (U+202A-202E, U+2066-2069): blanked one for one, so spans still index the input
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
MAX_CHARS = 100_000  # default input limit (the app passes its own)
PRECISIONS = ("float32", "bfloat16")  # of summarize and trace (analyses compute in float32 or float64)


def pool_sentences(top: torch.Tensor, attention_mask: torch.Tensor, cls_positions: torch.Tensor,
                   cls_mask: torch.Tensor, pooling: str = "cls") -> torch.Tensor:
    """One vector per sentence from the top layer top [B, T, D]: its [CLS] output (BertSum,
    Liu & Lapata 2019 §3.1) or, with ``pooling="mean"``, the mean over its tokens [CLS] … [SEP],
    how all-MiniLM-L6-v2 was trained to be read (its [CLS] output carries little about the
    sentence). [B, T] mask, [B, S] positions and mask → [B, S, D], zero where cls_mask is False."""
    rows = torch.arange(top.shape[0], device=top.device)[:, None]  # [B, 1]
    if pooling == "cls":
        vecs = top[rows, cls_positions]  # [B, S, D]
    elif pooling == "mean":
        n_tokens = attention_mask.long().sum(1, keepdim=True)  # [B, 1]
        has_next = torch.zeros_like(cls_mask)  # [B, S]
        has_next[:, :-1] = cls_mask[:, 1:]
        ends = torch.where(has_next, cls_positions.roll(-1, 1), n_tokens)  # [B, S] next [CLS] or the end
        csum = F.pad(top.cumsum(1), (0, 0, 1, 0))  # [B, T+1, D]: csum[:, t] = sum of tokens < t
        width = (ends - cls_positions).clamp(min=1)[:, :, None]  # [B, S, 1]
        vecs = (csum[rows, ends] - csum[rows, cls_positions]) / width  # [B, S, D]
    else:
        raise ValueError(f"unknown sentence pooling {pooling!r} (cls or mean)")
    return vecs * cls_mask[:, :, None].float()  # [B, S, D]


class BertSumExt(nn.Module):
    def __init__(self, bert: BertModel, ext_layer: TransformerInterEncoder, pooling: str = "cls",
                 scale: float = 1.0):
        super().__init__()
        self.bert = bert
        self.ext_layer = ext_layer
        self.pooling = pooling  # how a sentence's vector is read from BERT's top layer
        self.scale = scale  # × the sentence vectors before the sinusoid rows are added (BertSum: 1)

    def sentence_vectors(self, input_ids, segment_ids, attention_mask, cls_positions, cls_mask,
                         head_mask=None) -> torch.Tensor:
        """[B, T] token inputs, [B, S] [CLS] positions and mask → sentence vectors [B, S, D]
        (B = the head mask's batch when ``head_mask`` is [B, L, H])."""
        top = self.bert(input_ids, segment_ids, attention_mask, head_mask)  # [B, T, D]
        return self.scale * pool_sentences(top, attention_mask, cls_positions, cls_mask, self.pooling)

    def embed(self, input_ids, segment_ids) -> torch.Tensor:
        """BERT's input representation [B, T, D] (hook point ``bert.embed``)."""
        return self.bert.embeddings(input_ids, segment_ids)

    def bert_layers(self, x, mask, start: int = 0, end: int | None = None) -> torch.Tensor:
        """BERT's layers [start, end) on hidden states x [B, T, D] with the additive mask [B, 1, 1, T]
        (patching runs a window again from a cached layer input)."""
        return self.bert.encoder(x, mask, start=start, end=end)

    def sentence_pe(self, n: int) -> torch.Tensor:
        """The sentence encoder's position rows for n sentences [n, D] (hook point ``inter.pe``)."""
        return self.ext_layer.pos_emb(n)

    def forward(self, input_ids, segment_ids, attention_mask, cls_positions, cls_mask) -> torch.Tensor:
        """A batch of single-window documents → sentence scores [B, S]."""
        sents = self.sentence_vectors(input_ids, segment_ids, attention_mask, cls_positions, cls_mask)
        return self.ext_layer(sents, cls_mask)  # [B, S]


@dataclass(frozen=True)
class Encoded:
    """One document as model input, with the bookkeeping to map it back to the text."""

    sentences: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    too_short: tuple[int, ...]
    truncated: tuple[int, ...]
    tokens_cut: int  # WordPieces not fed (past max_windows)
    input_sentences: tuple[int, ...]  # [S] document index of each fed sentence (part)
    tokens: tuple[str, ...]  # [T] all windows, concatenated
    input_ids: tuple[int, ...]  # [T]
    segment_ids: tuple[int, ...]  # [T] restart at 0 in every window
    cls_positions: tuple[int, ...]  # [S] index into tokens
    token_sentence: tuple[int, ...]  # [T]
    window_starts: tuple[int, ...] = (0,)  # token index where each BERT window begins

    def window(self, w: int) -> tuple[int, int]:
        """Token range [start, end) of window w."""
        return self.window_starts[w], (self.window_starts + (len(self.tokens),))[w + 1]

    def part_windows(self) -> np.ndarray:
        """[S] int64: the window of each fed part."""
        return np.searchsorted(np.array(self.window_starts), np.array(self.cls_positions), side="right") - 1

    def sentences_past(self, tokens: int) -> tuple[int, ...]:
        """Sentences with a part fed past the first ``tokens`` tokens of the input as a single
        window (at most the first window's length): where a scorer trained on that input never was."""
        seen = min(tokens, self.window(0)[1])
        return tuple(sorted({i for i, c in zip(self.input_sentences, self.cls_positions) if c >= seen}))

    def window_parts(self) -> np.ndarray:
        """[W + 1] int64: window w feeds the parts [out[w], out[w + 1])."""
        return np.searchsorted(np.array(self.cls_positions), np.array(self.window_starts + (len(self.tokens),)))


def trigrams(sentence: str) -> set[tuple[str, ...]]:
    words = sentence.lower().split()
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def select(scores: list[float | None], sentences: tuple[str, ...], k: int, block_trigram: bool) -> tuple[int, ...]:
    """Top k by score; with trigram blocking (Paulus et al. 2018, as in BertSum) skip a candidate
    sharing a trigram with one already chosen. Returned in document order."""
    chosen, seen = [], set()
    for i in sorted((i for i, s in enumerate(scores) if s is not None), key=lambda i: -scores[i]):
        if len(chosen) == k:
            break
        tri = trigrams(sentences[i])
        if block_trigram and tri & seen:
            continue
        chosen.append(i)
        seen |= tri
    return tuple(sorted(chosen))


class Summarizer:
    """BertSumExt on text: ``encode`` (BertSum's input format), ``score`` (differentiable part
    scores, for training, evaluation and analysis), ``summarize`` → ``Summary`` and ``trace``
    → ``Trace``. ``mask_heads`` switches attention heads off: ("bert" | "inter", layer, head),
    0-based. ``precision`` "bfloat16": summarize, trace and batch_trace run under bfloat16
    autocast (float32 weights; matrix products in bfloat16, reductions and softmax in float32),
    for a GPU; every analysis computes in float32 or float64 whatever it is."""

    def __init__(self, model: BertSumExt, tokenizer: WordPieceTokenizer, device: torch.device,
                 weights: str, backbone: str, min_words: int = 5, max_windows: int | None = None,
                 max_chars: int = MAX_CHARS, trained_tokens: int | None = None, precision: str = "float32"):
        if precision not in PRECISIONS:
            raise ValueError(f"unknown precision {precision!r} ({' or '.join(PRECISIONS)})")
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device
        self.precision = precision
        self.weights = weights  # "trained" or "untrained" sentence scorer
        self.backbone = backbone
        self.min_words = min_words
        self.max_tokens = model.bert.config.max_position_embeddings
        self.max_windows = max_windows  # None: whole documents, window by window; 1: BertSum's single input
        self.max_chars = max_chars  # input size limit
        # the input length the scorer was trained on (BertSum: each document's first 512 tokens):
        # sentences past it sit at sentence positions training rarely or never saw
        self.trained_tokens = trained_tokens or self.max_tokens

    @classmethod
    def load(cls, backbone: str | Path | None = None, checkpoint: str | Path | None = None,
             device: str | None = None, inter: InterEncoderConfig | None = None,
             untrained: bool = False, seed: int = 0, max_chars: int = MAX_CHARS,
             precision: str = "float32") -> "Summarizer":
        """Backbone: a Hugging Face BERT directory (default: the embedded all-MiniLM-L6-v2).
        Checkpoint: BertSumExt weights (.safetensors or PreSumm/BertSum .pt); default: the
        shipped ``model/weights`` checkpoint (made for the embedded backbone). ``untrained``: a
        new scorer, Glorot-initialised from ``seed`` (for training, or to see what training changed)."""
        directory = Path(backbone) if backbone else load.default_backbone_dir()
        if checkpoint is None and not untrained and backbone is None and DEFAULT_CHECKPOINT.is_file():
            checkpoint = DEFAULT_CHECKPOINT
        w = load.merge_checkpoint(directory, checkpoint)
        bert = BertModel(w.config)
        load.load_weights(bert, w.bert, f"BERT weights ({checkpoint or directory})", optional=("pooler.",))
        inter = inter or head_config(w.head, w.meta, w.config.hidden_size)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)  # an untrained head is at least the same one every run
            ext = TransformerInterEncoder(inter)
            for p in ext.parameters():
                if p.dim() > 1:
                    nn.init.xavier_uniform_(p)  # PreSumm's param_init_glorot
        if w.head:
            load.load_weights(ext, w.head, f"sentence-scorer weights ({checkpoint})", optional=("pos_emb.",))
        dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        name = load.EMBEDDED_BACKBONE if backbone is None else str(directory)
        model = BertSumExt(bert, ext, w.meta.get("sentence_pooling", "cls"), float(w.meta.get("sentence_scale", 1)))
        return cls(model, load_tokenizer(directory), dev, "trained" if w.head else "untrained", name,
                   max_chars=max_chars, trained_tokens=int(w.meta.get("trained_tokens", 0)) or None,
                   precision=precision)

    def autocast(self):
        """The model's precision for summarize and trace: bfloat16 autocast, or nothing."""
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self.precision == "bfloat16")

    @functools.cached_property
    def n_parameters(self) -> int:
        """Parameters of the whole model, counted once (the sidebar shows them on every run)."""
        return sum(p.numel() for p in self.model.parameters())

    def size(self) -> tuple[int, int, int]:
        """BERT layers, heads per layer, and parameters of the whole model."""
        cfg = self.model.bert.config
        return cfg.num_hidden_layers, cfg.num_attention_heads, self.n_parameters

    def encode(self, text: str, max_windows: int | None = 1) -> Encoded:
        """BertSum's input format. Sentences below ``min_words`` words are not fed (PreSumm's
        ``min_src_ntokens_per_sent``) unless no sentence reaches it. Sentences are packed whole
        into windows of ``max_tokens``; one longer than a window is split into parts, each with
        its own [CLS]. ``max_windows=1`` is BertSum's single 512-token input; ``None`` reads
        the whole document. What does not fit is reported in ``truncated``/``tokens_cut``."""
        if len(text) > self.max_chars:
            raise DocumentTooLongError(f"The document has {len(text):,} characters; the limit is "
                                       f"{self.max_chars:,}. Paste a shorter part of it.")
        text = CONTROL.sub(" ", text)  # one for one, so spans still index the caller's text
        spans = tuple(split_sentences(text))
        if not spans:
            raise EmptyDocumentError("The document is empty: paste or upload some text.")
        sentences = tuple(text[s:e].strip() for s, e in spans)
        too_short = tuple(i for i, s in enumerate(sentences) if len(s.split()) < self.min_words)
        if len(too_short) == len(sentences):
            too_short = ()
        candidates = sorted(set(range(len(sentences))) - set(too_short))
        room = self.max_tokens - 2
        parts = [(i, wp[j:j + room]) for i, wp in zip(candidates, self.tokenizer.tokenize([sentences[i] for i in candidates]))
                 for j in range(0, max(len(wp), 1), room)]
        tokens, segs, cls_pos, tok_sent, fed, starts = [], [], [], [], [], [0]
        truncated, cut, rank = [], 0, 0  # rank: sentence number within the window
        for n, (i, wp) in enumerate(parts):
            if len(tokens) + len(wp) + 2 > starts[-1] + self.max_tokens:
                if max_windows is not None and len(starts) == max_windows:
                    truncated = sorted({j for j, _ in parts[n:]})
                    cut = sum(len(p) for _, p in parts[n:])
                    break
                starts.append(len(tokens))
                rank = 0
            cls_pos.append(len(tokens))
            segs += [rank % 2] * (len(wp) + 2)
            rank += 1
            tok_sent += [i] * (len(wp) + 2)
            tokens += [CLS, *wp, SEP]
            fed.append(i)
        return Encoded(sentences, spans, too_short, tuple(truncated), cut, tuple(fed), tuple(tokens),
                       tuple(self.tokenizer.ids(tokens)), tuple(segs), tuple(cls_pos), tuple(tok_sent),
                       tuple(starts))

    def head_mask(self, mask_heads=()) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """("bert" | "inter", layer, head) triples → gates for BERT [L, H] and the sentence
        encoder [L2, H2]: 0 for a head switched off, 1 else (None: nothing off there)."""
        shapes = {"bert": (len(self.model.bert.encoder.layer), self.model.bert.config.num_attention_heads),
                  "inter": (self.model.ext_layer.config.layers, self.model.ext_layer.config.heads)}
        gates = {}
        for part, layer, head in mask_heads:
            if part not in shapes or not (0 <= layer < shapes[part][0] and 0 <= head < shapes[part][1]):
                L, H = shapes.get(part, (0, 0))
                raise ValueError(f"no head {part}:{layer + 1}.{head + 1} (layers 1-{L}, heads 1-{H})"
                                 if part in shapes else f"unknown part {part!r} (bert or inter)")
            gates.setdefault(part, torch.ones(shapes[part], device=self.device))[layer, head] = 0.0
        return gates.get("bert"), gates.get("inter")

    def window_inputs(self, enc: Encoded, a: int, b: int) -> dict[str, torch.Tensor]:
        """Model inputs of the tokens [a, b) (one window), batch of 1. Every analysis asks for each
        window's inputs before its work on it: where a run its caller gave up stops, and where it says
        which window starts to whoever watches (model.cancel)."""
        checkpoint(bisect.bisect_right(enc.window_starts, a) - 1, len(enc.window_starts))
        t = lambda xs: torch.tensor([xs], dtype=torch.long, device=self.device)  # noqa: E731  [1, ·]
        cls = [c - a for c in enc.cls_positions if a <= c < b]
        return dict(input_ids=t(enc.input_ids[a:b]), segment_ids=t(enc.segment_ids[a:b]),
                    attention_mask=torch.ones(1, b - a, dtype=torch.long, device=self.device),
                    cls_positions=t(cls), cls_mask=torch.ones(1, len(cls), dtype=torch.bool, device=self.device))

    def word_embeddings(self, ids: torch.Tensor) -> torch.Tensor:
        """BERT's word embeddings of token ids [...] → [..., D] (what the hook point
        ``bert.embed.word`` carries for them): the baselines of attributions ([MASK], [PAD])."""
        return self.model.bert.embeddings.word_embeddings(ids.to(self.device))

    def token_id(self, token: str) -> int | None:
        """A token's id in the vocabulary (None: the vocabulary has no such token)."""
        return self.tokenizer.vocab.get(token)

    def sentence_vectors(self, enc: Encoded, head_mask: torch.Tensor | None = None, window: int | None = None,
                         probes: Iterable[str] = ()) -> tuple[torch.Tensor, dict]:
        """BERT window by window → every fed sentence's vector [B, S, D] (B = 1, or the batch of
        ``head_mask`` [B, L, H]), and what the hook points ``probes`` carried during ``window``
        (model/hooks.py: {name: [value]})."""
        vecs, captured = [], {}
        for w in range(len(enc.window_starts)):
            with record(self.model, probes if w == window else ()) as rec:
                vecs.append(self.model.sentence_vectors(**self.window_inputs(enc, *enc.window(w)),
                                                        head_mask=head_mask))  # [B, S_w, D]
            captured = rec if w == window else captured
        return torch.cat(vecs, 1), captured  # [B, S, D]

    def score_vectors(self, vecs: torch.Tensor, head_mask: torch.Tensor | None = None,
                      pe: torch.Tensor | None = None, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The sentence encoder over sentence vectors [B, S, D] (``mask`` [B, S]: True = a real
        sentence; default all) → part scores [B, S]."""
        if mask is None:
            mask = torch.ones(vecs.shape[:2], dtype=torch.bool, device=vecs.device)  # [B, S]
        return self.model.ext_layer(vecs, mask, head_mask, pe)

    def layer_scores(self, vecs: torch.Tensor, head_mask: torch.Tensor | None = None) -> torch.Tensor:
        """The sentence encoder's scorer read after each of its layers over sentence vectors
        [B, S, D] → part scores [L2 + 1, B, S] (the last row: ``score_vectors``)."""
        mask = torch.ones(vecs.shape[:2], dtype=torch.bool, device=vecs.device)
        return self.model.ext_layer.layer_scores(vecs, mask, head_mask)

    def bert_layer_vectors(self, enc: Encoded) -> torch.Tensor:
        """Each sentence's vector as the shipped pooling reads it (mean or [CLS], × scale), from
        every BERT layer's output instead of the top one: [L, S, D] (row L - 1: the model's own)."""
        L = len(self.model.bert.encoder.layer)
        out = []
        for w in range(len(enc.window_starts)):
            inp = self.window_inputs(enc, *enc.window(w))
            with record(self.model, [f"bert.{layer}.resid_post" for layer in range(L)]) as rec:
                self.model.sentence_vectors(**inp)
            out.append(torch.cat([self.model.scale * pool_sentences(rec[f"bert.{layer}.resid_post"][0],
                                                                    inp["attention_mask"], inp["cls_positions"],
                                                                    inp["cls_mask"], self.model.pooling)
                                  for layer in range(L)]))  # [L, S_w, D]
        return torch.cat(out, 1)  # [L, S, D]

    def score(self, enc: Encoded, mask_heads=()) -> torch.Tensor:
        """Part scores [S] of an encoded document (differentiable: no inference mode here)."""
        bert_gates, inter_gates = self.head_mask(mask_heads)
        return self.score_vectors(self.sentence_vectors(enc, bert_gates)[0], inter_gates)[0]

    def summary(self, enc: Encoded, part_scores, k: int = 3, block_trigram: bool = True, mask_heads=()) -> Summary:
        """The ``Summary`` of part scores [S] (a tensor or a list)."""
        scores = sentence_scores(enc.input_sentences, len(enc.sentences), [float(s) for s in part_scores])
        past = enc.sentences_past(self.trained_tokens) if self.weights == "trained" else ()
        return Summary(enc.sentences, enc.spans, scores, select(scores, enc.sentences, k, block_trigram),
                       enc.too_short, enc.truncated, enc.tokens_cut, self.device_name(), self.weights,
                       self.backbone, self.model.pooling, tuple(sorted(mask_heads)), past,
                       reading(" ".join(enc.sentences), self.tokenizer))

    def device_name(self) -> str:
        """The device, and the precision when it is not float32: "cuda:0", "cuda:0 bfloat16"."""
        return str(self.device) + (f" {self.precision}" if self.precision != "float32" else "")

    @torch.inference_mode()
    def summarize(self, text: str, k: int = 3, block_trigram: bool = True, mask_heads=()) -> Summary:
        enc = self.encode(text, self.max_windows)
        with self.autocast():
            scores = self.score(enc, mask_heads).float()
        return self.summary(enc, scores, k, block_trigram, mask_heads)

    @torch.inference_mode()
    def run_with_cache(self, text: str, k: int = 3, block_trigram: bool = True, mask_heads=(),
                       pattern: str = r".*") -> tuple[Summary, Cache]:
        """The summary and every hook point's value (those whose name matches ``pattern``) as
        float32 NumPy, from one forward (TransformerLens's ``run_with_cache``)."""
        enc = self.encode(text, self.max_windows)
        with record(self.model, names(self.model, pattern)) as rec, self.autocast():
            scores = self.score(enc, mask_heads).float()
        cache = Cache({n: tuple(v.float().cpu().numpy() for v in vs) for n, vs in rec.items()})
        return self.summary(enc, scores, k, block_trigram, mask_heads), cache

    @torch.inference_mode()
    def trace(self, text: str, k: int = 3, block_trigram: bool = True, window: int = 0, mask_heads=()) -> Trace:
        """Summarize and capture what the model looked at (see ``Trace``): BERT internals for
        one window (a long document has several), the sentence encoder for the whole document."""
        enc = self.encode(text, self.max_windows)
        if not 0 <= window < len(enc.window_starts):
            raise ValueError(f"window {window} does not exist (the document has {len(enc.window_starts)})")
        L, L2 = self.size()[0], self.model.ext_layer.config.layers
        probes = ["bert.embed.pos", "bert.embed.type", *names(self.model, r"bert\.\d+\.attn\.(q|k|v|pattern)")]
        bert_gates, inter_gates = self.head_mask(mask_heads)
        with record(self.model, ["inter.pe", *names(self.model, r"inter\.\d+\.attn\.pattern")]) as rec_ext, \
                self.autocast():
            sents, rec = self.sentence_vectors(enc, bert_gates, window, probes)  # [1, S, D]
            scores = self.score_vectors(sents, inter_gates)[0].float()  # [S]
        a, b = enc.window(window)
        np16 = lambda x: x.half().cpu().numpy()  # noqa: E731
        np32 = lambda x: x.float().cpu().numpy()  # noqa: E731
        # halve each layer before stacking: half the bytes copied (capture overhead is ~30% of a forward)
        layers = lambda name: np.stack([np16(rec[f"bert.{i}.attn.{name}"][0][0]) for i in range(L)])  # noqa: E731 [L, H, T, T]
        heads = lambda name: np.stack([np16(split_heads(self.model, rec[f"bert.{i}.attn.{name}"][0])[0])  # noqa: E731
                                       for i in range(L)])  # [L, H, T, dh]
        ranks = enc.window_parts()
        S, T = len(enc.input_sentences), b - a
        return Trace(
            summary=self.summary(enc, scores, k, block_trigram, mask_heads),
            tokens=enc.tokens[a:b],
            token_sentence=np.array(enc.token_sentence[a:b], dtype=np.int64),
            input_sentences=np.array(enc.input_sentences, dtype=np.int64),
            cls_positions=np.array([c - a for c in enc.cls_positions if a <= c < b], dtype=np.int64),
            segment_ids=np.array(enc.segment_ids[a:b], dtype=np.int64),
            window=window,
            windows=tuple(zip(ranks[:-1].tolist(), ranks[1:].tolist())),
            token_mask=np.ones(T, dtype=bool),
            extended_mask=np32(extended_mask(torch.ones(1, T))[0, 0, 0]),
            cls_mask=np.ones(S, dtype=bool),
            inter_mask=np.zeros(S, dtype=bool),
            bert_attention=layers("pattern"),
            bert_query=heads("q"), bert_key=heads("k"), bert_value=heads("v"),
            position_embeddings=np32(rec["bert.embed.pos"][0][0]),
            token_type_embeddings=np32(rec["bert.embed.type"][0][0]),
            sentence_vectors=np32(sents[0]),
            sentence_pe=np32(rec_ext["inter.pe"][0]),
            inter_attention=np.stack([np16(rec_ext[f"inter.{i}.attn.pattern"][0][0]) for i in range(L2)]),
            pe_table=np32(sinusoidal_table(max(512, S + 8), self.model.ext_layer.config.d_model)),
        )


    @torch.inference_mode()
    def batch_trace(self, texts: list[str], layer: int = 0) -> BatchTrace:
        """BertSum's training input: the first 512-token window of each document, padded into
        one batch (PreSumm's ``Batch``: token ids padded with 0 and ``mask_src``; [CLS] positions
        padded with 0 and ``mask_cls``), run through BertSumExt.forward with the masks recorded
        as applied and the attention of BERT layer ``layer`` and of the sentence encoder."""
        encs = [self.encode(t, 1) for t in texts]
        T, S = max(len(e.tokens) for e in encs), max(len(e.cls_positions) for e in encs)
        dev = self.device
        ids = _pad([e.input_ids for e in encs], T).to(dev)  # [B, T]
        segs = _pad([e.segment_ids for e in encs], T).to(dev)  # [B, T]
        mask = _pad([[1] * len(e.tokens) for e in encs], T).to(dev)  # [B, T]
        cls = _pad([e.cls_positions for e in encs], S).to(dev)  # [B, S]
        cls_mask = _pad([[True] * len(e.cls_positions) for e in encs], S, False).to(dev)  # [B, S]
        L2 = self.model.ext_layer.config.layers
        with record(self.model, [f"bert.{layer}.attn.pattern"] + [f"inter.{i}.attn.pattern" for i in range(L2)]) \
                as rec, self.autocast():
            scores = self.model(ids, segs, mask, cls, cls_mask)  # [B, S]
        return BatchTrace(
            tokens=tuple(e.tokens for e in encs),
            attention_mask=mask.bool().cpu().numpy(),
            extended_mask=extended_mask(mask)[:, 0, 0].float().cpu().numpy(),
            cls_positions=cls.cpu().numpy(), cls_mask=cls_mask.cpu().numpy(), inter_mask=~cls_mask.cpu().numpy(),
            layer=layer, bert_attention=rec[f"bert.{layer}.attn.pattern"][0].half().cpu().numpy(),
            inter_attention=torch.stack([rec[f"inter.{i}.attn.pattern"][0] for i in range(L2)], 1)
            .half().cpu().numpy(),
            scores=scores.float().cpu().numpy())


def _pad(rows: list, width: int, value=0) -> torch.Tensor:
    return torch.tensor([list(r) + [value] * (width - len(r)) for r in rows])


def sentence_scores(input_sentences, n: int, part_scores) -> tuple[float | None, ...]:
    """Part scores [S] → one score for each of the document's n sentences: a sentence split
    into parts (longer than a window) gets its best part's; a sentence not fed gets None.
    ``input_sentences`` [S]: the sentence of each part (``Encoded.input_sentences``)."""
    out: list[float | None] = [None] * n
    for i, s in zip(input_sentences, part_scores):
        out[i] = s if out[i] is None else max(s, out[i])
    return tuple(out)


def best_part(input_sentences, part_scores, i: int) -> int | None:
    """The part that carries sentence i's score in ``sentence_scores`` (its best part; the
    first of equal ones), or None when the sentence was not fed."""
    parts = [j for j, s in enumerate(input_sentences) if s == i]
    return max(parts, key=lambda j: float(part_scores[j])) if parts else None


def load_tokenizer(directory: Path) -> WordPieceTokenizer:
    return WordPieceTokenizer.from_vocab(directory / "vocab.txt", lowercase=load.lowercase(directory))


def head_config(head_sd: dict[str, torch.Tensor], meta: dict[str, str], d_model: int) -> InterEncoderConfig:
    """Sizes of the sentence scorer: from the checkpoint's shapes (heads and the sentence positions
    seen in training from its metadata; heads else PreSumm's 8), or PreSumm's defaults scaled to
    the backbone for an untrained head."""
    if not head_sd:
        return InterEncoderConfig(d_model=d_model, layers=2, heads=8, d_ff=4 * d_model)
    layers = {int(k.split(".")[1]) for k in head_sd if k.startswith("transformer_inter.")}
    w1 = head_sd.get("transformer_inter.0.feed_forward.w_1.weight")
    pe = head_sd.get("pos_emb.pe")
    return InterEncoderConfig(
        d_model=d_model, layers=len(layers), heads=int(meta.get("inter_heads", 8)),
        d_ff=w1.shape[0] if w1 is not None else 4 * d_model,
        max_len=pe.shape[1] if pe is not None else 5000,
        position_rows=int(meta["position_rows"]) if meta.get("position_rows") else None)
