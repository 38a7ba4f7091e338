"""The report opened from disk in a real headless Chromium (Playwright).

Needs the ``playwright`` Python package and a Chromium binary at ``/usr/bin/chromium``
(the Debian package; ``playwright install`` is not used). When either is missing the
test is skipped, except on CI (``CI=true``), where it fails. The full-page screenshot
goes to ``$DISPATCHLAB_SCREENSHOT_DIR/report.png`` (or the test's tmp folder).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dispatchlab.experiment.campaign import store
from dispatchlab.platform import Platform
from dispatchlab.report.html import write_report
from test_report import _outcome

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _missing(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def test_report_renders_in_headless_chromium(tmp_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install playwright)")
    if not CHROMIUM.is_file():
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")

    db = tmp_path / "results.duckdb"
    con = store.open_write(db)
    pool = Platform.pooled(64)
    for d in ("fifo", "easy"):
        for p in ("walltime", "real"):
            store.store_outcome(con, _outcome(f"{d}-{p}", d, p, pool, "pool64"))
    failed = _outcome("broken", "fifo", "walltime", pool, "pool64", store_rows=False)
    failed.update(status="failed", summary=None, error="ValueError: boom",
                  series_start=None, series_end=None)
    store.store_outcome(con, failed)
    con.close()
    index = write_report(db, tmp_path / "report")
    # 4 slowdown/bsld figures, prediction errors, queue distribution, 2 over time, Gantt
    expected_images = 9

    shots = Path(os.environ.get("DISPATCHLAB_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("console", lambda m: errors.append(f"console: {m.text}")
                    if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(index.resolve().as_uri(), wait_until="load")
            images = page.eval_on_selector_all(
                "img", "els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight,"
                " e.getBoundingClientRect().width])")
            rows = page.eval_on_selector_all("#runs tbody tr", "els => els.length")
            failed_rows = page.eval_on_selector_all("#runs tbody tr.failed", "els => els.length")
            page.screenshot(path=str(shots / "report.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert len(images) == expected_images
    for complete, width, height, shown in images:
        assert complete and width > 0 and height > 0 and shown > 0
    assert rows == 5 and failed_rows == 1
    # only the page itself and its data: URIs were requested (nothing from the network)
    assert all(u.startswith(("file://", "data:")) for u in requests), requests
    assert (shots / "report.png").stat().st_size > 10_000
