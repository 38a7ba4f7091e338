"""The README is the front door: short, every link valid, and what it shows is what the
documentation shows.

Links are relative paths into the repository (they work on GitHub and in a clone); an
anchor (``page.md#section``) must be a heading of that page, as GitHub makes anchors.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml  # PyYAML, a dependency of dask

import dispatchlab

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def github_anchor(heading: str) -> str:
    """The anchor GitHub (and MyST, ``myst_heading_anchors``) gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {github_anchor(m[1]) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def test_the_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_every_readme_link_is_valid():
    text = README.read_text(encoding="utf-8")
    links = LINK.findall(text)
    assert len(links) > 20
    bad = []
    for link in links:
        assert not link.startswith(("http:", "https:")), f"external link {link}"
        path, _, anchor = link.partition("#")
        target = ROOT / path
        if not target.exists():
            bad.append(f"{link}: no such file")
        elif anchor and anchor not in anchors(target):
            bad.append(f"{link}: no heading #{anchor} in {path}")
    assert not bad, bad


def test_the_readme_shows_what_the_docs_show():
    readme = README.read_text(encoding="utf-8")
    start = readme.index("```text\nsynthetic workload")
    demo = readme[start:readme.index("```\n", start + 8) + 4]
    assert demo in (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    assert readme.count("```sh\nmake demo") == 1
    # the two commands are the same as the docs' (and the Makefile has both targets)
    commands = readme[readme.index("```sh\nmake demo"):]
    commands = commands[:commands.index("```\n", 5) + 4]
    assert commands in (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert all(re.search(rf"^{t}:", makefile, re.M) for t in ("demo", "test", "docs"))


def test_citation_and_documentation_host_files_agree_with_the_project():
    """``CITATION.cff`` names this version; ``.readthedocs.yaml`` builds ``docs/conf.py``
    with the ``docs`` extra that ``pyproject.toml`` defines, failing on warnings."""
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["authors"] and cff["title"]
    assert str(cff["version"]) == dispatchlab.__version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert cff["license"] == project["project"]["license"]
    rtd = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))
    assert (ROOT / rtd["sphinx"]["configuration"]).is_file()
    assert rtd["sphinx"]["fail_on_warning"] is True
    extras = {e for i in rtd["python"]["install"] for e in i.get("extra_requirements", [])}
    assert extras == {"docs"} and "docs" in project["project"]["optional-dependencies"]
