"""The app's shared state, in a real database: the documents behind links (a link names a pasted
document by ``ui.link.doc_id``) and the classes a teacher leads (ui/classroom). Every app
process pointing at the same store sees the same rows, also after a restart.

    MICROSCOPE_STORE=/srv/microscope/documents.sqlite3            # SQLite, embedded (default:
                                                                  # ~/.cache/attention-microscope/)
    MICROSCOPE_STORE=postgresql://user:pass@db-host/microscope    # PostgreSQL, for several machines

SQLite: writes are short transactions, in write-ahead-log mode (readers do not wait for them).
Several processes on one machine share the file safely; SQLite's documentation warns against
sharing it over a network file system (its locks there are unreliable, and the write-ahead log
needs shared memory): for app processes on several machines use PostgreSQL.
Bounded: the ``max_documents`` most recently summarized or opened are kept; classes past their
expiry are removed when a class starts.

Faults (docs/reliability.md): a PostgreSQL server that is restarting, down or cut off, or an SQLite
disk that is full, raises ``Unavailable`` (one plain sentence) from any call, never a driver's
error; the app says so and keeps what it shows (ui.errors.shared). A connection that a restart
broke is dropped with every idle one, and the call tried once more on a new one; after PostgreSQL
could not be reached, calls fail at once for RETRY_S (a page makes several). A transaction is
all or nothing, so a failed write leaves the store as it was."""
from __future__ import annotations

import os
import queue
import secrets
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

TABLES = (  # DOUBLE PRECISION: PostgreSQL's REAL is 4 bytes, too coarse for time.time()
    "CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, text TEXT NOT NULL, used DOUBLE PRECISION NOT NULL)",
    "CREATE INDEX IF NOT EXISTS documents_used ON documents(used)",
    "CREATE TABLE IF NOT EXISTS classes (code TEXT PRIMARY KEY, state TEXT NOT NULL, version INTEGER NOT NULL, "
    "expires DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS attendance (code TEXT NOT NULL, session TEXT NOT NULL, "
    "seen DOUBLE PRECISION NOT NULL, following INTEGER NOT NULL, PRIMARY KEY (code, session))",
    "CREATE TABLE IF NOT EXISTS leaders (code TEXT PRIMARY KEY, key_hash TEXT NOT NULL, poll TEXT NOT NULL)",
    # which session leads a class now (a resume moves it): only it publishes, moves the lesson or ends the class
    "CREATE TABLE IF NOT EXISTS leads (code TEXT PRIMARY KEY, session TEXT NOT NULL)",
    # wrong passwords and resume keys per client (ui.classroom: Throttle), shared by every process
    "CREATE TABLE IF NOT EXISTS throttle (who TEXT PRIMARY KEY, failures INTEGER NOT NULL, "
    "last DOUBLE PRECISION NOT NULL)",
    # a class's answers (ui/classroom/answers.py): a seat is a student's browser (a random token, never a
    # name; numbered by when it first sat), one answer per seat and step until the step is revealed
    "CREATE TABLE IF NOT EXISTS seats (code TEXT NOT NULL, token TEXT NOT NULL, joined DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (code, token))",
    # which client address each seat came from (the cap of new seats per address), and the seats refused
    "CREATE TABLE IF NOT EXISTS seat_clients (code TEXT NOT NULL, token TEXT NOT NULL, client TEXT NOT NULL, "
    "PRIMARY KEY (code, token))",
    "CREATE TABLE IF NOT EXISTS seat_refused (code TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    # a class's room as its teacher set it: closed to new seats, and new seats allowed per address
    "CREATE TABLE IF NOT EXISTS rooms (code TEXT PRIMARY KEY, locked INTEGER NOT NULL, cap INTEGER NOT NULL)",
    # a teacher's own lesson file a class plays (its TOML), so a reload or another browser of the teacher has it
    "CREATE TABLE IF NOT EXISTS class_lessons (code TEXT NOT NULL, name TEXT NOT NULL, text TEXT NOT NULL, "
    "PRIMARY KEY (code, name))",
    # a seat that left to explore while a step's answer was hidden: its answer to that step is final
    "CREATE TABLE IF NOT EXISTS left_steps (code TEXT NOT NULL, step TEXT NOT NULL, seat TEXT NOT NULL, "
    "PRIMARY KEY (code, step, seat))",
    "CREATE TABLE IF NOT EXISTS answers (code TEXT NOT NULL, step TEXT NOT NULL, seat TEXT NOT NULL, "
    "answer TEXT NOT NULL, correct INTEGER, at DOUBLE PRECISION NOT NULL, PRIMARY KEY (code, step, seat))",
    "CREATE TABLE IF NOT EXISTS revealed (code TEXT NOT NULL, step TEXT NOT NULL, PRIMARY KEY (code, step))",
    # homework (ui/classroom/homework.py): a class no one steps, due when the class expires; owner = the hash of
    # the teacher's results key
    "CREATE TABLE IF NOT EXISTS homework (code TEXT PRIMARY KEY, lesson TEXT NOT NULL, due DOUBLE PRECISION NOT NULL, "
    "after_due INTEGER NOT NULL, owner TEXT NOT NULL)",
    # stories (ui/stories.py): saved views with notes, by a random id; owner = the hash of its maker's token
    "CREATE TABLE IF NOT EXISTS stories (id TEXT PRIMARY KEY, steps TEXT NOT NULL, owner TEXT NOT NULL, "
    "updated DOUBLE PRECISION NOT NULL)",
    # a story being presented: the step shown, for its presenter view in another window
    "CREATE TABLE IF NOT EXISTS presenting (story TEXT PRIMARY KEY, step INTEGER NOT NULL, "
    "started DOUBLE PRECISION NOT NULL, moved DOUBLE PRECISION NOT NULL)",
    # the server's own secrets (the key of document ids: ui.link.doc_id), made once, kept across restarts
    "CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)")


class Unavailable(RuntimeError):
    """The shared store cannot be read or written now (the message says why, for the page)."""


# libpq: give up connecting after 3 s, and on a connection whose packets go unanswered for 5 s
# (a cut network otherwise hangs a query for TCP's ~15 minutes of retransmissions)
PG_TIMEOUTS = {"connect_timeout": 3, "tcp_user_timeout": 5000, "keepalives_idle": 5, "keepalives_interval": 2,
               "keepalives_count": 2}
RETRY_S = 3.0  # after PostgreSQL could not be reached, calls fail at once for this long before trying again
SQLITE_FAULTS = ("full", "disk i/o", "unable to open", "readonly", "locked")  # not the caller's own mistakes


def cache_folder() -> Path:
    """The app's folder in the user's cache ($XDG_CACHE_HOME, else ~/.cache): the default home of
    the document store and of corpus runs."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-microscope"


def default_path() -> Path:
    return cache_folder() / "documents.sqlite3"


def private_folder(folder: Path) -> Path:
    """``folder``, made if missing, readable by its owner only (0700); refused (SystemExit, one
    sentence) if another user owns it: whoever made it could read or replace what is put there."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = folder.stat()
    if st.st_uid != os.geteuid():
        raise SystemExit(f"{folder} belongs to another user (uid {st.st_uid}): choose a folder of your own.")
    if st.st_mode & 0o077:
        folder.chmod(0o700)
    return folder


def private_file(path: Path) -> None:
    """A file (and its folder) only its owner may read, made empty before anything is written to it:
    the SQLite store (pasted documents and class codes; SQLite gives its -wal and -shm files the
    database file's mode), a corpus upload's input and log (ui.corpus_runs)."""
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True)
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:  # made by an earlier version (0644): made private if it is ours
        st = path.stat()
        if st.st_mode & 0o077 and st.st_uid == os.geteuid():
            path.chmod(0o600)


class Store:
    """SQLite (a path) or PostgreSQL (a ``postgresql://`` URL): the same tables and queries, written
    with ``?`` placeholders (turned into ``%s`` for psycopg). Sessions run on many threads and each
    call takes an open connection from this object's pool (one per call running at once; a
    PostgreSQL connection is a server process, too dear to open per query). Make one per process
    (``ui.resources.document_store``)."""

    def __init__(self, where: str | Path, max_documents: int = 2000):
        self.where, self.max_documents = str(where), max_documents
        self.postgres = self.where.startswith(("postgresql://", "postgres://"))
        self._idle: queue.SimpleQueue = queue.SimpleQueue()  # connections not in use
        self._ready = False  # tables made: on the first call that reaches the store (it may be down now)
        self._down: tuple[float, str] | None = None  # PostgreSQL unreachable: (until when not to try, why)
        self._secrets: dict[str, str] = {}

    def _connect(self):
        if self.postgres:
            import psycopg  # only for a PostgreSQL store

            return psycopg.connect(self.where, autocommit=True, **PG_TIMEOUTS)
        private_file(Path(self.where))
        db = sqlite3.connect(self.where, timeout=30, isolation_level=None, check_same_thread=False)
        # Write-ahead log: readers never wait for a writer (a class's students read at once while
        # the teacher writes), and a commit appends without a sync of the disk (NORMAL): a power
        # cut may lose the last few writes, never the database. Kept in the file once set.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        return db

    @contextmanager
    def _connection(self):
        try:
            db, reused = self._idle.get_nowait(), True
        except queue.Empty:
            db, reused = self._connect(), False
        try:
            yield db
        except BaseException as e:
            db.close()  # in an unknown state: not reused
            e.reused = reused  # a pooled connection a restart broke: worth one more try (run)
            raise
        self._idle.put(db)

    def _fault(self, e: Exception) -> str | None:
        """Why the store is unreachable, if ``e`` says it is (else None: a bug, raised as it is)."""
        if self.postgres:
            import psycopg

            if isinstance(e, (psycopg.OperationalError, psycopg.InterfaceError)):
                return "the shared store (PostgreSQL) cannot be reached"
            return None
        if isinstance(e, (sqlite3.OperationalError, OSError)) and any(w in str(e).lower() for w in SQLITE_FAULTS):
            return ("the shared store's disk is full" if "full" in str(e).lower()
                    else f"the shared store cannot be written ({e})")
        return None

    def _drain(self) -> None:
        """Close every idle connection: after a fault they are likely broken too."""
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return
            except Exception:  # noqa: BLE001  closing a broken connection
                pass

    def run(self, query: str, args: tuple = (), fetch: bool = False, *more: tuple[str, tuple]):
        """``query`` (then each of ``more``) in one transaction; the first query's rows if ``fetch``.
        A lone read takes no lock (SQLite: the write-ahead log's snapshot). Raises ``Unavailable``
        when the store cannot be reached (after one more try, if a reused connection failed)."""
        down = self._down
        if down and time.monotonic() < down[0]:  # unreachable a moment ago: say so at once, not after 3 s
            raise Unavailable(down[1])
        for attempt in (1, 2):
            try:
                if not self._ready:
                    for statement in TABLES:
                        self._run(statement, (), False, ())
                    self._ready = True
                return self._run(query, args, fetch, more)
            except Exception as e:  # noqa: BLE001  sorted by _fault
                why = self._fault(e)
                if why is None:
                    raise
                self._drain()
                if attempt == 2 or not getattr(e, "reused", False):
                    if self.postgres:  # a run makes several calls: one wait for the server, not one each
                        self._down = (time.monotonic() + RETRY_S, why)
                    raise Unavailable(why) from e

    def _run(self, query: str, args: tuple, fetch: bool, more):
        q = (lambda text: text.replace("?", "%s")) if self.postgres else (lambda text: text)
        with self._connection() as db:
            if fetch and not more:
                return db.execute(q(query), args).fetchall()
            if self.postgres:
                with db.transaction():
                    return self._all(db, q(query), args, fetch, [(q(text), a) for text, a in more])
            db.execute("BEGIN IMMEDIATE")
            rows = self._all(db, query, args, fetch, more)
            db.execute("COMMIT")
            return rows

    @staticmethod
    def _all(db, query: str, args: tuple, fetch: bool, more) -> list | None:
        cursor = db.execute(query, args)
        rows = cursor.fetchall() if fetch else None
        for text, a in more:
            db.execute(text, a)
        return rows

    # ---------------------------------------------------------------- documents behind links

    def put(self, doc_id: str, text: str) -> None:
        self.run("INSERT INTO documents VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET used = excluded.used",
                 (doc_id, text, time.time()), False,
                 ("DELETE FROM documents WHERE id IN (SELECT id FROM documents ORDER BY used DESC "
                  f"LIMIT {'ALL' if self.postgres else '-1'} OFFSET ?)", (self.max_documents,)))

    def get(self, doc_id: str) -> str | None:
        """The document's text (now the most recently used), or None if it is not (or no longer) here.
        A full disk still lets it be read (only its "used" time then stays)."""
        rows = self.run("SELECT text FROM documents WHERE id = ?", (doc_id,), True)
        if rows:
            try:
                self.run("UPDATE documents SET used = ? WHERE id = ?", (time.time(), doc_id))
            except Unavailable:
                pass
        return rows[0][0] if rows else None

    def secret(self, name: str) -> str:
        """A random secret of this server's, made on first use and the same for every process on
        this store (read once per process)."""
        if name not in self._secrets:
            self.run("INSERT INTO secrets VALUES (?, ?) ON CONFLICT(name) DO NOTHING", (name, secrets.token_hex(32)))
            self._secrets[name] = self.run("SELECT value FROM secrets WHERE name = ?", (name,), True)[0][0]
        return self._secrets[name]

    def __len__(self) -> int:
        return self.run("SELECT COUNT(*) FROM documents", (), True)[0][0]


DocumentStore = Store  # the name before classes joined the documents
