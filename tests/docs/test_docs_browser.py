"""Every page of the built site opened in a real headless Chromium (Playwright).

Each page loads from disk without a console error or a page error, has a title, asks
nothing from the network (only ``file:`` and ``data:`` URLs), and every image on it has
loaded (non-zero natural size). Screenshots of five pages (home, a tutorial, a
reproduction, the command-line reference, an API page) go to
``$DISPATCHLAB_SCREENSHOT_DIR`` (or the test's scratch folder). Needs the ``playwright``
package and ``/usr/bin/chromium``; skipped when either is missing, except on CI
(``CI=true``), where it fails (as the report's browser test).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from docs_site import built_site, pages
from test_report_browser import ARGS, CHROMIUM, _missing

pytestmark = [pytest.mark.browser, pytest.mark.docs]
__all__ = ["built_site"]  # the fixture, imported

#: screenshot name -> page
SHOTS = {
    "home": "index.html",
    "tutorial-compare": "tutorials/compare.html",
    "reproduction-carastan-santos2024": "reproductions/carastan-santos2024.html",
    "cli-reference": "reference/cli.html",
    "api-dispatch": "reference/api/dispatch.html",
}


def test_every_page_renders_in_headless_chromium(built_site, tmp_path):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("the playwright package is not installed (pip install playwright)")
    if not CHROMIUM.is_file():
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    assert built_site.returncode == 0, built_site.output[-3000:]
    html = built_site.html
    shots = Path(os.environ.get("DISPATCHLAB_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    requests: list[str] = []
    seen_images = 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            current = {"page": ""}
            page.on("console", lambda m: problems.append(f"{current['page']}: console: "
                                                         f"{m.text}")
                    if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"{current['page']}: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            for source in pages():
                name = source[:-3] + ".html"
                current["page"] = name
                page.goto((html / name).resolve().as_uri(), wait_until="load")
                if not page.title().strip():
                    problems.append(f"{name}: no title")
                images = page.eval_on_selector_all(
                    "img", "els => els.map(e => [e.src, e.complete, e.naturalWidth, "
                    "e.naturalHeight])")
                for src, complete, width, height in images:
                    seen_images += 1
                    if not (complete and width > 0 and height > 0):
                        problems.append(f"{name}: image {src} did not load")
                for shot, target in SHOTS.items():
                    if target == name:
                        # the tutorial whole, to see its figure under its code
                        page.screenshot(path=str(shots / f"{shot}.png"),
                                        full_page=shot.startswith("tutorial"))
        finally:
            browser.close()
    assert problems == [], problems[:20]
    assert seen_images >= 3  # the two tutorial figures and the validation figure
    assert all(u.startswith(("file://", "data:")) for u in requests), [
        u for u in requests if not u.startswith(("file://", "data:"))][:10]
    for shot in SHOTS:
        assert (shots / f"{shot}.png").stat().st_size > 10_000, shot
