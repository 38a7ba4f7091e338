"""The documentation builds without a warning, and what it generates is there.

``make docs`` and this test build the same way: a fresh environment, warnings as errors
(``-W --keep-going``: a broken internal link or anchor, a missing page, a reference to a
dispatchlab name that does not exist, a docstring that is not valid reStructuredText),
no network. The time of the build is printed (``-s`` shows it).
"""

from __future__ import annotations

import re

import click
import pytest

from dispatchlab.cli import COMMANDS, app, load_command
from dispatchlab.core.deprecation import MOVED_MODULES
from dispatchlab.metrics.keys import METRICS
from docs_site import DOCS, built_site, pages

pytestmark = pytest.mark.docs
__all__ = ["built_site"]  # the fixture, imported


def test_the_site_builds_without_warnings(built_site):
    assert built_site.returncode == 0, built_site.output[-6000:]
    assert "WARNING" not in built_site.output and "ERROR" not in built_site.output, (
        built_site.output[-6000:])
    print(f"docs build: {built_site.seconds:.1f} s")


def test_no_text_line_is_swallowed_by_myst_syntax():
    """Markdown that GitHub shows as text but MyST does not: a line starting with ``%``
    is a comment (the line vanishes from the page), ``+++`` a block break. Checked in
    the source, outside code blocks."""
    bad = []
    for page in pages():
        text = re.sub(r"^```.*?^```", "", (DOCS / page).read_text(encoding="utf-8"),
                      flags=re.S | re.M)
        bad += [f"{page}: {line.strip()[:60]}" for line in text.splitlines()
                if line.lstrip().startswith(("%", "+++"))]
    assert not bad, bad


def test_every_page_is_built_and_in_the_navigation(built_site):
    html = built_site.html
    for page in pages():
        assert (html / page).with_suffix(".html").is_file(), page
    # every page reachable from the home page's navigation (Sphinx warns about a page in
    # no toctree; this checks the result)
    nav = (html / "index.html").read_text(encoding="utf-8")
    for page in pages():
        if page != "index.md":
            assert f'href="{page[:-3]}.html"' in nav, f"{page} is not in the navigation"


def test_the_reference_is_generated_from_the_code(built_site):
    html = built_site.html
    cli = (html / "reference" / "cli.html").read_text(encoding="utf-8")
    for name in COMMANDS:  # every command of the lazy table, and every subcommand
        assert f'<section id="dispatchlab-{name}">' in cli, name
        command = load_command(name)
        if isinstance(command, click.Group):
            for sub in command.list_commands(click.Context(app)):
                assert f'<section id="dispatchlab-{name}-{sub}">' in cli, f"{name} {sub}"
    # options as two hyphens (no typographic dash), in the help texts too
    assert '<span class="pre">--slice-jobs</span>' in cli
    assert "With --slices K --slice-jobs N" in cli
    api = (html / "reference" / "api" / "dispatch.html").read_text(encoding="utf-8")
    assert 'id="dispatchlab.dispatch.backfill.EASY"' in api
    metrics = (html / "reference" / "metrics.html").read_text(encoding="utf-8")
    for m in METRICS:
        assert f"<code class=\"docutils literal notranslate\"><span class=\"pre\">{m.key}" \
               f"</span></code>" in metrics, m.key
    migration = (html / "migration.html").read_text(encoding="utf-8")
    for old in MOVED_MODULES:
        assert old in migration, old
    assert "dispatchlab.sim.SimulationResult.write" in migration  # a moved method


def test_tutorial_figures_are_drawn_by_the_build(built_site):
    """A tutorial shows no pasted image: its figures come from ``{dl-plot}`` blocks,
    whose code the build runs (``docs/_ext/figures.py``)."""
    plots = 0
    for page in pages():
        if not page.startswith("tutorials/"):
            continue
        text = (DOCS / page).read_text(encoding="utf-8")
        assert not re.search(r"!\[[^\]]*\]\(", text), f"{page} pastes an image"
        names = re.findall(r"^```\{dl-plot\} (\S+)", text, re.M)
        html = (built_site.html / page).with_suffix(".html").read_text(encoding="utf-8")
        for name in names:
            assert re.search(rf'<img[^>]+src="[./]*_images/{re.escape(name)}\.png"', html), name
            assert (built_site.html / "_images" / f"{name}.png").stat().st_size > 10_000
        plots += len(names)
    assert plots >= 2
