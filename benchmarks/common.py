"""Helpers shared by the benchmark scripts, the load test and the browser test: the app server,
headless Chromium, free ports, process memory, a memory watchdog, medians and JSON output.
No Streamlit, no model code here."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def host_rules(name: str) -> list[str]:
    """Chromium's arguments that make the host ``name`` this machine (127.0.0.1), as a school's DNS
    or a ``.local`` name would: the browser then sends that name as Host and in its Origin."""
    return [f"--host-resolver-rules=MAP {name} 127.0.0.1"] if name else []


def launch_chromium(playwright, extra_args: list[str] | None = None):
    """Debian's Chromium through Playwright's Python client (never ``playwright install``)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + (extra_args or []),
                                      headless=True)


async def gather_in_chromium(make, extra_args: list[str] | None = None) -> list:
    """``make(browser)`` → coroutines, run together in one headless Debian Chromium (async Playwright):
    the load test's and the workshop's sessions."""
    import asyncio

    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + (extra_args or []))
        try:
            return await asyncio.gather(*make(browser))
        finally:
            await browser.close()


def wait_healthy(proc: subprocess.Popen, url: str, timeout_s: float, what: str) -> None:
    """Until ``url`` answers (Streamlit's /_stcore/health); RuntimeError if ``proc`` exits first."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        try:  # our own process's health: a self-signed certificate is not checked
            urllib.request.urlopen(url + "/_stcore/health", timeout=2,
                                   context=ssl._create_unverified_context() if url.startswith("https") else None)
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{what} did not answer within {timeout_s} s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


def rss_mb(pid: int) -> dict:
    """VmRSS (now) and VmHWM (peak) of one process, in MB."""
    return {"rss_mb": round(_status_kb(pid, "VmRSS") / 1024, 1), "hwm_mb": round(_status_kb(pid, "VmHWM") / 1024, 1)}


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc/*/stat parent ids)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def chromium_rss_mb(root: int | None = None) -> float:
    """Summed VmRSS of the Chromium processes started by this process (shared pages counted
    once per process, so an upper bound)."""
    total = 0
    for p in descendants(root or os.getpid()):
        try:
            if "chrom" in Path(f"/proc/{p}/comm").read_text():
                total += _status_kb(p, "VmRSS")
        except FileNotFoundError:
            pass
    return round(total / 1024, 1)


class Watchdog:
    """Samples Chromium's summed RSS every ``every`` s; past ``limit_mb`` calls ``on_limit`` once
    (e.g. close the browser) so a runaway page cannot take the machine's memory."""

    def __init__(self, limit_mb: float, on_limit, every: float = 0.25):
        self.limit_mb, self.on_limit, self.every = limit_mb, on_limit, every
        self.peak_mb, self.tripped = 0.0, False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(self.every):
            mb = chromium_rss_mb()
            self.peak_mb = max(self.peak_mb, mb)
            if mb > self.limit_mb and not self.tripped:
                self.tripped = True
                self.on_limit()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)


def kill_chromium_children(sig: int = 9) -> None:
    """Kill the Chromium processes below this process (only ours, by pid)."""
    for p in descendants(os.getpid()):
        try:
            if "chrom" in Path(f"/proc/{p}/comm").read_text():
                os.kill(p, sig)
        except (FileNotFoundError, ProcessLookupError):
            pass


def median(xs: list[float], nd: int = 3) -> float | None:
    xs = [x for x in xs if x is not None]
    return round(statistics.median(xs), nd) if xs else None


def private(path, flags: int) -> int:
    """``open``'s opener for a file only its owner may read (logs hold pasted documents' errors)."""
    return os.open(path, flags, 0o600)


class Server:
    """``streamlit run app.py [-- app_args]`` on a free port in its own process group; stopped on exit.
    ``address``/``prefix``: another address to listen on and a command to run it under (scripts/hosts.py:
    ``ip netns exec HOST``)."""

    def __init__(self, log: Path, timeout_s: float = 180, env: dict[str, str] | None = None, port: int | None = None,
                 app_args: tuple[str, ...] = (), address: str = "127.0.0.1", prefix: list[str] | None = None):
        self.port, self.log, self.timeout_s, self.env = port or free_port(), log, timeout_s, env or {}
        self.app_args, self.address, self.prefix = tuple(app_args), address, list(prefix or [])
        self.url = f"http://{address}:{self.port}"

    def __enter__(self):
        cmd = self.prefix + [sys.executable, "-m", "streamlit", "run", "app.py", "--server.address", self.address,
               "--server.port", str(self.port), "--server.headless", "true",
               "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
        cmd += ["--", *self.app_args] if self.app_args else []
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=open(self.log, "a", opener=private), stderr=subprocess.STDOUT,
                                     start_new_session=True, env={**os.environ, **self.env})
        try:
            wait_healthy(self.proc, self.url, self.timeout_s, f"streamlit (log: {self.log})")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process (all its threads) has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def write_json(name: str, result: dict, path: str | None = None) -> Path:
    out = Path(path) if path else RESULTS / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    return out


def now() -> float:
    return time.perf_counter()


def bert_base_fixture() -> tuple[Path, Path]:
    """The paper's model at its shape with random weights (benchmarks/presumm_fixture.py), written
    once to $TMPDIR/microscope_bert_base (~0.9 GB) and reused: (backbone dir, checkpoint)."""
    from benchmarks.presumm_fixture import write

    folder = Path(os.environ.get("TMPDIR", "/tmp")) / "microscope_bert_base"
    backbone, checkpoint = folder / "bert-base-uncased", folder / "bertext_cnndm_transformer.pt"
    if not (checkpoint.is_file() and (backbone / "model.safetensors").is_file()):
        write(folder)
    return backbone, checkpoint


def pg_bin() -> Path | None:
    for d in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (d / "initdb").exists():
            return d
    return None


class Postgres:
    """A PostgreSQL server (Debian's package) in a temporary folder, listening on ``address:port``,
    run by ``prefix`` (e.g. ``Hosts.run(name, [])``: in a namespace); as the ``postgres`` user when
    we are root. ``url``; ``stop()`` (fast: sessions are cut, as in a crash or a restart) and
    ``start()``; removed on exit."""

    def __init__(self, address: str = "127.0.0.1", port: int = 5432, prefix: list[str] | None = None):
        self.bin = pg_bin()
        if self.bin is None:
            raise RuntimeError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
        self.address, self.port, self.prefix = address, port, list(prefix or [])
        self.url = f"postgresql://postgres@{address}:{port}/postgres"

    def _pg(self, *argv: str, check: bool = True) -> None:
        as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run(self.prefix + as_user + [str(self.bin / argv[0]), *argv[1:]], check=check, capture_output=True)

    def __enter__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="microscope_pg_"))  # not under pytest's folder: root-only
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        self._pg("initdb", "-D", str(self.folder / "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        with open(self.folder / "data" / "pg_hba.conf", "a") as f:  # the other hosts on its network (test hosts)
            f.write("host all all samenet trust\n")
        self.start()
        return self

    def start(self) -> None:
        self._pg("pg_ctl", "-D", str(self.folder / "data"), "-l", str(self.folder / "log"), "-w", "-o",
                 f"-p {self.port} -k {self.folder} -c listen_addresses={self.address}", "start")

    def stop(self) -> None:
        self._pg("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")

    def __exit__(self, *exc):
        self._pg("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.folder, ignore_errors=True)
