"""Issue 47, the serving side (docs/security.md): the real scripts/serve.py cluster behind nginx.
Who the app believes a client is (a forged X-Real-IP straight to an app port, with and without the
proxy's secret), HTTPS (TLS, websockets over it, the cookie's flags, HSTS, plain HTTP redirected),
nginx hardened (no version, unprivileged workers, connections per address) and private files."""
from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not shutil.which("nginx") and not Path("/usr/sbin/nginx").exists(),
                                 reason="nginx is not installed (the README's test command installs it)")]

CONN_LIMIT = 20  # small here, so the test reaches it; scripts/serve.py's CONN_LIMIT is the real one
FORGED = "203.0.113.9"


@pytest.fixture(scope="module")
def tls_cluster(tmp_path_factory):
    """One app process behind nginx over HTTPS with a self-signed certificate (openssl), a teacher
    password, and CONN_LIMIT connections per address."""
    from scripts.serve import Cluster

    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=localhost", "-addext",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    with Cluster(1, folder / "serve", env={"MICROSCOPE_TEACHER_PASSWORD": "owl"}, certfile=cert, keyfile=key,
                 conn_limit=CONN_LIMIT) as c:
        c.cert = cert
        yield c


def curl(*args: str) -> str:
    """Response headers of one request (curl -D -)."""
    return subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", "--max-time", "10", *args],
                          capture_output=True, text=True, check=True).stdout


def test_https_websockets_over_tls_the_cookies_flags_hsts_and_plain_http_redirected(tls_cluster):
    from playwright.sync_api import sync_playwright

    from benchmarks.common import launch_chromium

    url = tls_cluster.url
    assert url.startswith("https://")
    head = curl("--cacert", str(tls_cluster.cert), url + "/")  # the certificate checked
    assert head.startswith("HTTP/1.1 200")
    cookie = next(line for line in head.splitlines() if line.lower().startswith("set-cookie: microscope_route="))
    assert all(flag in cookie for flag in ("Secure", "HttpOnly", "SameSite=Lax")), cookie
    assert "strict-transport-security: max-age=" in head.lower()
    assert "server: nginx" in head.lower().splitlines()  # no version (server_tokens off)
    plain = curl("http://" + url.split("://")[1] + "/bert_attention?class=ABCDEF")
    assert plain.startswith("HTTP/1.1 301") and f"Location: {url}/bert_attention?class=ABCDEF" in plain, plain
    with sync_playwright() as p:  # the app itself (its websocket) over TLS: wss://
        browser = launch_chromium(p)
        page = browser.new_context(ignore_https_errors=True).new_page()
        sockets = []
        page.on("websocket", lambda ws: sockets.append(ws.url))
        page.goto(url + "/")
        page.get_by_role("textbox", name="Document", exact=True).wait_for(timeout=120_000)
        browser.close()
    assert sockets and all(s.startswith("wss://") for s in sockets), sockets


def test_a_forged_client_address_is_believed_only_with_the_proxys_secret(tls_cluster):
    """Wrong teacher passwords are counted per client (ui.classroom.client). Sent straight to the app
    port, a forged X-Real-IP with a made-up proxy header counts against the socket's peer (which
    Streamlit reports as no address on loopback: "unknown"), not the forged address; with the
    run's secret (what nginx sends) it is believed; through nginx, nginx's own address for the
    client replaces whatever the browser sent."""
    from playwright.sync_api import sync_playwright

    from benchmarks.common import launch_chromium
    from ui.store import Store

    store = Store(tls_cluster.store)
    store.run("DELETE FROM throttle")

    def wrong_password(url: str, headers: dict, https: bool = False) -> set:
        context = browser.new_context(extra_http_headers=headers, ignore_https_errors=https)
        page = context.new_page()
        page.goto(url + "/")
        side = page.get_by_test_id("stSidebar")
        side.get_by_text("Class & lessons").click()
        side.get_by_label("Teacher password").fill("not it")
        side.get_by_role("button", name="Start a class").click()
        side.get_by_text("Wrong teacher password").wait_for(timeout=120_000)
        context.close()
        return {row[0] for row in store.run("SELECT who FROM throttle", (), True)}

    direct = tls_cluster.servers[0].url
    with sync_playwright() as p:
        browser = launch_chromium(p)
        assert wrong_password(direct, {"X-Microscope-Proxy": "nginx", "X-Real-IP": FORGED}) == {"unknown"}
        store.run("DELETE FROM throttle")
        assert wrong_password(direct, {"X-Microscope-Proxy": tls_cluster.secret, "X-Real-IP": FORGED}) == {FORGED}
        store.run("DELETE FROM throttle")
        assert wrong_password(tls_cluster.url, {"X-Microscope-Proxy": tls_cluster.secret, "X-Real-IP": FORGED},
                              https=True) == {"127.0.0.1"}
        browser.close()


def test_nginx_runs_its_workers_unprivileged_and_limits_connections_per_address(tls_cluster):
    """Workers as www-data or nobody when started as root; past CONN_LIMIT open connections from one
    address (websockets held open, as sessions hold theirs) the next is answered 429."""
    if os.geteuid() == 0:
        users = {Path(f"/proc/{pid}").stat().st_uid for pid in tls_cluster.proxy_pids()[1:]}
        assert users and 0 not in users, users
    port = int(tls_cluster.url.rsplit(":", 1)[1])
    context = ssl._create_unverified_context()

    def websocket() -> tuple[socket.socket, str]:
        s = context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
        s.sendall(b"GET /_stcore/stream HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
        return s, s.recv(200).decode("latin-1").split("\r\n", 1)[0]

    held = []
    try:
        for _ in range(CONN_LIMIT):
            s, status = websocket()
            held.append(s)
            assert " 101 " in status, status
        s, status = websocket()
        held.append(s)
        assert " 429 " in status, status
    finally:
        for s in held:
            s.close()
    time.sleep(0.5)
    s, status = websocket()  # the held ones closed: served again
    s.close()
    assert " 101 " in status, status


def test_servers_files_are_private_and_a_folder_of_another_user_is_refused(tls_cluster, tmp_path):
    """The cluster's folder (logs, the SQLite store) is 0700 and its files 0600; scripts/serve.py's
    default is a per-user state folder, not a shared temporary one; a folder another user made
    first is refused (they could read or replace what goes in it)."""
    from scripts.serve import main, state_folder
    from ui.store import private_folder

    folder = Path(tls_cluster.log_dir)
    assert folder.stat().st_mode & 0o777 == 0o700
    store = Path(tls_cluster.store)  # here the tests' own store (conftest), made by the same code
    assert store.parent.stat().st_mode & 0o077 == 0
    files = [folder / "app1.log", *store.parent.glob(store.name + "*")]
    assert len(files) >= 2 and all(f.stat().st_mode & 0o077 == 0 for f in files), \
        {f.name: oct(f.stat().st_mode) for f in files}
    assert str(state_folder()).startswith(str(Path.home())) or os.environ.get("XDG_STATE_HOME")
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    private_folder(loose)
    assert loose.stat().st_mode & 0o777 == 0o700
    if os.geteuid() != 0:
        pytest.skip("making a folder of another user needs root")
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)  # nobody
    with pytest.raises(SystemExit, match="belongs to another user"):
        main(["--logs", str(theirs), "--processes", "1"])


def test_csp_frames_secure_cookies_and_private_nginx_files(tls_cluster):
    """Issue 57: nginx sends a Content-Security-Policy (no other host's content, framed only by the
    app itself); Streamlit's own cookie is Secure under TLS; nginx's configuration, which holds the
    proxy secret, and its log are readable by their owner only. And the app works under the CSP: a
    summary and a heatmap drawn in Chromium with no violation reported."""
    from playwright.sync_api import sync_playwright

    from benchmarks.common import launch_chromium

    head = curl("--cacert", str(tls_cluster.cert), tls_cluster.url + "/")
    policy = next(line for line in head.splitlines() if line.lower().startswith("content-security-policy:"))
    assert "frame-ancestors 'self'" in policy and "default-src 'self'" in policy and "img-src 'self' data: blob:" in policy
    xsrf = [line for line in head.splitlines() if line.lower().startswith("set-cookie: _streamlit_xsrf")]
    assert all("secure" in line.lower() for line in xsrf), xsrf
    folder = tls_cluster.proxy.dir
    assert all((folder / f).stat().st_mode & 0o077 == 0 for f in ("nginx.conf", "error.log")), \
        {f: oct((folder / f).stat().st_mode) for f in ("nginx.conf", "error.log")}
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_context(ignore_https_errors=True).new_page()
        refused = []
        page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(tls_cluster.url + "/")
        page.get_by_role("button", name="Try an example").click()
        page.get_by_test_id("stMain").locator(".js-plotly-plot .main-svg").first.wait_for(timeout=120_000)
        page.get_by_test_id("stSidebarNav").get_by_text("BERT attention", exact=True).click()
        page.locator(".js-plotly-plot .hm image").first.wait_for(timeout=120_000)
        assert page.get_by_test_id("stException").count() == 0
        browser.close()
    assert not refused, refused[:3]


def test_a_forwarded_for_header_straight_to_an_app_port_is_not_believed(tls_cluster):
    """Issue 57: uvicorn (under Streamlit) would take X-Forwarded-For from loopback as the client's
    address; serve.py's app processes believe none (FORWARDED_ALLOW_IPS empty) and the app calls
    such a request "unknown" besides: a local user cannot be throttled or logged as someone else."""
    from playwright.sync_api import sync_playwright

    from benchmarks.common import launch_chromium
    from ui.store import Store

    store = Store(tls_cluster.store)
    store.run("DELETE FROM throttle")
    with sync_playwright() as p:
        browser = launch_chromium(p)
        context = browser.new_context(extra_http_headers={"X-Forwarded-For": FORGED})
        page = context.new_page()
        page.goto(tls_cluster.servers[0].url + "/")
        side = page.get_by_test_id("stSidebar")
        side.get_by_text("Class & lessons").click()
        side.get_by_label("Teacher password").fill("not it")
        side.get_by_role("button", name="Start a class").click()
        side.get_by_text("Wrong teacher password").wait_for(timeout=120_000)
        browser.close()
    assert {row[0] for row in store.run("SELECT who FROM throttle", (), True)} == {"unknown"}


def test_serve_stops_everything_it_started_on_sigterm_and_sighup(tmp_path):
    """A service manager stops serve.py with SIGTERM (a closed terminal sends SIGHUP): nginx and every
    app process it started go with it."""
    import signal as sig

    from benchmarks.common import descendants, free_port, wait_healthy

    for signum in (sig.SIGTERM, sig.SIGHUP):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "scripts/serve.py", "--processes", "1", "--port",
                                 str(port), "--listen", "127.0.0.1", "--logs", str(tmp_path / f"logs{signum}")],
                                cwd=Path(__file__).resolve().parents[1], stdout=open(tmp_path / f"out{signum}", "w"),
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            wait_healthy(proc, f"http://127.0.0.1:{port}", 120, "serve.py")
            deadline = time.time() + 30  # passwords: the teacher link, a new random token each run
            while "Teacher link" not in (said := (tmp_path / f"out{signum}").read_text()) and time.time() < deadline:
                time.sleep(0.2)
            assert re.search(rf"Teacher link .*: http://127\.0\.0\.1:{port}/\?teacher=[\w-]{{32}}\n", said), said
            started = descendants(proc.pid)
            assert len(started) >= 2, started  # an app process and nginx (and its workers)
            proc.send_signal(signum)
            proc.wait(60)
            deadline = time.time() + 30
            while any(Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
                      for pid in started):
                assert time.time() < deadline, [pid for pid in started if Path(f"/proc/{pid}").exists()]
                time.sleep(0.2)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, sig.SIGKILL)
