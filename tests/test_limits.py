"""Issue 68, limits: every text a visitor sends is limited, and work stops when its session goes.
Four clients paste the largest document the server takes (100,000 characters, ~10 CPU-s a
Summarize here), click Summarize and hang up after 2 s: the server must not go on computing for
them (it left 73 CPU-s behind with 1 MB references before)."""
from __future__ import annotations

import time

import pytest

from benchmarks.common import Server, cpu_seconds
from browsing import ARTICLE, open_app

pytestmark = pytest.mark.browser

LONGEST = ((ARTICLE + "\n") * 40)[:100_000]  # MICROSCOPE_MAX_CHARS' default


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    with Server(tmp_path_factory.mktemp("limits") / "streamlit.log") as s:
        yield s


def test_limits_work_stops_when_four_clients_hang_up_mid_summarize(app, browser):
    pages = [open_app(browser, app.url) for _ in range(4)]
    for page in pages:
        page.get_by_role("textbox", name="Document", exact=True).fill(LONGEST)
    for page in pages:
        page.get_by_role("button", name="Summarize").click()
    time.sleep(2)
    for page in pages:
        page.close()  # hung up mid-run
    time.sleep(1)  # each run's next BERT window sees its session gone
    before = cpu_seconds(app.proc.pid)
    time.sleep(8)
    left = cpu_seconds(app.proc.pid) - before
    print(f"CPU-s the server spent in the 8 s after four clients hung up: {left:.2f}")
    assert left < 2.0, left  # a whole Summarize of this document is ~10 CPU-s; four were asked for
