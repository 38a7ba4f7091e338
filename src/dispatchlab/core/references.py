"""The papers dispatchlab reproduces, the sources of the traces it reads, and where
the traces are found.

Docstrings, help texts and the documentation name a paper by its short citation
(:attr:`Paper.short`, author and year, or author and topic where the text gives no
year); :data:`PAPERS` holds the full references, as far as they can be verified. No
DOI, venue or year is given beyond what the paper's own text or its publisher states.
The documentation's references page (docs/explanation/references.md) lists the same
entries.

**Traces** are data, not part of the repository: they are read from a data folder,
:func:`traces_dir` (the environment variable ``DISPATCHLAB_TRACES``, else
``../shared/traces`` beside the repository). :data:`TRACE_SOURCES` says where each
trace comes from and whom to credit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Paper:
    """One reproduced paper.

    ``key``: a stable internal key (``"galleguillos2017"``...); ``short``: the citation
    used in the text; ``authors``, ``title``: as the paper's own text gives them;
    ``reference``: the full reference; ``topic``: what dispatchlab takes from it."""

    key: str
    short: str
    authors: tuple[str, ...]
    title: str
    reference: str
    topic: str


#: The five reproduced papers, in the order the documentation presents them.
PAPERS: tuple[Paper, ...] = (
    Paper(
        key="galleguillos2017",
        short="Galleguillos et al. 2017",
        authors=("C. Galleguillos", "A. Sirbu", "Z. Kiziltan", "O. Babaoglu",
                 "A. Borghesi", "T. Bridi"),
        title="Data-driven job dispatching in HPC systems",
        reference=("C. Galleguillos, A. Sirbu, Z. Kiziltan, O. Babaoglu, A. Borghesi, "
                   "T. Bridi, \"Data-driven job dispatching in HPC systems\", Machine "
                   "Learning, Optimization, and Big Data (MOD 2017), LNCS 10710, "
                   "pp. 449-461, Springer, 2018, doi 10.1007/978-3-319-72926-8_37."),
        topic=("job duration prediction from workload data and its effect on PRB, "
               "CPH (our hcp) and EASY on the Eurora trace"),
    ),
    Paper(
        key="darrous",
        short="Darrous, learning-to-rank report",
        authors=("J. Darrous",),
        title="Improving Backfilling using Learning to Rank algorithm",
        reference=("J. Darrous, \"Improving Backfilling using Learning to Rank "
                   "algorithm\", internship report, LIG (MOAIS team), Grenoble, "
                   "supervised by E. Gaussier and D. Trystram (no year in the text)."),
        topic="learning to rank the EASY-backfilling queue (dispatchlab.rank)",
    ),
    Paper(
        key="galleguillos-cp",
        short="Galleguillos et al., CP-based dispatching",
        authors=("C. Galleguillos", "R. Soto", "Z. Kiziltan", "A. Sirbu",
                 "O. Babaoglu"),
        title="Constraint Programming-based Job Dispatching for Modern HPC Applications",
        reference=("C. Galleguillos, R. Soto, Z. Kiziltan, A. Sirbu, O. Babaoglu, "
                   "\"Constraint Programming-based Job Dispatching for Modern HPC "
                   "Applications\" (the text gives no venue or year)."),
        topic="the on-line CP dispatchers HCP' and PCP' (hcp-online, pcp-online)",
    ),
    Paper(
        key="carastan-santos2024",
        short="Carastan-Santos et al. 2024",
        authors=("D. Carastan-Santos", "G. Da Costa", "I. Fontana de Nardin",
                 "M. Poquet", "K. Rzadca", "P. Stolf", "D. Trystram"),
        title="Scheduling with lightweight predictions in power-constrained HPC platforms",
        reference=("D. Carastan-Santos, G. Da Costa, I. Fontana de Nardin, M. Poquet, "
                   "K. Rzadca, P. Stolf, D. Trystram, \"Scheduling with lightweight "
                   "predictions in power-constrained HPC platforms\", preprint "
                   "hal-04747713, 2024 (a journal version appeared in IEEE Transactions "
                   "on Parallel and Distributed Systems, 2025, "
                   "doi 10.1109/TPDS.2025.3586723)."),
        topic="power caps over time, job power predictors, EASY+PC and the knapsacks",
    ),
    Paper(
        key="borghesi2018",
        short="Borghesi et al. 2018",
        authors=("A. Borghesi", "A. Bartolini", "M. Lombardi", "M. Milano",
                 "L. Benini"),
        title="Scheduling-based power capping in high performance computing systems",
        reference=("A. Borghesi, A. Bartolini, M. Lombardi, M. Milano, L. Benini, "
                   "\"Scheduling-based power capping in high performance computing "
                   "systems\", Sustainable Computing: Informatics and Systems 19 (2018) "
                   "1-13, doi 10.1016/j.suscom.2018.05.007."),
        topic=("power capping by scheduling (LS, DEC) and by throttling (RAPL, "
               "DynShare, DEC+RAPL) on the Eurora machine"),
    ),
)

#: Where the traces come from (file name pattern -> source and whom to credit).
TRACE_SOURCES: tuple[tuple[str, str], ...] = (
    ("*-cln.swf.gz, LCG-2005-1, RICC-2010-2, UniLu-Gaia-2014-1",
     "the Parallel Workloads Archive, https://www.cs.huji.ac.il/labs/parallel/workload/ ; "
     "cite D. G. Feitelson, D. Tsafrir, D. Krakov, \"Experience with using the Parallel "
     "Workloads Archive\", J. Parallel Distrib. Comput. 74(10):2967-2982, 2014, and "
     "credit the people on each log's '; Acknowledge:' line"),
    ("lublin_256.swf.gz",
     "synthetic, from the Lublin & Feitelson (2003) workload model with 256 nodes "
     "(the training trace of RLScheduler, DIR-LAB/deep-batch-scheduler)"),
    ("ANL-Theta-2022-cqsim.swf.gz",
     "not from the PWA: an SWF conversion of the ALCF Theta job logs of 2022 made by "
     "the CQSim (SPEAR lab) team; check the ALCF terms before publishing results"),
    ("alea-wagap-2013.swf.gz (+ .machines.gz)",
     "not from the PWA: the CERIT-SC/MetaCentrum 'wagap' 2013 subset of the Alea "
     "simulator's data set (D. Klusacek, CESNET MetaCentrum & CERIT-SC), extended SWF"),
    ("Eurora-PA-HPC-SIM-testdata.tar.gz",
     "the test data of AndreaBorghesi/PA-HPC-SIM (Apache-2.0): Eurora (CINECA) job "
     "instances with ML-predicted job power; credit Borghesi et al., \"Predictive "
     "modeling for job power consumption in HPC systems\", ISC 2016"),
)

#: The environment variable naming the traces folder.
TRACES_ENV = "DISPATCHLAB_TRACES"


def default_traces_dir(repository: Path | None = None) -> Path:
    """The traces folder when :data:`TRACES_ENV` is unset: ``shared/traces`` in the
    parent folder of ``repository`` (default: the repository this module sits in, when
    run from a checkout)."""
    root = repository if repository is not None else Path(__file__).resolve().parents[3]
    return root.parent / "shared" / "traces"


def traces_dir(repository: Path | None = None) -> Path:
    """The folder the traces are read from: the value of ``DISPATCHLAB_TRACES`` when it
    is set and not empty, else :func:`default_traces_dir`. The folder is not checked."""
    value = os.environ.get(TRACES_ENV, "")
    return Path(value) if value else default_traces_dir(repository)


def expand_traces(text: str, repository: Path | None = None) -> str:
    """``text`` with a leading ``$DISPATCHLAB_TRACES`` or ``${DISPATCHLAB_TRACES}`` replaced
    by :func:`traces_dir` (campaign files name traces this way); other text unchanged."""
    for head in ("${" + TRACES_ENV + "}", "$" + TRACES_ENV):
        if text.startswith(head) and (len(text) == len(head) or text[len(head)] in "/\\"):
            return str(traces_dir(repository)) + text[len(head):]
    return text


def paper(key: str) -> Paper:
    """The paper with key ``key``; ``KeyError`` naming the known keys otherwise."""
    for p in PAPERS:
        if p.key == key:
            return p
    raise KeyError(f"no paper {key!r}; known: {', '.join(p.key for p in PAPERS)}")
