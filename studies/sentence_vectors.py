"""Why the frozen backbone's [CLS] vectors cannot drive BertSum's scorer, in numbers.

    python studies/sentence_vectors.py [--n 100] [--data ../shared/data]

For n validation documents of CNN/DM: the sentence vectors of all-MiniLM-L6-v2's top layer with
[CLS] pooling (BertSum) and with mean pooling (how the backbone was trained), their norm and how
far each lies from its document's mean vector, against the norm of the sinusoid rows the
inter-sentence encoder adds to them (Liu & Lapata 2019 §3.1, no √d scaling)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model.inter_encoder import sinusoidal_table  # noqa: E402
from model.summarizer import Summarizer, pool_sentences  # noqa: E402
from training.cache import lower_layers  # noqa: E402
from training.data import DEFAULT_DATA, named_split  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    s = Summarizer.load(untrained=True)  # the backbone as shipped, not the fine-tuned layers
    n_layers = s.size()[0]
    stats = {"cls": ([], []), "mean": ([], [])}
    for doc in named_split("cnndm-valid", args.data, args.n):
        enc = s.encode(doc.text)
        top = lower_layers(s.model.bert, enc, n_layers)[None]  # [1, T, D]
        cls = torch.tensor([enc.cls_positions])  # [1, S]
        for pooling, (norms, spread) in stats.items():
            v = pool_sentences(top, torch.ones(top.shape[:2]), cls, torch.ones_like(cls, dtype=torch.bool),
                               pooling)[0]  # [S, D]
            norms.append(v.norm(dim=-1))
            spread.append((v - v.mean(0)).norm(dim=-1))
    pe = sinusoidal_table(64, s.model.ext_layer.config.d_model)  # [64, D]: the sentence encoder's rows
    print(f"{args.n} documents, top layer ({n_layers}) of the backbone, median over sentences:")
    for pooling, (norms, spread) in stats.items():
        print(f"  {pooling:>4} pooling: |v| {torch.cat(norms).median():.2f}, "
              f"distance to the document's mean vector {torch.cat(spread).median():.2f}")
    print(f"  sinusoid rows added to them: |pe| {pe.norm(dim=-1).median():.2f} (= sqrt(d/2))")


if __name__ == "__main__":
    main()
