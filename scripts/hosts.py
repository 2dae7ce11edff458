"""Several hosts on one machine: network namespaces (``ip netns``) joined by a bridge, each with an
address of its own, to run the app as it runs on several machines, and to break it as they break.

    sudo python -m scripts.hosts [--app-hosts 2] [--port 8080]      # by hand: Ctrl-C stops it

stands up a PostgreSQL host (``db``), app hosts (``app1``, ``app2`` …, one Streamlit process
each, every one on ``MICROSCOPE_STORE=postgresql://…db…``) and nginx in this machine's own
namespace in front of them with the sticky cookie (scripts/serve.py), and prints the addresses.
The tests (tests/test_faults.py) use the same pieces: ``Hosts`` (namespaces; ``cut``/``mend`` a
host's link), ``Postgres`` (a server in a folder: ``stop``/``start``), ``app_server`` (Streamlit
in a namespace). Needs root (namespaces, veth pairs, a bridge) and Debian's nginx and
postgresql; everything made is removed on exit.
"""
from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.common import Postgres, Server, pg_bin  # noqa: E402,F401  (Postgres: the tests' too)


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True)


def namespaces_possible() -> str | None:
    """None if this machine lets us make namespaces and links, else why not (for a test's skip)."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        return "needs root and iproute2 (ip netns)"
    name = f"micprobe{secrets.token_hex(3)}"
    try:
        sh("ip", "netns", "add", name)
        sh("ip", "link", "add", name[:15], "type", "bridge")
        sh("ip", "link", "del", name[:15])
        return None
    except (subprocess.CalledProcessError, OSError) as e:
        return f"cannot make network namespaces here ({getattr(e, 'stderr', b'') or e})"
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


class Hosts:
    """Namespaces ``names`` on a bridge in 10.X.Y.0/24; this machine's own namespace is .1 (so
    nginx and browsers here reach every host), the hosts .2, .3 … in order. ``ip(name)``;
    ``run(name, argv)`` (a command prefix for Popen); ``cut(name)``/``mend(name)``: its link
    down/up, as a pulled cable (the host keeps running, nothing reaches it)."""

    def __init__(self, names: list[str]):
        self.names, self.tag = list(names), secrets.token_hex(2)
        self.net = f"10.{200 + secrets.randbelow(50)}.{secrets.randbelow(250) + 1}"
        self.bridge = f"micbr{self.tag}"

    def ns(self, name: str) -> str:
        return f"mic{self.tag}-{name}"

    def ip(self, name: str) -> str:
        return f"{self.net}.{self.names.index(name) + 2}"

    def link(self, name: str) -> str:
        return f"mic{self.tag}h{self.names.index(name)}"  # this side of the host's veth pair (≤ 15 chars)

    def run(self, name: str, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.ns(name), *argv]

    def __enter__(self):
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
            sh("ip", "addr", "add", f"{self.net}.1/24", "dev", self.bridge)
            sh("ip", "link", "set", self.bridge, "up")
            for name in self.names:
                ns, here = self.ns(name), self.link(name)
                sh("ip", "netns", "add", ns)
                sh("ip", "link", "add", here, "type", "veth", "peer", "name", "eth0", "netns", ns)
                sh("ip", "link", "set", here, "master", self.bridge, "up")
                sh("ip", "-n", ns, "addr", "add", f"{self.ip(name)}/24", "dev", "eth0")
                sh("ip", "-n", ns, "link", "set", "eth0", "up")
                sh("ip", "-n", ns, "link", "set", "lo", "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def cut(self, name: str) -> None:
        sh("ip", "link", "set", self.link(name), "down")

    def mend(self, name: str) -> None:
        sh("ip", "link", "set", self.link(name), "up")

    def __exit__(self, *exc):
        for name in self.names:
            subprocess.run(["ip", "netns", "del", self.ns(name)], capture_output=True)  # its veth goes too
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


def app_server(hosts: Hosts, name: str, log: Path, store: str, port: int = 8501, **env: str) -> Server:
    """One Streamlit app process on host ``name`` (its address, port ``port``), on ``store``."""
    return Server(log, env={"MICROSCOPE_STORE": store, **env}, port=port, address=hosts.ip(name),
                  prefix=hosts.run(name, []))


def main(argv=None) -> None:
    from contextlib import ExitStack

    from scripts.serve import Proxy
    from ui.store import private_folder

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--app-hosts", type=int, default=2)
    p.add_argument("--port", type=int, default=8080, help="nginx's port on this machine (default 8080)")
    p.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()) / "microscope_hosts")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))  # kill: clean up too
    why = namespaces_possible()
    if why:
        raise SystemExit(why)
    private_folder(args.logs)
    apps = [f"app{i + 1}" for i in range(args.app_hosts)]
    secret = secrets.token_urlsafe(32)  # nginx → app hosts: who is asking (scripts/serve.py)
    with ExitStack() as stack:
        hosts = stack.enter_context(Hosts(["db", *apps]))
        db = stack.enter_context(Postgres(hosts.ip("db"), prefix=hosts.run("db", [])))
        servers = [stack.enter_context(app_server(hosts, a, args.logs / f"{a}.log", db.url,
                                                  MICROSCOPE_PROXY_SECRET=secret)) for a in apps]
        proxy = stack.enter_context(Proxy([f"{hosts.ip(a)}:{s.port}" for a, s in zip(apps, servers)], args.port,
                                          serve_classes=False, secret=secret))
        print(f"PostgreSQL on db ({db.url}); " + ", ".join(f"{a} at {s.url}" for a, s in zip(apps, servers))
              + f"; nginx at {proxy.url}. In a host: ip netns exec {hosts.ns('app1')} … — Ctrl-C stops it all.",
              flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
