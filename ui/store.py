"""The documents behind links, in SQLite: a link names a pasted document by ``ui.link.doc_id``
and any app process that opens the same file finds it, also after a restart. Several processes
(or machines, on a shared file system whose locks work) can point at one file: writes are short
transactions in SQLite's default rollback-journal mode (WAL would be faster but does not work
over a network file system).

    MICROSCOPE_STORE=/srv/microscope/documents.sqlite3   # default: ~/.cache/attention-microscope/

Bounded: the ``max_documents`` most recently summarized or opened are kept."""
from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path


def cache_folder() -> Path:
    """The app's folder in the user's cache ($XDG_CACHE_HOME, else ~/.cache): the default home of
    the document store and of corpus runs."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-microscope"


def default_path() -> Path:
    return cache_folder() / "documents.sqlite3"


class DocumentStore:
    def __init__(self, path: str | Path, max_documents: int = 2000):
        self.path, self.max_documents = Path(path), max_documents
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as db:
            db.execute("CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, text TEXT NOT NULL, "
                       "used REAL NOT NULL)")
            db.execute("CREATE INDEX IF NOT EXISTS documents_used ON documents(used)")

    def _connect(self) -> sqlite3.Connection:
        # one short-lived connection per call: sessions run on many threads, processes share the file
        return sqlite3.connect(self.path, timeout=30, isolation_level=None)

    def put(self, doc_id: str, text: str) -> None:
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            db.execute("INSERT INTO documents VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET used = excluded.used",
                       (doc_id, text, time.time()))
            db.execute("DELETE FROM documents WHERE id IN (SELECT id FROM documents ORDER BY used DESC "
                       "LIMIT -1 OFFSET ?)", (self.max_documents,))
            db.execute("COMMIT")

    def get(self, doc_id: str) -> str | None:
        """The document's text (now the most recently used), or None if it is not (or no longer) here."""
        with self._connect() as db:
            row = db.execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()
            if row is not None:
                db.execute("UPDATE documents SET used = ? WHERE id = ?", (time.time(), doc_id))
        return None if row is None else row[0]

    def __len__(self) -> int:
        with self._connect() as db:
            return db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
