"""One attention head, named one way (issue 69): ("bert" | "inter", layer, head), 0-based inside
(a plain tuple too, as ``mask_heads`` and ``Summary.masked_heads`` hold it), 1-based outside as the
app shows heads: ``spec`` "bert:5.3" (links, lesson files, ``--mask-heads``), ``label`` "BERT 5.3".
No torch: the app's registry of controls reads it."""
from __future__ import annotations

import re
from typing import NamedTuple

PART_NAMES = {"bert": "BERT", "inter": "Sentence encoder"}
SPEC = re.compile(r"\s*(bert|inter):(\d{1,4})[.:](\d{1,4})\s*")  # (":" between layer and head: links before issue 69)


class Head(NamedTuple):
    part: str
    layer: int
    head: int

    @classmethod
    def parse(cls, spec: str) -> "Head":
        """``"bert:5.3"`` (or ``"bert:5:3"``), 1-based → Head("bert", 4, 2); ValueError in words."""
        m = SPEC.fullmatch(spec) if isinstance(spec, str) else None
        if not m or int(m[2]) < 1 or int(m[3]) < 1:
            raise ValueError(f"{str(spec)[:40]!r} is not a head such as bert:5.3 (encoder, layer and head; numbers from 1)")
        return cls(m[1], int(m[2]) - 1, int(m[3]) - 1)

    @property
    def spec(self) -> str:
        return f"{self.part}:{self.layer + 1}.{self.head + 1}"

    @property
    def label(self) -> str:
        return f"{PART_NAMES[self.part]} {self.layer + 1}.{self.head + 1}"
