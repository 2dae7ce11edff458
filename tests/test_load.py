"""The load test (scripts/load_test.py) at a small size: concurrent browser sessions on one
server each see only their own documents, and the server's memory stays bounded."""
from pathlib import Path

import pytest

from scripts.load_test import run

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="Debian chromium is not installed")]


def test_three_sessions_see_only_their_own_documents(tmp_path):
    result = run(sessions=3, docs=3, data=tmp_path)  # no data there: the shipped examples
    print("\nload:", result)
    assert result["summaries"] == 9 and result["p50_s"] > 0
    assert result["server_peak_rss_mb"] < 3000
