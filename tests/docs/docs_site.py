"""Helpers of the documentation tests: build the site, read the pages' code blocks.

The site is built once per test process (:func:`built_site`, used as a fixture by the
test modules) the way ``make docs`` builds it: a fresh environment, warnings as errors
(``-W --keep-going``), no network.
"""

from __future__ import annotations

import atexit
import functools
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: the pages whose every command and code block runs (no exemption allowed but the ones
#: of :data:`exemptions.EXEMPT` that say why the block cannot run in a test)
WALKTHROUGHS = ("getting-started.md", "tutorials/")

#: the languages of blocks that are run: shell commands and Python
RUN_LANGS = {"sh": "sh", "bash": "sh", "python": "python"}

_FENCE = re.compile(r"^```(?P<lang>[\w-]+)[^\n]*\n(?P<code>.*?)^```[ \t]*$", re.S | re.M)
#: ``<!-- expect: TEXT | TEXT -->`` right after a block: what its output must contain (the
#: numbers the page's text quotes), invisible on the page
_EXPECT = re.compile(r"\s*<!-- expect: (?P<texts>.*?) -->")  # matched at the fence's end


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str  #: the page, relative to ``docs/`` (``tutorials/compare.md``)
    line: int  #: the line of its opening fence (1-based)
    lang: str  #: ``sh`` or ``python``
    code: str
    #: texts its output (stdout and stderr) must contain
    expect: tuple[str, ...] = ()

    @property
    def first_line(self) -> str:
        return self.code.strip().splitlines()[0] if self.code.strip() else ""


def pages() -> list[str]:
    """Every source page of the site, relative to ``docs/``."""
    return sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")
                  if not {"_build", "_generated"} & set(p.relative_to(DOCS).parts))


def blocks(page: str) -> list[Block]:
    """The shell and Python blocks of ``page``, in page order (``{dl-plot}`` blocks are
    run by the build itself)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    out = []
    for m in _FENCE.finditer(text):
        lang = RUN_LANGS.get(m["lang"])
        if lang is not None:
            e = _EXPECT.match(text, m.end())
            expect = tuple(t.strip() for t in e["texts"].split(" | ")) if e else ()
            out.append(Block(page, text.count("\n", 0, m.start()) + 1, lang, m["code"],
                             expect))
    return out


def is_walkthrough(page: str) -> bool:
    return any(page == w or page.startswith(w) for w in WALKTHROUGHS)


@dataclass(frozen=True)
class Build:
    """A finished build: the HTML folder, its time and the builder's messages."""

    html: Path
    seconds: float
    returncode: int
    output: str


def build_site(out: Path) -> Build:
    """Build the site into ``out/html`` as ``make docs`` does (fresh, ``-W``)."""
    cmd = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html",
           "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=900)
    return Build(out / "html", time.perf_counter() - start, proc.returncode,
                 proc.stdout + proc.stderr)


@functools.cache
def _site() -> Build:
    out = Path(tempfile.mkdtemp(prefix="dispatchlab-docs-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    return build_site(out)


@pytest.fixture
def built_site() -> Build:
    """The site, built once per test process (the first test that asks builds it)."""
    return _site()
