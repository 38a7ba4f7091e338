"""References a reader can follow: the README, the documentation pages, the package's
docstrings and help texts, the examples and the benchmarks name the papers by author and
year (the full entries in :mod:`dispatchlab.core.references` and the documentation's
references page, ``docs/explanation/references.md``), point to no file outside
the repository (the configurable traces folder aside) and to no issue number.

The only ``seedNNN`` names left are file and folder names users type (campaign files,
example folders, benchmark scripts) and the ``seed`` L2R set-up; :data:`ALLOWED_NAMES`
lists them and nothing else may match.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dispatchlab import InputError
from dispatchlab.core import references
from dispatchlab.core.references import PAPERS, expand_traces, traces_dir

ROOT = Path(__file__).resolve().parents[2]

#: the documentation's pages (the built site and generated tables left out)
DOC_PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md")
                   if not {"_build", "_generated"} & set(p.relative_to(ROOT).parts))
REFERENCES_PAGE = ROOT / "docs" / "explanation" / "references.md"

#: every text a reader sees: the README, the documentation, the package (docstrings, help
#: texts, messages), the examples and the benchmarks
SCANNED = [
    ROOT / "README.md", ROOT / "Makefile", *DOC_PAGES, ROOT / "docs" / "conf.py",
    *sorted((ROOT / "docs" / "_ext").glob("*.py")),
    *sorted((ROOT / "src").rglob("*.py")),
    *sorted((ROOT / "benchmarks").glob("*.py")),
    *sorted(p for p in (ROOT / "examples").rglob("*")
            if p.suffix in (".py", ".toml", ".sh", ".md"))]

#: file and folder names kept for compatibility (users type them); a ``seedNNN`` that is
#: not part of one of these is an error
ALLOWED_NAMES = re.compile(
    r"examples/seed00[034]/"                  # the example folders
    r"|bench_seed00[34]\.py"                  # the benchmark scripts
    r"|seed002-table1(\.toml|\.duckdb)?"      # campaign files, their names and databases
    r"|seed003(\.toml|\.duckdb|-report/)?"
    r"|seed004-(\*|historical|large|mispredict|sweep|synthetic|report/)(\.toml|\.duckdb)?"
    r"|seed000-eurora"                        # examples/seed000/reproduce.py's --out default
    r"|test_seed004_data\.py")                # a test file named in a docstring

SEED = re.compile(r"seed[ _-]?(paper[ _-]?)?00[0-4]|\b00[0-4] paper", re.IGNORECASE)
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])/work/|DESIGN\.md|ALGORITHMS\.md|ALGORITHMS \d")
ISSUE = re.compile(r"\bissues? #?\d+", re.IGNORECASE)
#: the same names broken over two lines (docstrings, comments, concatenated strings)
SEED_BROKEN = re.compile(r"\bseed( paper)?[\s\"'#:]*\n[\s\"'#:+]*00[0-4]\b", re.IGNORECASE)

#: where the default traces folder may be spelled out: its definition, and the places
#: that document it
TRACES_DEFAULT_OK = {
    ROOT / "src" / "dispatchlab" / "core" / "references.py",
    ROOT / "README.md", ROOT / "Makefile",
    ROOT / "docs" / "getting-started.md", ROOT / "docs" / "reference" / "usage.md",
    REFERENCES_PAGE,
    ROOT / "benchmarks" / "bench_power.py",
    ROOT / "examples" / "compare_dispatchers.sh",
}


def offences(text: str, path: Path) -> list[str]:
    """The lines of ``text`` that break the rules, as ``path:line: text``."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        bad = [m.group(0) for m in SEED.finditer(ALLOWED_NAMES.sub("", line))]
        for m in OUTSIDE.finditer(line):
            default = m.group(0) == "../shared" and "../shared/traces" in line
            if not (default and path in TRACES_DEFAULT_OK):
                bad.append(m.group(0))
        bad += [m.group(0) for m in ISSUE.finditer(line)]
        if bad:
            out.append(f"{path.relative_to(ROOT)}:{no}: {bad}: {line.strip()[:100]}")
    for m in SEED_BROKEN.finditer(text):
        no = text.count("\n", 0, m.start()) + 1
        out.append(f"{path.relative_to(ROOT)}:{no}: {[m.group(0)]}: {m.group(0)!r}")
    return out


def test_texts_name_papers_by_author_and_point_inside_the_repository():
    found = [o for p in SCANNED for o in offences(p.read_text(encoding="utf-8"), p)]
    assert not found, f"{len(found)} lines:\n" + "\n".join(found[:40])


@pytest.mark.parametrize("text, expected", [
    ("as seed 004 says", 1), ("Seed paper 000, section 5", 1), ("(seed-001 control)", 1),
    ("the 002 paper", 1), ("see ../shared/DESIGN.md", 2), ("ALGORITHMS.md 2.7", 1),
    ("ALGORITHMS 4.2", 1), ("before issue 8", 1), ("Issue 10 targets", 1),
    ("python benchmarks/bench_seed004.py", 0), ("examples/campaigns/seed004-sweep.toml", 0),
    ("examples/seed000/reproduce.py", 0), ("seed004-historical.duckdb", 0),
    ("a seed004_helper()", 1), ("seed 0, seeds 5-9", 0), ("Borghesi et al. 2018", 0),
    ("as in seed\n    004 section 4", 1), ('jobs (seed "\n        "003, EASY', 1),
    ("seeds 0-9\n004 runs", 0),
])
def test_the_rules_catch_what_they_should(text, expected):
    offending = offences(text, ROOT / "src" / "x.py")
    assert len(offending) == min(expected, 1)
    if expected:
        assert len(eval(offending[0].split(": ", 2)[1])) == expected


def test_references_hold_the_five_papers():
    assert [p.short for p in PAPERS] == [
        "Galleguillos et al. 2017", "Darrous, learning-to-rank report",
        "Galleguillos et al., CP-based dispatching", "Carastan-Santos et al. 2024",
        "Borghesi et al. 2018"]
    titles = [p.title for p in PAPERS]
    assert titles == [
        "Data-driven job dispatching in HPC systems",
        "Improving Backfilling using Learning to Rank algorithm",
        "Constraint Programming-based Job Dispatching for Modern HPC Applications",
        "Scheduling with lightweight predictions in power-constrained HPC platforms",
        "Scheduling-based power capping in high performance computing systems"]
    dois = [re.findall(r"doi (\S+?)\)?\.?$", p.reference) for p in PAPERS]
    assert dois == [["10.1007/978-3-319-72926-8_37"], [], [], ["10.1109/TPDS.2025.3586723"],
                    ["10.1016/j.suscom.2018.05.007"]]
    page = REFERENCES_PAGE.read_text(encoding="utf-8")
    section = page[page.index("\n## References\n"):]
    for p in PAPERS:
        assert p.title in section.replace("\n  ", " ")
        assert f"**{p.short}**" in section
        assert all(a.split()[-1] in p.reference for a in p.authors)
    assert references.paper("borghesi2018").short == "Borghesi et al. 2018"
    with pytest.raises(KeyError, match="known: galleguillos2017"):
        references.paper("seed004")


def test_the_traces_folder_is_configurable(monkeypatch, tmp_path):
    repo = tmp_path / "repo"
    monkeypatch.delenv("DISPATCHLAB_TRACES", raising=False)
    assert traces_dir(repo) == tmp_path / "shared" / "traces"
    monkeypatch.setenv("DISPATCHLAB_TRACES", "")
    assert traces_dir(repo) == tmp_path / "shared" / "traces"
    monkeypatch.setenv("DISPATCHLAB_TRACES", str(tmp_path / "data"))
    assert traces_dir(repo) == tmp_path / "data"
    assert expand_traces("$DISPATCHLAB_TRACES/a.swf#m") == str(tmp_path / "data") + "/a.swf#m"
    assert expand_traces("${DISPATCHLAB_TRACES}/a.swf") == str(tmp_path / "data") + "/a.swf"
    assert expand_traces("$DISPATCHLAB_TRACESX/a.swf") == "$DISPATCHLAB_TRACESX/a.swf"
    assert expand_traces("x/$DISPATCHLAB_TRACES/a.swf") == "x/$DISPATCHLAB_TRACES/a.swf"


def test_a_campaign_reads_a_trace_from_the_traces_folder(monkeypatch, tmp_path):
    from dispatchlab.experiment.campaign.config import load_campaign

    data = tmp_path / "data"
    data.mkdir()
    (data / "t.swf").write_text("1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n")
    (tmp_path / "c.toml").write_text(
        '[campaign]\nname = "c"\n[[traces]]\npath = "$DISPATCHLAB_TRACES/t.swf"\n'
        '[[platforms]]\ncores = 4\n[[dispatchers]]\nname = "fifo"\n'
        '[[predictors]]\nname = "walltime"\n')
    monkeypatch.setenv("DISPATCHLAB_TRACES", str(data))
    camp = load_campaign(tmp_path / "c.toml")
    assert [Path(r["trace"]["path"]).name for r in camp.runs] == ["t.swf"]
    monkeypatch.setenv("DISPATCHLAB_TRACES", str(tmp_path / "elsewhere"))
    with pytest.raises(InputError, match="elsewhere"):
        load_campaign(tmp_path / "c.toml")
