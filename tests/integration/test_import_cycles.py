"""Import cycles inside the package may only go away (a ratchet, like ``.importlinter``).

A cycle is a set of modules each reachable from the others through imports (a strongly
connected component of grimp's import graph: module-level and function-body imports
count; ``TYPE_CHECKING`` imports do not, since they never run: the engine's view types
its engine, ``sim/view.py`` -> ``sim/engine.py``, while the engine builds the view).
:data:`KNOWN` lists today's cycles; a new cycle,
or a module joining a known one, fails. When a cycle is broken, remove it here.
"""

from __future__ import annotations

import grimp

#: Today's cycles (each a set of modules under ``dispatchlab.``).
KNOWN: list[frozenset[str]] = []


def import_cycles() -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative), names without the ``dispatchlab.`` prefix."""
    graph = grimp.build_graph("dispatchlab", cache_dir=None, exclude_type_checking_imports=True)
    adjacent = {m: sorted(graph.find_modules_directly_imported_by(m))
                for m in sorted(graph.modules)}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in adjacent:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, k = work.pop()
            if k == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if k < len(adjacent[node]):
                work.append((node, k + 1))
                nxt = adjacent[node][k]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:  # back in the parent: carry the low-link up
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.add(m)
                    if m == node:
                        break
                if len(members) > 1:
                    found.append(frozenset(m.removeprefix("dispatchlab.") for m in members))
    return found


def test_no_new_import_cycle() -> None:
    for cycle in import_cycles():
        assert any(cycle <= known for known in KNOWN), (
            f"a new import cycle (or a module joined a known one): {sorted(cycle)}; move "
            "the shared piece to a module both can import")


def test_known_cycles_are_still_cycles() -> None:
    """A broken cycle leaves :data:`KNOWN` (and the ignore list of ``.importlinter``'s
    acyclic contract), so it cannot come back unnoticed."""
    cycles = import_cycles()
    for known in KNOWN:
        assert any(known <= cycle for cycle in cycles), (
            f"{sorted(known)} is no longer a cycle: remove it from KNOWN")


def test_the_broken_cycles_stay_broken() -> None:
    """The cycles of issue 29 broken so far: inside platform (readers out of the data
    class), workload (the Arrow layout in jobs.py), plots <-> study (the distributions
    in metrics) and campaign config <-> power_table (the checks in campaign.checks) and
    config <-> store (package_version in provenance)."""
    cycles = import_cycles()
    for package in ("platform", "workload", "metrics", "report"):
        assert not any(m.startswith(package + ".") for c in cycles for m in c), package
    for module in ("experiment.study", "experiment.campaign.power_table",
                   "experiment.campaign.checks"):
        assert not any(module in c for c in cycles), module


def test_experiment_computes_and_report_presents() -> None:
    """The last package cycle of issue 29 is gone: experiment/ imports nothing of
    report/ (the study and duration-accuracy figures are drawn in report/, from the data
    experiment/ returns), while report/ reads experiment/'s results."""
    graph = grimp.build_graph("dispatchlab", cache_dir=None, exclude_type_checking_imports=True)
    assert not graph.chain_exists("dispatchlab.experiment", "dispatchlab.report",
                                  as_packages=True)
    assert graph.chain_exists("dispatchlab.report", "dispatchlab.experiment", as_packages=True)
