"""Where the Corpus page finds corpus runs, and what it accepts: one root folder on the server
(MICROSCOPE_CORPUS_ROOT), the runs under it and the shipped example, nothing else; uploads
checked before anything runs; old runs removed. No Streamlit here.

Whose runs (issue 57): the example and the runs made on the server's command line (folders
directly under the root) are public, listed to every visitor. A run uploaded in the app belongs to
whoever started it: it lives under ``uploads/`` in a folder named by a random 128-bit token, is
listed only in its maker's session, and opens elsewhere only by a link naming ``upload:TOKEN``
(unguessable, as a story's id)."""
from __future__ import annotations

import os
import re
import secrets
import shutil
import time
from pathlib import Path

from ui.store import cache_folder, private_folder

ROOT = Path(__file__).resolve().parents[1]
MAX_DOCS = 200
EXAMPLE = ROOT / "examples" / "corpus"  # a small run shipped with the app (examples/corpus/README.md)
EXAMPLE_NAME = "Example: 50 BBC News articles"


def corpus_root() -> Path:
    """Where corpus runs live (env MICROSCOPE_CORPUS_ROOT, default ~/.cache/attention-microscope/corpus):
    the page opens runs under it and nothing else on the server."""
    return Path(os.environ.get("MICROSCOPE_CORPUS_ROOT") or cache_folder() / "corpus")


def run_dir(name: str) -> Path:
    """The run ``name`` under the corpus root; ValueError for anything that would leave it."""
    root = corpus_root().resolve()
    path = (root / name).resolve() if 0 < len(name) <= 255 and "\0" not in name else root
    if path.parent != root:
        raise ValueError(f"“{name}” is not a corpus run of this server: runs live in its corpus folder")
    return path


UPLOADS = "uploads"  # the folder of uploaded runs under the root, one token-named folder each
UPLOAD = "upload:"  # an uploaded run's name: UPLOAD + its token
TOKEN = re.compile(r"[A-Za-z0-9_-]{22}")  # secrets.token_urlsafe(16)


def new_upload() -> tuple[str, Path]:
    """A new uploaded run's name (``upload:TOKEN``) and its folder, made private as the store is:
    the uploads folder and the run's 0700, owner checked (another user's folder: ValueError, one
    sentence); what the run writes there is 0600 (``ui.store.private_file``, and the run's process
    is started with umask 077: pages/corpus.py)."""
    token = secrets.token_urlsafe(16)
    try:
        path = private_folder(private_folder(corpus_root() / UPLOADS) / token)
    except SystemExit as e:  # another user's folder: said on the page, nothing written
        raise ValueError(str(e)) from None
    return UPLOAD + token, path


def folder(name: str) -> Path:
    """Where the run ``name`` is: the example, an upload by its token, or a public run under the root;
    ValueError for anything else."""
    if name == EXAMPLE_NAME:
        return EXAMPLE
    if name.startswith(UPLOAD):
        if not TOKEN.fullmatch(name[len(UPLOAD):]):
            raise ValueError("that is not the name of an uploaded corpus run")
        return corpus_root() / UPLOADS / name[len(UPLOAD):]
    return run_dir(name)


def runs(own=()) -> dict[str, Path]:
    """The example, this session's uploads (``own``: their names), then the public runs under the
    root, newest first. Folders named ``upload-…`` are uploads an older version kept under the root:
    never listed."""
    root = corpus_root()
    found = sorted((p for p in root.glob("*/report.json") if not p.parent.name.startswith(("upload-", UPLOADS))),
                   key=lambda p: p.stat().st_mtime, reverse=True) if root.is_dir() else []
    mine = {}
    for name in own:
        try:
            if (folder(name) / "report.json").is_file():
                mine[name] = folder(name)
        except ValueError:
            pass
    return {EXAMPLE_NAME: EXAMPLE, **mine, **{p.parent.name: p.parent for p in found}}


def prune(keep: int = int(os.environ.get("MICROSCOPE_CORPUS_KEEP", 20)), days: float = 7,
          max_mb: float = float(os.environ.get("MICROSCOPE_CORPUS_MB", 2000))) -> None:
    """Remove runs beyond the ``keep`` newest, older than ``days``, or past ``max_mb`` in all
    (the oldest go first)."""
    root = corpus_root()
    uploads = root / UPLOADS
    dirs = sorted((p for base in (root, uploads) if base.is_dir() for p in base.iterdir() if p.is_dir() and p != uploads),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    total = 0.0
    for n, d in enumerate(dirs):
        total += sum(f.stat().st_size for f in d.rglob("*") if f.is_file()) / 2 ** 20
        if n >= keep or time.time() - d.stat().st_mtime > days * 86400 or total > max_mb:
            shutil.rmtree(d, ignore_errors=True)


def check_upload(data: bytes) -> list[str]:
    """The upload's documents (non-blank lines), or ValueError with one line saying what is wrong."""
    if not data.strip():
        raise ValueError("The file is empty" if not data else "The file has only blank lines: no documents")
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if len(lines) > MAX_DOCS:
        raise ValueError(f"The file has {len(lines):,} documents; the app runs up to {MAX_DOCS}: run larger "
                         "corpora with python -m analysis corpus")
    return lines


