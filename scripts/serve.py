"""Serve a workshop: several app processes behind nginx, each browser session kept on one of them.

    python scripts/serve.py --processes 2 --port 8080 [--listen 0.0.0.0] [--upstream HOST:PORT ...]

Streamlit runs every session of a process on about one core, so past a handful of students the
conventional way to scale is more processes behind a reverse proxy with sticky sessions: a
session's websocket, uploads and downloads must reach the process that holds it. nginx (Debian's
``nginx``) sends a browser's first request to a random process and sets a cookie naming that
choice (``hash $cookie consistent``); ``ip_hash`` would send a whole classroom behind one NAT to
one process. What processes must share is shared: the documents behind links live in one SQLite
file (MICROSCOPE_STORE, given to every process; on several machines, a path they all mount).
Each process keeps its own model and caches.

``--upstream`` adds app processes started elsewhere (``streamlit run app.py --server.port P`` on
another machine with the same MICROSCOPE_STORE). Ctrl-C stops everything this started."""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.common import Server, descendants, free_port, wait_healthy  # noqa: E402
from model.load import parse_model_spec  # noqa: E402

NGINX_CONF = """\
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
  # class version files: a classroom behind one NAT polls at 2/s per student, so allow 100/s per
  # address (50 students) with bursts; a prober gets 429 past that (the names are random anyway)
  limit_req_zone $binary_remote_addr zone=classes:1m rate={poll_rate}r/s;
  # sticky sessions: the first request picks a process at random, the cookie keeps the browser there
  map $cookie_microscope_route $microscope_route {{ '' $request_id; default $cookie_microscope_route; }}
  upstream microscope {{
    hash $microscope_route consistent;
{servers}
  }}
  server {{
    listen {listen}:{port};
    client_max_body_size 2m;
{classes}    location / {{
      proxy_pass http://microscope;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Microscope-Proxy nginx;  # the class version file is ours to serve: read it often
      proxy_set_header X-Real-IP $remote_addr;  # who is asking (ui.classroom throttles wrong passwords per client)
      proxy_read_timeout 1d;
      proxy_connect_timeout 3s;  # a host that does not answer (cut off): the next one, not a minute's wait
      add_header Set-Cookie "microscope_route=$microscope_route; Path=/; HttpOnly; SameSite=Lax" always;
{extra}    }}
  }}
}}
"""


POLL_RATE = 100  # version-file reads per second per client address (a NAT'd class of 50 polls at this rate)
CLASSES_FROM_DISK = """\
    location /app/static/classes/ {{
      # a class's version, read by every student's browser twice a second (ui/classroom.py): from disk here
      limit_req zone=classes burst={poll_burst} nodelay;
      limit_req_status 429;
      alias {folder}/;
      add_header Cache-Control "no-store";
    }}
"""


class Proxy:
    """nginx in front of ``upstreams`` ("host:port"), listening on ``listen:port``. ``serve_classes``:
    nginx reads the class version files from this machine's disk (app processes here write them);
    off (app processes on other machines: scripts/hosts.py), each process serves its own copy.
    ``show_upstream``: responses say which process answered (X-Microscope-Upstream; for tests)."""

    def __init__(self, upstreams: list[str], port: int | None = None, listen: str = "127.0.0.1",
                 serve_classes: bool = True, show_upstream: bool = False):
        self.upstreams, self.port, self.listen = upstreams, port or free_port(), listen
        self.serve_classes, self.show_upstream = serve_classes, show_upstream
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            raise SystemExit("nginx is not installed: apt-get install -y nginx")
        self.dir = Path(tempfile.mkdtemp(prefix="microscope_nginx_"))
        user = "user root root;\n" if os.geteuid() == 0 else ""  # root: workers may write the temp folders
        servers = "\n".join(f"    server {u};" for u in self.upstreams)
        from ui.classroom import STATIC

        STATIC.mkdir(parents=True, exist_ok=True)
        classes = CLASSES_FROM_DISK.format(folder=STATIC, poll_burst=2 * POLL_RATE) if self.serve_classes else ""
        extra = '      add_header X-Microscope-Upstream $upstream_addr always;\n' if self.show_upstream else ""
        (self.dir / "nginx.conf").write_text(NGINX_CONF.format(user=user, dir=self.dir, servers=servers,
                                                               listen=self.listen, port=self.port, classes=classes,
                                                               poll_rate=POLL_RATE,
                                                               extra=extra))
        self.proc = subprocess.Popen([nginx, "-p", str(self.dir), "-c", str(self.dir / "nginx.conf"), "-e", "stderr",
                                      "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     start_new_session=True)
        try:
            wait_healthy(self.proc, self.url, 20, "nginx")
        except BaseException:
            if self.proc.poll() is not None:
                print(self.proc.stderr.read().decode(), file=sys.stderr)
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


class Cluster:
    """``processes`` app processes sharing one document store, behind nginx (``processes=1``
    and no ``upstreams``: the one process, no proxy)."""

    def __init__(self, processes: int, log_dir: Path, port: int | None = None, listen: str = "127.0.0.1",
                 upstreams: tuple[str, ...] = (), env: dict[str, str] | None = None, app_args: tuple[str, ...] = ()):
        self.processes, self.log_dir, self.port, self.listen = processes, Path(log_dir), port, listen
        self.upstreams, self.env, self.app_args = list(upstreams), dict(env or {}), tuple(app_args)

    def __enter__(self):
        self.stack = ExitStack()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        env = {"MICROSCOPE_STORE": str(self.log_dir / "documents.sqlite3"), **os.environ, **self.env}
        self.store = env["MICROSCOPE_STORE"]  # what the processes share
        try:
            self.servers = [self.stack.enter_context(Server(self.log_dir / f"app{i + 1}.log", env=env,
                                                              app_args=self.app_args))
                            for i in range(self.processes)]
            upstreams = [f"127.0.0.1:{s.port}" for s in self.servers] + self.upstreams
            self.proxy = None
            if len(upstreams) == 1 and self.port is None:
                self.url = self.servers[0].url
            else:
                self.proxy = self.stack.enter_context(Proxy(upstreams, self.port, self.listen))
                self.url = self.proxy.url
        except BaseException:
            self.stack.close()
            raise
        return self

    def pids(self) -> list[int]:
        return [s.proc.pid for s in self.servers]

    def proxy_pids(self) -> list[int]:
        """nginx's master and workers (none without a proxy)."""
        if self.proxy is None:
            return []
        return [self.proxy.proc.pid, *descendants(self.proxy.proc.pid)]

    def __exit__(self, *exc):
        self.stack.close()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--processes", type=int, default=2, help="app processes on this machine (default 2)")
    p.add_argument("--port", type=int, default=8080, help="the proxy's port (default 8080)")
    p.add_argument("--listen", default="0.0.0.0", help="the proxy's address (default all interfaces)")
    p.add_argument("--upstream", action="append", default=[], metavar="HOST:PORT",
                   help="an app process on another machine (repeatable)")
    p.add_argument("--logs", type=Path, default=Path(tempfile.gettempdir()) / "microscope_serve",
                   help="app logs (and, unless MICROSCOPE_STORE is set, the shared document store)")
    p.add_argument("--model", action="append", default=[], metavar="NAME=BACKBONE_DIR[,CHECKPOINT]",
                   help="a model every app process offers (repeatable; as for streamlit run app.py -- --model)")
    p.add_argument("--models", action="append", default=[], metavar="FILE.toml", help="models from a TOML file")
    args = p.parse_args(argv)
    specs = [parse_model_spec(m) for m in args.model]  # the app processes run in the repository: absolute paths
    app_args = tuple(a for m in specs for a in ("--model", f"{m.name}={m.backbone.resolve()}" + (
        f",{m.checkpoint.resolve()}" if m.checkpoint else ""))) + tuple(
        a for f in args.models for a in ("--models", str(Path(f).resolve())))
    with Cluster(args.processes, args.logs, args.port, args.listen, tuple(args.upstream), app_args=app_args) as cluster:
        print(f"Serving {args.processes} app processes (+{len(args.upstream)} elsewhere) at "
              f"http://{args.listen}:{args.port} — Ctrl-C stops them. Logs: {args.logs}", flush=True)
        try:
            while all(s.proc.poll() is None for s in cluster.servers):
                time.sleep(1)
            print("an app process stopped; see its log", file=sys.stderr)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
