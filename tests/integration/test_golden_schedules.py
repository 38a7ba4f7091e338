"""The golden schedules of ``tests/golden.py`` are unchanged.

The hashes were recorded before the issue-8 design refactor (commit "tests: golden
schedule hashes"). A change to a hash is a change of schedule: it must be on purpose,
explained in the commit, and re-recorded with ``python tests/golden.py``. Runs on the
``eurora`` preset are not in the set (issue 8 item 2 changes that preset on purpose).

:data:`GOLDEN_COUNTS` holds each case's engine events and dispatch passes, recorded
before the layering work (the restructuring into layers must change none of them);
they come from the same simulation as the hash, so checking them costs nothing.

The cases the native engine runs (:mod:`dispatchlab.sim.native`) are checked on it too:
the same hashes and counts. :data:`NATIVE_NOT_YET` lists every other case with the
reason :func:`~dispatchlab.sim.native.native_reason` gives (a case that becomes native
must move out of it, and its native run then has to match).
"""

from __future__ import annotations

import numpy as np
import pytest

from golden import (
    TRACES,
    cases,
    golden_run,
    native_case_reason,
    needs_shared,
    synthetic_nodes,
)

GOLDEN = {
    "syn-nodes/fifo": "af123714e7bb0df9bd729c13d09d99c3726480737c1d101c3f2e9a8f529bd1e1",
    "syn-bestfit/fifo": "15ad88becd55707eedbe13881b31d7e05c24a6c133446ad2b5c70ce830de2b70",
    "kth-pooled/fifo": "4e9def14a359baab9ddb95c9d8a5c275ea6ec49c1bd481766c36a36a047a2b21",
    "kth-nodes/fifo": "7b56892860ab2629e1c18e322fc396cbd15b6a61b66def453fdb2f6bf41ca1d1",
    "syn-nodes/sjf": "69741cdea3742c6c37f2c0273c21eca4358a2c6b956b2df9dc69bd85d2c7b99c",
    "syn-bestfit/sjf": "6cee59125008d620446a9719f34c5c56cfcbc484db665e85b2c81112a7962845",
    "kth-pooled/sjf": "bf3180249a930ab33ebd837bfe0840665ebeb23e38d2def9f12ce49fe9ccccca",
    "kth-nodes/sjf": "539e9ddd5194e65b76c51bc2527063551c5ca171a7d7453097113f81268bc9c2",
    "syn-nodes/sjf-skip": "20bb93db6fb8c6dfbaa3bbbb0a28d570ecaff27f2baf121ac7b582199a24377f",
    "syn-bestfit/sjf-skip": "17da7003c6d81487b766d0fa45cdfe3f1292dd2359f3a0b284cb12f9f07b0a9a",
    "kth-pooled/sjf-skip": "bfba784a96b89dfb371dfb5dc749c92cf60a027c74b2d0dfa655391c513787f0",
    "kth-nodes/sjf-skip": "eee60223f29086a1eb83904455ea497c1ac12a7800add324dbde094109239d85",
    "syn-nodes/ljf-skip": "6ea2932fcba266ea2ed9930c3815bd86657b40c911e3b581f324f559293e6d64",
    "syn-bestfit/ljf-skip": "1d7bf37f47d210fc7c1b4b80dd0c0dbf82f104bea420285e2842fbfd718c751e",
    "kth-pooled/ljf-skip": "d52545ab495dfd6173b0838fca1ccb6104ba75a753c996e80ce2322ad20e208d",
    "kth-nodes/ljf-skip": "487415320bf3e018a98b8f995d1fee24bb23f5319a1919b045b917f074357c54",
    "syn-nodes/easy": "7ebad08133b9fbe48d2dfdf3613cc024ade7c770f577d8ca1bd8f3534a6a8cf5",
    "syn-bestfit/easy": "5ca4286c5e81535e883c2b9139c0ba4ad3737dd6e3892307f794600e27c0fc99",
    "kth-pooled/easy": "4716d7ea5bfcb30428d2e6b8e7b97f782f6ad5668a5c20ed1b89dcf731a847c5",
    "kth-nodes/easy": "66b22e426b6fa8ba47339692cff788fa532c1b8ea560cdade1b2cd65a53799a1",
    "syn-nodes/easy-sjf": "b1795e178c6b4188d07f8f01f237effdd8458ca0234980f67e4b8836f4fecf28",
    "syn-bestfit/easy-sjf": "c66b41d60fbb62bfcc6db04546cdea975d58e1a8bfcb0949a64c75778986c14a",
    "kth-pooled/easy-sjf": "fb0abb91682ef70350612f2aef69ff2d0d4404f33cabecaa6c7ff488086c93d6",
    "kth-nodes/easy-sjf": "12f42fb3ef5dded58fa1ce0d406f6b8bb8f59cf065e92651fc9f7ecdea7b65ae",
    "syn-nodes/easy-k3": "2899e8945a39336b330498a9594b112e9f4a00abb5f99290dc74110c65db5abd",
    "syn-bestfit/easy-k3": "41f15fdb8d5a81ff13d2366a79c1df973dddcb3458158ba2aefc0fc3100d24fc",
    "kth-pooled/easy-k3": "25618bb9739b183f449825b3f0088174b6185b060941c2e78c3faf04ef15e413",
    "kth-nodes/easy-k3": "9672949df6a339e04267e3c1b969524b90cc2b86af4913066a1e1d04fa871a94",
    "syn-nodes/hcp": "20c2183ebed6ce41b34e6debadec4635b28a1fa654ff0f7a7b854ba239c2be98",
    "syn-nodes/hcp-feedback3": "3bcafdfccfd3316ab774ddc9d88063bde2ecadcc22ac7930d258711ad906aa86",
    "syn-nodes/conservative": "98a1780f46996d54ebdf7d04bad61dbe4544136a1b74f5f494e7cb82eee22ca7",
    "syn-bestfit/conservative": "e3d74aa245e8856815ea47559f983f076bfc19dbd1bfb6bc6097bc197409278d",
    "kth-pooled/conservative": "4269c2a5bb2d74590121c2211fe9dc91ec6640f3bea7ef2d066e216cbc6f942c",
    "kth-nodes/conservative": "04544ec5b51cb7806319d5b112389c3cd904f1a37b16419f458cc53aaff688c0",
    "alea-nodes/fifo": "88273886616a21af42cd557c09ecd5bda4b765196dc27794307fefc64a9242f1",
    "alea-nodes/easy": "f81f70206e2fa00a32217e66f2fe2e06e5e10969257e92f5b879c163c1a8c416",
    "alea-nodes/conservative": "f81f70206e2fa00a32217e66f2fe2e06e5e10969257e92f5b879c163c1a8c416",
    "kth-pooled/easy+hist": "2c7496baabaef4cd6feb53729b9acd577a09e958731fec43d99da002cee50ddc",
    "kth-pooled/easy-sjf+hist": "ae2379cecdc8890dcb9b86830c3f6fdf95c4ce1538caeeec592b45aa18f3ffe5",
}

#: (events, passes) of each case's run (``python tests/golden.py`` prints them).
GOLDEN_COUNTS = {
    "syn-nodes/fifo": (490, 464),
    "syn-bestfit/fifo": (490, 463),
    "kth-pooled/fifo": (6000, 5809),
    "kth-nodes/fifo": (2400, 2287),
    "syn-nodes/sjf": (490, 464),
    "syn-bestfit/sjf": (490, 463),
    "kth-pooled/sjf": (6000, 5818),
    "kth-nodes/sjf": (2400, 2278),
    "syn-nodes/sjf-skip": (490, 461),
    "syn-bestfit/sjf-skip": (490, 458),
    "kth-pooled/sjf-skip": (6000, 5823),
    "kth-nodes/sjf-skip": (2400, 2280),
    "syn-nodes/ljf-skip": (490, 462),
    "syn-bestfit/ljf-skip": (490, 461),
    "kth-pooled/ljf-skip": (6000, 5836),
    "kth-nodes/ljf-skip": (2400, 2282),
    "syn-nodes/easy": (490, 466),
    "syn-bestfit/easy": (490, 465),
    "kth-pooled/easy": (6000, 5841),
    "kth-nodes/easy": (2400, 2291),
    "syn-nodes/easy-sjf": (490, 464),
    "syn-bestfit/easy-sjf": (490, 465),
    "kth-pooled/easy-sjf": (6000, 5833),
    "kth-nodes/easy-sjf": (2400, 2289),
    "syn-nodes/easy-k3": (490, 464),
    "syn-bestfit/easy-k3": (490, 468),
    "kth-pooled/easy-k3": (6000, 5841),
    "kth-nodes/easy-k3": (2400, 2292),
    "syn-nodes/conservative": (490, 465),
    "syn-bestfit/conservative": (490, 463),
    "kth-pooled/conservative": (6000, 5836),
    "kth-nodes/conservative": (2400, 2288),
    "syn-nodes/hcp": (490, 465),
    "syn-nodes/hcp-feedback3": (490, 462),
    "alea-nodes/fifo": (3000, 2558),
    "alea-nodes/easy": (3000, 2558),
    "alea-nodes/conservative": (3000, 2558),
    "kth-pooled/easy+hist": (6000, 5827),
    "kth-pooled/easy-sjf+hist": (6000, 5832),
}


#: The cases the native engine cannot run yet, with the reason it gives.
NATIVE_NOT_YET = {
    "syn-nodes/hcp": "dispatcher 'hcp' is not native yet",
    "syn-nodes/hcp-feedback3": "dispatcher 'hcp' is not native yet",
}
#: The cases the native engine runs.
NATIVE = sorted(set(GOLDEN) - set(NATIVE_NOT_YET))


def _case(name: str):
    """``name`` as a test parameter (marked ``traces`` when it reads shared traces)."""
    return (pytest.param(name, marks=pytest.mark.traces) if needs_shared(cases()[name][0])
            else name)


def test_every_case_has_a_hash() -> None:
    assert set(GOLDEN) == set(cases())


def test_every_case_has_counts() -> None:
    assert set(GOLDEN_COUNTS) == set(cases())


@pytest.mark.parametrize("name", [_case(name) for name in sorted(GOLDEN)])
def test_schedule_unchanged(name: str) -> None:
    if needs_shared(cases()[name][0]) and not TRACES.is_dir():
        pytest.skip(f"shared traces absent: {TRACES} is not a folder")
    run = golden_run(name)
    assert run.digest == GOLDEN[name], f"the schedule of {name} changed"
    # the same run's counters (one simulation per case for both checks)
    assert (run.events, run.passes) == GOLDEN_COUNTS[name], (
        f"the schedule of {name} is unchanged but its (events, passes) changed from "
        f"{GOLDEN_COUNTS[name]} to {(run.events, run.passes)}; re-record on purpose with "
        "python tests/golden.py")


@pytest.mark.parametrize("name", [_case(name) for name in sorted(GOLDEN)])
def test_native_engine_runs_exactly_the_cases_not_listed(name: str) -> None:
    """Each case is native, or listed in :data:`NATIVE_NOT_YET` with its reason."""
    pytest.importorskip("dispatchlab._core", reason="the native core is not built "
                        "(build it with `make native`)")
    if needs_shared(cases()[name][0]) and not TRACES.is_dir():
        pytest.skip(f"shared traces absent: {TRACES} is not a folder")
    assert native_case_reason(name) == NATIVE_NOT_YET.get(name)


@pytest.mark.parametrize("name", [_case(name) for name in NATIVE])
def test_native_schedule_unchanged(name: str) -> None:
    """The native engine gives the recorded schedule and (events, passes)."""
    pytest.importorskip("dispatchlab._core", reason="the native core is not built "
                        "(build it with `make native`)")
    if needs_shared(cases()[name][0]) and not TRACES.is_dir():
        pytest.skip(f"shared traces absent: {TRACES} is not a folder")
    run = golden_run(name, "native")
    assert run.digest == GOLDEN[name], f"the native schedule of {name} differs"
    assert (run.events, run.passes) == GOLDEN_COUNTS[name]


def test_synthetic_workload_contends() -> None:
    """The node-level golden workload makes queues form and uses every resource type,
    so the hashes would catch a change of ordering or placement."""
    from dispatchlab.dispatch import make_dispatcher
    from dispatchlab.sim.engine import Simulation

    platform, jobs = synthetic_nodes()
    result = Simulation(platform, jobs, make_dispatcher("easy")).run()
    assert (result.wait > 0).mean() > 0.3
    assert (jobs.resources["gpu"] > 0).any()
    used_nodes = np.unique(np.concatenate([a.nodes for a in result.allocations.values()]))
    assert len(used_nodes) == platform.n_nodes
