"""Serve a workshop: several app processes behind nginx, each browser session kept on one of them.

    python scripts/serve.py --processes 2 --port 8080 [--listen 0.0.0.0] [--upstream HOST:PORT ...]
                            [--certfile CERT.pem --keyfile KEY.pem]

Streamlit runs every session of a process on about one core, so past a handful of students the
conventional way to scale is more processes behind a reverse proxy with sticky sessions: a
session's websocket, uploads and downloads must reach the process that holds it. nginx (Debian's
``nginx``) sends a browser's first request to a random process and sets a cookie naming that
choice (``hash $cookie consistent``); ``ip_hash`` would send a whole classroom behind one NAT to
one process. What processes must share is shared: the documents behind links live in one SQLite
file (MICROSCOPE_STORE, given to every process; on several machines, a path they all mount).
Each process keeps its own model and caches.

``--upstream`` adds app processes started elsewhere (``streamlit run app.py --server.port P`` on
another machine with the same MICROSCOPE_STORE, and this run's MICROSCOPE_PROXY_SECRET, printed at
start). Ctrl-C, SIGTERM or SIGHUP stops everything this started.

Security (docs/security.md): nginx tells the app who is asking (X-Real-IP, for the password
throttle) with a secret header the app checks (MICROSCOPE_PROXY_SECRET: random per run unless set);
a request without it is its socket's peer. ``--certfile``/``--keyfile``: HTTPS and websockets over
TLS, the route cookie and Streamlit's cookies Secure, HSTS, plain HTTP on that port redirected. nginx
sends a Content-Security-Policy (no other host's content; framed only by the app itself unless
--frame-ancestors says who else), hides its version, runs its workers as an unprivileged user when
started as root, and limits each address's connections; its configuration (which holds the
secret) and its log are readable by their owner only, and the app processes believe no
X-Forwarded-For.
Logs and the store default to a private per-user folder (0700, owner checked)."""
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
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.common import Server, descendants, free_port, wait_healthy  # noqa: E402
from model.load import parse_model_spec  # noqa: E402
from ui.classroom.address import base as public_base, check_public_url  # noqa: E402
from ui.classroom.session import PROXY_SECRET  # noqa: E402
from ui.classroom.teacher import TOKEN as TEACHER_TOKEN  # noqa: E402
from ui.store import private_folder  # noqa: E402

NGINX_CONF = """\
{user}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
  server_tokens off;  # no version in the Server header or error pages
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
  # a session holds its websocket (1 day): at most {conn_limit} connections per address (CONN_LIMIT)
  limit_conn_zone $binary_remote_addr zone=per_address:1m;
  # sticky sessions: the first request picks a process at random, the cookie keeps the browser there
  map $cookie_microscope_route $microscope_route {{ '' $request_id; default $cookie_microscope_route; }}
  upstream microscope {{
    hash $microscope_route consistent;
{servers}
  }}
  server {{
    listen {listen}:{port}{ssl};
{tls}    client_max_body_size 2m;
{classes}{bundle}    location / {{
      limit_conn per_address {conn_limit};
      limit_conn_status 429;
      proxy_pass http://microscope;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      # the name and port the browser used: Streamlit accepts a websocket only when its Origin's host:port
      # equals Host ($host alone drops the port: a grey page at http://classroom.test:8611)
      proxy_set_header Host $http_host;
      # this run's secret: only with it does the app believe X-Real-IP, who is asking (ui.classroom.session.client:
      # wrong passwords are throttled per client); nginx replaces whatever a browser sent in either
      proxy_set_header X-Microscope-Proxy {secret};
      proxy_set_header X-Real-IP $remote_addr;
      proxy_read_timeout 1d;
      proxy_connect_timeout 3s;  # a host that does not answer (cut off): the next one, not a minute's wait
      add_header Set-Cookie "microscope_route=$microscope_route; Path=/; HttpOnly; SameSite=Lax{secure}" always;
      add_header Content-Security-Policy "{csp}" always;
{plain}{cookie_flags}{hsts}{extra}    }}
  }}
}}
"""


POLL_RATE = 100  # version-file reads per second per client address (a NAT'd class of 50 polls at this rate)
# connections per client address on /: a browser holds its websocket and opens a few requests beside it
# (static files, uploads); a class of 60 behind one NAT at 3 each, with room to spare
CONN_LIMIT = 200
CLASSES = """\
    location /app/static/classes/ {{
      # a class's version, read by every student's browser twice a second (ui/classroom): from disk,
      # or from the app processes where nginx's workers cannot read the folder or it is on other machines
      limit_req zone=classes burst={poll_burst} nodelay;
      limit_req_status 429;
      {source}
      add_header Cache-Control "no-store";
{plain}{hsts}    }}
"""
BUNDLE = """\
    location /static/ {{
      # Streamlit's own browser code, 8 MB to every new browser, its files named by content hash: from a
      # gzipped copy made at start (streamlit_bundle), not from the app processes, where it cost
      # 0.11 CPU-s a new student (benchmarks/README.md); a file not in the copy (an upstream running
      # another Streamlit version) from them
      root {root};
      types {{ text/javascript js; text/css css; image/svg+xml svg; font/woff2 woff2; image/png png; image/gif gif; }}
      default_type application/octet-stream;
      gzip_static on;
      gzip_vary on;
      try_files $uri @app;
      add_header Cache-Control "public, immutable, max-age=31536000";
{plain}{hsts}    }}
    location @app {{
      proxy_pass http://microscope;
      proxy_set_header Host $http_host;
      proxy_connect_timeout 3s;
    }}
"""
TEXT = (".js", ".css", ".svg", ".json", ".html", ".map", ".txt")  # what gzip shrinks (fonts, images: already packed)


def streamlit_bundle(root: Path) -> Path:
    """A copy of Streamlit's browser code (its ``static/static``, served at /static/) under
    ``root/static``, with the plotly.js of the app's charts where the app serves it (ui.wire.plotly_js),
    each text file with its gzip beside it for nginx's gzip_static (~28 MB of JavaScript → ~8 MB,
    0.5 s at start), readable by nginx's workers."""
    import gzip

    import streamlit

    from ui.wire import plotly_js

    shutil.copytree(Path(streamlit.__file__).parent / "static" / "static", root / "static")
    url, plotly = plotly_js()
    (root / url).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly, root / url)
    for p in [root, *root.rglob("*")]:
        if p.is_file() and p.suffix in TEXT:
            gz = p.with_name(p.name + ".gz")
            gz.write_bytes(gzip.compress(p.read_bytes(), 6, mtime=0))
            gz.chmod(0o644)
        p.chmod(0o755 if p.is_dir() else 0o644)
    return root


TLS = """\
    ssl_certificate {certfile};
    ssl_certificate_key {keyfile};
    ssl_protocols TLSv1.2 TLSv1.3;
    error_page 497 =301 https://$host:$server_port$request_uri;  # plain HTTP on this port: to HTTPS
"""
HSTS = '      add_header Strict-Transport-Security "max-age=31536000" always;\n'
# every response: a browser takes a file as the type it is sent with, never as what its bytes look like
# (a stored text read as HTML or script); and no address of the app (?class=, ?story=, a results key)
# goes to another site as a Referer when a link in a lesson or a document is followed
PLAIN = ('      add_header X-Content-Type-Options "nosniff" always;\n'
         '      add_header Referrer-Policy "no-referrer" always;\n')
# What the app's pages load: its own scripts and styles (Streamlit and Plotly use inline styles, the
# components inline scripts), images from itself and data:/blob: URLs (charts, the QR code), its
# websocket ('self' covers ws: and wss: to the same host and port). No other host: an image a lesson names
# from elsewhere is not fetched, and no script sends anything to another host. frame-ancestors:
# who may frame the app (--frame-ancestors; default itself only).
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval' blob:; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
       "frame-src 'self' blob: data:; object-src 'none'; base-uri 'self'; form-action 'self'; "
       "frame-ancestors {ancestors}")
SECURE_COOKIES = "      proxy_cookie_flags ~ secure;  # Streamlit's cookies (_streamlit_xsrf) too, under TLS\n"


def worker_user() -> tuple[str, str] | None:
    """nginx's workers' user and group when started as root (Debian's www-data, else nobody); None
    when not root (they run as whoever started nginx)."""
    import grp
    import pwd

    if os.geteuid() != 0:
        return None
    for name in ("www-data", "nobody"):
        try:
            pw = pwd.getpwnam(name)
            return name, grp.getgrgid(pw.pw_gid).gr_name
        except KeyError:
            continue
    raise SystemExit("no unprivileged user (www-data, nobody) for nginx's workers")


def others_can_read(folder: Path) -> bool:
    """Whether a user other than its owner can list ``folder`` (every folder above it crossable)."""
    folder = folder.resolve()
    return (folder.stat().st_mode & 0o005 == 0o005
            and all(p.stat().st_mode & 0o001 for p in folder.parents))


class Proxy:
    """nginx in front of ``upstreams`` ("host:port"), listening on ``listen:port``. ``serve_classes``:
    nginx reads the class version files from this machine's disk (app processes here write them);
    off (app processes on other machines: scripts/hosts.py), each process serves its own copy.
    ``show_upstream``: responses say which process answered (X-Microscope-Upstream; for tests).
    ``secret``: what the app processes got as MICROSCOPE_PROXY_SECRET. ``certfile``/``keyfile``: HTTPS."""

    def __init__(self, upstreams: list[str], port: int | None = None, listen: str = "127.0.0.1",
                 serve_classes: bool = True, show_upstream: bool = False, secret: str = "",
                 certfile: Path | None = None, keyfile: Path | None = None, conn_limit: int = CONN_LIMIT,
                 frame_ancestors: str = "'self'"):
        if any(c in frame_ancestors for c in ";\"{}$\\\n"):
            raise ValueError("--frame-ancestors takes sources such as 'self' https://school.example")
        self.frame_ancestors = frame_ancestors
        self.upstreams, self.port, self.listen = upstreams, port or free_port(), listen
        self.serve_classes, self.show_upstream = serve_classes, show_upstream
        self.secret, self.conn_limit = secret, conn_limit
        self.certfile, self.keyfile = (Path(certfile).resolve() if certfile else None,
                                       Path(keyfile).resolve() if keyfile else None)
        self.url = f"{'https' if self.certfile else 'http'}://127.0.0.1:{self.port}"

    def __enter__(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        if not Path(nginx).exists():
            raise SystemExit("nginx is not installed: apt-get install -y nginx")
        if not self.secret or any(c in self.secret for c in " ;'\"{}$\\"):
            raise ValueError("the proxy secret must be a token (letters, digits, - and _)")
        self.dir = Path(tempfile.mkdtemp(prefix="microscope_nginx_"))  # 0700: the secret is in its nginx.conf
        worker = worker_user()
        if worker:  # the workers cross into it to their temp folders (nginx makes those theirs), no more
            self.dir.chmod(0o711)
        servers = "\n".join(f"    server {u};" for u in self.upstreams)
        from ui.classroom import STATIC

        STATIC.mkdir(parents=True, exist_ok=True)
        hsts = HSTS if self.certfile else ""
        from_disk = self.serve_classes and (worker is None or others_can_read(STATIC))
        # (proxied: a host that does not answer is given up after 3 s, as on /: a poll must not hang on a cut link)
        classes = CLASSES.format(source=f"alias {STATIC}/;" if from_disk else
                                 "proxy_pass http://microscope; proxy_connect_timeout 3s; proxy_set_header Host $http_host;",
                                 poll_burst=2 * POLL_RATE, hsts=hsts, plain=PLAIN)
        extra = '      add_header X-Microscope-Upstream $upstream_addr always;\n' if self.show_upstream else ""
        bundle = BUNDLE.format(root=streamlit_bundle(self.dir / "bundle"), hsts=hsts, plain=PLAIN)
        tls = TLS.format(certfile=self.certfile, keyfile=self.keyfile) if self.certfile else ""
        conf = self.dir / "nginx.conf"  # it holds the proxy secret: readable by its owner only, as its log
        for name in ("nginx.conf", "error.log"):
            os.close(os.open(self.dir / name, os.O_CREAT | os.O_WRONLY, 0o600))
        conf.write_text(NGINX_CONF.format(
            user=f"user {worker[0]} {worker[1]};\n" if worker else "", dir=self.dir, servers=servers,
            listen=self.listen, port=self.port, ssl=" ssl" if self.certfile else "", tls=tls, classes=classes, bundle=bundle,
            poll_rate=POLL_RATE, conn_limit=self.conn_limit, secret=self.secret,
            secure="; Secure" if self.certfile else "", hsts=hsts, extra=extra,
            csp=CSP.format(ancestors=self.frame_ancestors), plain=PLAIN, cookie_flags=SECURE_COOKIES if self.certfile else ""))
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
                 upstreams: tuple[str, ...] = (), env: dict[str, str] | None = None, app_args: tuple[str, ...] = (),
                 certfile: Path | None = None, keyfile: Path | None = None, conn_limit: int = CONN_LIMIT,
                 frame_ancestors: str = "'self'"):
        self.frame_ancestors = frame_ancestors
        self.processes, self.log_dir, self.port, self.listen = processes, Path(log_dir), port, listen
        self.upstreams, self.env, self.app_args = list(upstreams), dict(env or {}), tuple(app_args)
        self.certfile, self.keyfile, self.conn_limit = certfile, keyfile, conn_limit
        # the app processes believe nginx's X-Real-IP only with this (random per run unless given)
        self.secret = self.env.get(PROXY_SECRET) or os.environ.get(PROXY_SECRET) or secrets.token_urlsafe(32)

    def __enter__(self):
        self.stack = ExitStack()
        private_folder(self.log_dir)
        # FORWARDED_ALLOW_IPS empty: uvicorn (under Streamlit) believes no X-Forwarded-For, not even from
        # loopback, where a local user could send one straight to an app port; nginx names the client
        # with X-Real-IP and the secret instead (ui.classroom.session.client)
        env = {"MICROSCOPE_STORE": str(self.log_dir / "documents.sqlite3"), **os.environ, **self.env,
               PROXY_SECRET: self.secret, "FORWARDED_ALLOW_IPS": ""}
        self.store = env["MICROSCOPE_STORE"]  # what the processes share
        try:
            self.servers = [self.stack.enter_context(Server(self.log_dir / f"app{i + 1}.log", env=env,
                                                              app_args=self.app_args))
                            for i in range(self.processes)]
            upstreams = [f"127.0.0.1:{s.port}" for s in self.servers] + self.upstreams
            self.proxy = None
            if len(upstreams) == 1 and self.port is None and self.certfile is None:
                self.url = self.servers[0].url
            else:
                self.proxy = self.stack.enter_context(Proxy(upstreams, self.port, self.listen, secret=self.secret,
                                                            certfile=self.certfile, keyfile=self.keyfile,
                                                            conn_limit=self.conn_limit,
                                                            frame_ancestors=self.frame_ancestors))
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
    p.add_argument("--logs", type=Path, default=state_folder() / "serve",
                   help="app logs (and, unless MICROSCOPE_STORE is set, the shared document store); made private "
                        "(0700), refused if another user owns it (default: %(default)s)")
    p.add_argument("--certfile", type=Path, help="serve HTTPS with this certificate (PEM, the chain after it)")
    p.add_argument("--keyfile", type=Path, help="the certificate's private key (PEM)")
    p.add_argument("--model", action="append", default=[], metavar="NAME=BACKBONE_DIR[,CHECKPOINT]",
                   help="a model every app process offers (repeatable; as for streamlit run app.py -- --model)")
    p.add_argument("--models", action="append", default=[], metavar="FILE.toml", help="models from a TOML file")
    p.add_argument("--frame-ancestors", default="'self'", metavar="SOURCES",
                   help="who may show the app in a frame (CSP frame-ancestors; default: %(default)s, the app itself; "
                        "e.g. \"'self' https://school.example\" to embed it there)")
    args = p.parse_args(argv)
    if bool(args.certfile) != bool(args.keyfile):
        p.error("--certfile and --keyfile go together")
    if problem := check_public_url():  # every join link and QR code would be one no student can open
        p.error(f"MICROSCOPE_PUBLIC_URL={os.environ['MICROSCOPE_PUBLIC_URL']}: {problem}")
    specs = [parse_model_spec(m) for m in args.model]  # the app processes run in the repository: absolute paths
    app_args = tuple(a for m in specs for a in ("--model", f"{m.name}={m.backbone.resolve()}" + (
        f",{m.checkpoint.resolve()}" if m.checkpoint else ""))) + tuple(
        a for f in args.models for a in ("--models", str(Path(f).resolve())))
    def stop(signum, frame):  # a service manager's SIGTERM, a closed terminal's SIGHUP: as Ctrl-C, all stopped
        raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)
    # the teacher link replaces a password (ui.classroom.teacher): random per run unless given
    token = os.environ.get(TEACHER_TOKEN) or secrets.token_urlsafe(24)
    with Cluster(args.processes, args.logs, args.port, args.listen, tuple(args.upstream), app_args=app_args,
                 env={TEACHER_TOKEN: token}, certfile=args.certfile, keyfile=args.keyfile,
                 frame_ancestors=args.frame_ancestors) as cluster:
        scheme = "https" if args.certfile else "http"
        base = public_base(f"{scheme}://{where(args.listen)}:{args.port}")  # what the join links are made on
        print(f"Serving {args.processes} app processes (+{len(args.upstream)} elsewhere) at "
              f"{base} — Ctrl-C stops them. Logs: {args.logs}", flush=True)
        print(f"Teacher link (only the teacher's browser: it starts and leads classes): {base}/?teacher={token}",
              flush=True)
        if not args.certfile:
            print("Plain HTTP: passwords and resume keys cross the network in clear (docs/security.md, "
                  "--certfile/--keyfile).", flush=True)
        if args.upstream:
            print(f"Start each --upstream app process with {PROXY_SECRET}={cluster.secret} and "
                  f"{TEACHER_TOKEN}={token} in its environment and --server.address set to its private "
                  "interface (docs/security.md).", flush=True)
        try:
            while all(s.proc.poll() is None for s in cluster.servers):
                time.sleep(1)
            print("an app process stopped; see its log", file=sys.stderr)
        except KeyboardInterrupt:
            pass


def where(listen: str) -> str:
    """The host to print for ``--listen``: 0.0.0.0 and :: mean every interface and open nothing in a
    browser (a join link made there is one no student can open), so this machine's name instead."""
    import socket

    return socket.gethostname() if listen in ("0.0.0.0", "::", "") else listen


def state_folder() -> Path:
    """The user's own state folder ($XDG_STATE_HOME, else ~/.local/state) for this app."""
    return Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "attention-microscope"


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # (stopped while starting: everything started is stopped already)
        pass
