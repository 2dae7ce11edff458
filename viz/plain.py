"""Plain words for every kind of chart, for someone who has never seen attention (issue 50: the
stakeholders of a demo): what it shows, how to read it, and its caveat. The app shows the
paragraph under "What am I looking at?" beside the first chart of its kind on a page
(ui.figures.plot); ``kind`` maps a chart's key there to its kind."""
from __future__ import annotations

PLAIN = {
    "attention": (
        "BERT reads the document as word pieces (tokens). Each row of this map is one token, each column a token it "
        "may look at; the darker a cell, the more of its attention the row's token puts on the column's token in "
        "this one attention head (each row adds up to 1). Heads specialise: some look at the next word, some at "
        "punctuation, some at the same word elsewhere. Caveat: attention shows where the model looked, not what it "
        "used; a token can get much attention and change nothing. **Why this summary** shows which words actually "
        "moved a sentence's score."),
    "heads": (
        "Many small attention maps side by side, one per head (or one square per layer and head): a way to spot "
        "heads that behave alike or differently at a glance. Each map reads like the one-head map: rows look at "
        "columns, darker is more attention. Caveat: as for every attention map, this is where the model looked, not "
        "what it used (**Why this summary** shows the latter)."),
    "sentences": (
        "The same attention, added up sentence by sentence: how much the words of the sentence in a row look at the "
        "words of the sentence in a column. A strong diagonal means sentences mostly read themselves. Caveat: "
        "attention is where the model looked, not what it used."),
    "rollout": (
        "Attention rollout follows attention through all of BERT's layers at once, to estimate which input words "
        "each token's final vector draws from (Abnar & Zuidema 2020). Read a row as \"this token is built mostly "
        "from these words\". Caveat: it is an estimate that treats every layer alike; **Why this summary** measures "
        "which words changed a score."),
    "contribution": (
        "What each token actually contributed, not only where the model looked: attention weighted by how large "
        "the passed-on vector is (norm-weighted), or the share of each token in the layer's output after all its "
        "parts (ALTI, value zeroing). Rows add up to 1, as in the attention maps, so the two can be compared: a "
        "cell that is dark in attention but pale here was looked at and barely used. Caveat: it says how much a "
        "token mixes in, not whether it raises or lowers a sentence's score."),
    "scores": (
        "Each bar is one sentence of the document and its score: how strongly the model wants it in the summary. "
        "The highest-scoring sentences (★) become the summary, unless one repeats a phrase of a sentence already "
        "chosen (⊘). Caveat: a score compares sentences of this document with each other; it is not a grade of "
        "the sentence, and a high score on a different document means something else."),
    "route": (
        "A map of what carries one sentence's score: from the score on the right, back through the sentence "
        "encoder to the sentences it mixes, to the words each of them is pooled from, and down BERT's layers to "
        "the input words on the left. Thicker lines carry more. Caveat: the contributions are of the layers' "
        "outputs (ALTI), not gradients: they say what was mixed in, not whether it raised or lowered the score."),
    "layers": (
        "Each line is one sentence: its score read at each stage of the model, from BERT's first layer to the "
        "sentence encoder's last, where it is the real score. Where the lines cross is where the choice was "
        "made. Caveat: a reading before the last stage is a probe, not the model's own output."),
    "reference": (
        "Each bar is one sentence of the document and the share of its words that also appear in the reference "
        "summary (a summary written by a person). ★ marks the model's pick, ◆ the oracle's: the sentences that "
        "match the reference best. Caveat: sharing words is not sharing meaning; a reference written in other "
        "words scores low against any sentence, and ROUGE counts words, not facts."),
    "position": (
        "Each sentence's score beside the score it would get if its place in the document did not count. Where "
        "the two bars differ a lot, the model chose (or skipped) the sentence mostly because of where it stands, "
        "which news-trained models learn: the first sentences of a news article are often its summary. Caveat: "
        "this is one way to take position out; the model never saw sentences without a position."),
    "words": (
        "The document with the words that raised a chosen sentence's score in blue and those that lowered it in "
        "orange, measured from the model itself (gradient × input). This explains a score, which attention maps "
        "do not. Caveat: it measures small changes to each word; removing a word can change more than it predicts."),
    "methods": (
        "Three ways of saying which words mattered, put to a test: hide the words each way ranks highest and see "
        "how far the score falls (left), or start from a document with every word hidden and bring back the top "
        "ones (right). The method whose words move the score most is the one to trust for this sentence; the "
        "dashed line is words picked at random. Caveat: hiding a word makes a text the model never saw."),
    "encoder": (
        "After BERT, a small second model reads one vector per sentence and scores them. This map is its attention: "
        "each row a sentence, each column a sentence it looks at. Caveat: where it looked, not what it used."),
    "masks": (
        "When several documents are processed together they are padded to the same length; these maps show which "
        "positions the model may look at (light) and which are blocked (dark), so padding never counts. A decoder "
        "would also block every later word; this model reads the whole text at once."),
    "positions": (
        "How the model knows where things are: each row is a position (of a word, or of a sentence) and each column "
        "one number of the vector added for that position. The waves are what lets the model tell the first "
        "sentence from the tenth; it is also how it learns to prefer early sentences."),
    "head_stats": (
        "One square per attention head: rows are layers, columns are heads, the colour a number about that head on "
        "this document (how much it looks at the same sentence, at punctuation, how spread out its attention is), "
        "or how much the summary depends on it. Caveat: measured on this one document; a head that matters here "
        "may not matter on another."),
    "what_if": (
        "Document A against the edited document B: which sentences' scores moved, which heads' attention changed "
        "most, and which parts of the model carry the change (activation patching: B run again with one part taken "
        "from A; 100 % means that part alone explains the change). Caveat: it describes this one edit of this one "
        "document; parts can overlap and add up to more than 100 %."),
    "corpus": (
        "The same measurements over many documents: how often the summary is simply the first sentences, where "
        "chosen sentences sit, and each head's average behaviour with its spread. Caveat: the numbers hold for "
        "these documents; news from another source or another language can differ."),
    "learn": (
        "One attention head's arithmetic, step by step, for one word of this document: its query against every "
        "key, scaled, masked, turned into weights that add up to 1 (softmax), and the weighted mix of values that "
        "comes out. The last step is what the attention maps show for that word."),
    "answers": (
        "A class's answers to the lesson's question: how many students gave each answer (bars), which heads they "
        "named (a layer × head map, the count in each cell) or how their numbers spread. After the teacher reveals "
        "it, the model's answer is marked (✓ or ★, and hatched). Caveat: the class's favourite answer is what the "
        "class expected, not what is right; and what the model picked is not proof of why (**Why this summary** "
        "shows that)."),
}

# a chart's key in the app (its first part) → its kind
KINDS = {"bert_token": "attention", "bert_norm": "contribution", "bert_alti": "contribution", "bert_vz": "contribution",
         "bert_grid": "heads", "bert_overview": "heads", "bert_sentence": "sentences", "bert_rollout": "rollout",
         "inter_heatmap": "encoder", "inter_norm": "contribution", "inter_alti": "contribution",
         "score_bars": "scores", "summary_side": "scores", "why_position": "position", "why_words": "words",
         "batch": "masks", "mask_matrix": "masks", "token_mask": "masks", "extended_mask": "masks", "cls_mask": "masks",
         "inter_mask": "masks", "pe_table": "positions", "position_embeddings": "positions", "sentence_pe": "positions",
         "segments": "positions", "heads": "head_stats", "heads_token": "attention", "whatif": "what_if",
         "whatif_map": "attention", "corpus": "corpus", "learn": "learn",
         "answers": "answers", "quality": "reference", "inter_layers": "layers",
         "why_route": "route", "why_method": "methods"}


def kind(key: str | None) -> str | None:
    """The kind of the chart drawn under ``key`` (its longest known prefix), or None."""
    if not key:
        return None
    found = [p for p in KINDS if key == p or key.startswith(p + "_")]
    return KINDS[max(found, key=len)] if found else None
