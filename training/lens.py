"""The tuned lens for sentence vectors (issue 61; Belrose et al. 2023): one affine map per BERT
layer l, A_l v + b_l, fitted by ridge least squares so that the vectors pooled from layer l's
output land where the top layer's vectors of the same sentences are, on training documents. The
sentence encoder then reads each layer's vectors through its map ("tuned"), or as they are ("raw",
the logit lens: it only says what the scorer makes of a vector it was never trained on).

    python -m training.lens [--data ../shared/data] [--n 600] [--out model/weights/tuned_lens.safetensors]

CNN/DM train documents in their pasted form (``training.data.raw_text``, as the weights were
trained) plus BBC train, half each, are fitted on; 100 validation documents measure the maps' R²;
nothing of the test part is read (``--test`` measures the fitted maps on it afterwards, for the
record: R² out of sample). Written as safetensors (stored float16) with its metadata
(documents, ridge, R² per layer on the fit and on validation, the command)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "model" / "weights" / "tuned_lens.safetensors"


def texts(data: Path, n: int) -> list[str]:
    from training.data import bbc_docs, cnndm_docs, raw_text

    cnn = [raw_text(d.text) for d in cnndm_docs(data, "train", 0, n // 2)]
    bbc = [d.text for d in bbc_docs(data, "train")[: n - len(cnn)]]
    return cnn + bbc


def vectors(summarizer, documents: list[str], progress=None) -> torch.Tensor:
    """[L, N, D] float64: every sentence of every document, pooled from each BERT layer."""
    per_doc = []  # [L, S, D] each
    with torch.inference_mode():
        for n, text in enumerate(documents):
            per_doc.append(summarizer.bert_layer_vectors(summarizer.encode(text, summarizer.max_windows)).double().cpu())
            if progress:
                progress(n + 1, len(documents))
    return torch.cat(per_doc, 1)


def r_squared(A: torch.Tensor, b: torch.Tensor, v: torch.Tensor) -> list[float]:
    """How much of the top layer's vectors each layer's map explains on vectors v [L, N, D]."""
    y = v[-1]
    return [float(1 - ((x @ a.T.double() + c.double() - y) ** 2).sum() / ((y - y.mean(0)) ** 2).sum())
            for x, a, c in zip(v, A, b)]


def fit(summarizer, documents: list[str], ridge: float = 1e-2, progress=None) -> tuple[torch.Tensor, torch.Tensor, list]:
    """→ (A [L, D, D], b [L, D], R² per layer): layer l's pooled vectors → the top layer's."""
    v = vectors(summarizer, documents, progress)  # [L, N, D]: every sentence of every document
    xs, y = list(v), v[-1]
    A, b, r2 = [], [], []
    for x in xs:
        x1 = torch.cat([x, torch.ones(len(x), 1, dtype=x.dtype)], 1)  # [N, D + 1]
        gram = x1.T @ x1 + ridge * len(x1) * torch.eye(x1.shape[1], dtype=x.dtype)
        w = torch.linalg.solve(gram, x1.T @ y)  # [D + 1, D]
        pred = x1 @ w
        r2.append(float(1 - ((pred - y) ** 2).sum() / ((y - y.mean(0)) ** 2).sum()))
        A.append(w[:-1].T)
        b.append(w[-1])
    return torch.stack(A).float(), torch.stack(b).float(), r2


def main(argv=None) -> None:
    from safetensors.torch import save_file

    from model.summarizer import Summarizer
    from training.data import DEFAULT_DATA

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--n", type=int, default=600, help="training documents (half CNN/DM, half BBC)")
    p.add_argument("--ridge", type=float, default=1e-2)
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--test", action="store_true",
                   help="only measure the lens at --out on the test part (BBC test[:100], never used to fit or "
                        "choose it) and add its R² to the file's metadata; the maps are unchanged")
    args = p.parse_args(argv)
    summarizer = Summarizer.load(device="cpu")
    if args.test:
        return measure_test(summarizer, args.data, args.out)
    docs = texts(args.data, args.n)
    A, b, r2 = fit(summarizer, docs, args.ridge, lambda d, t: print(f"\r{d}/{t}", end="", flush=True))
    print()
    from training.data import bbc_docs, cnndm_docs, raw_text

    held = [raw_text(d.text) for d in cnndm_docs(args.data, "val", 0, 50)] + [d.text for d in bbc_docs(args.data, "val")[:50]]
    r2_valid = r_squared(A, b, vectors(summarizer, held))
    meta = {"documents": str(len(docs)), "ridge": str(args.ridge), "r2": json.dumps([round(x, 4) for x in r2]),
            "r2_validation": json.dumps([round(x, 4) for x in r2_valid]),
            "validation": "cnndm_val split_order[:50] (raw_text) + bbc val[:50]",
            "command": f"python -m training.lens --n {args.n} --ridge {args.ridge}",
            "fitted_on": "cnndm_train.jsonl.gz split_order[:n/2] (raw_text) + bbc train[:n/2]",
            "weights": summarizer.weights}
    save_file({"A": A.half().contiguous(), "b": b.half().contiguous()}, str(args.out), metadata=meta)  # float16: 1.8 MB
    print(f"{args.out}: {len(docs)} documents, R² per layer {[round(x, 3) for x in r2]} (fit), "
          f"{[round(x, 3) for x in r2_valid]} (validation)")


TEST_DOCS = 100


def measure_test(summarizer, data: Path, path: Path) -> None:
    """The lens's R² per layer out of sample, on BBC News Summary's test part (the first TEST_DOCS
    articles), written into its metadata as ``r2_test`` (tensors unchanged)."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    from training.data import bbc_docs

    with safe_open(str(path), "pt") as f:
        A, b, meta = f.get_tensor("A"), f.get_tensor("b"), dict(f.metadata() or {})
    r2 = r_squared(A.float(), b.float(), vectors(summarizer, [d.text for d in bbc_docs(data, "test")[:TEST_DOCS]]))
    meta |= {"r2_test": json.dumps([round(x, 4) for x in r2]), "test": f"bbc test[:{TEST_DOCS}]",
             "test_command": "python -m training.lens --test"}
    save_file({"A": A.contiguous(), "b": b.contiguous()}, str(path), metadata=meta)
    print(f"{path}: R² per layer on {TEST_DOCS} BBC test documents {[round(x, 3) for x in r2]}")


if __name__ == "__main__":
    main()
