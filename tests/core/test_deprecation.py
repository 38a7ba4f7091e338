"""Old import paths (before the layering) still resolve, to the same objects, with a warning."""

from __future__ import annotations

import importlib
import pickle
import subprocess
import sys

import pytest

from dispatchlab.core import deprecation
from dispatchlab.core.deprecation import MOVED_MODULES, REMOVED_IN, MovedWarning


@pytest.mark.parametrize("new", sorted(set(MOVED_MODULES.values())))
def test_every_new_module_exists(new):
    importlib.import_module(new)


def test_no_old_name_is_also_a_real_module():
    """An old name must not exist as a file any more (it would shadow nothing, but a stale
    copy would be imported under two names)."""
    from pathlib import Path

    root = Path(deprecation.__file__).parents[1]
    for old in MOVED_MODULES:
        rel = Path(*old.split(".")[1:])
        assert not (root / rel).with_suffix(".py").exists(), old
        assert not (root / rel / "__init__.py").exists(), old


def _fresh(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "always::DeprecationWarning", "-c", code],
                          capture_output=True, text=True, check=False)


def test_old_module_path_is_the_new_module_and_warns():
    code = ("import dispatchlab.campaign.worker as old\n"
            "import dispatchlab.experiment.campaign.worker as new\n"
            "assert old is new, (old, new)\n"
            "from dispatchlab.dispatch.power import EasyPC\n"
            "from dispatchlab.dispatch.powercap.capped import EasyPC as E2\n"
            "assert EasyPC is E2\n"
            "from dispatchlab.errors import InputError\n"
            "from dispatchlab.core.errors import InputError as I2\n"
            "assert InputError is I2\n")
    proc = _fresh(code)
    assert proc.returncode == 0, proc.stderr
    assert ("dispatchlab.campaign.worker moved to dispatchlab.experiment.campaign.worker; "
            f"the old name is removed in dispatchlab {REMOVED_IN}") in proc.stderr
    assert "dispatchlab.dispatch.power moved to dispatchlab.dispatch.powercap.capped" in proc.stderr


def test_old_specs_and_pickles_resolve():
    from dispatchlab import make_dispatcher

    with pytest.warns(MovedWarning, match="dispatch.rapl moved"):
        disp = make_dispatcher("dispatchlab.dispatch.rapl:RaplSimple")
    from dispatchlab.dispatch.powercap.rapl import RaplSimple

    assert isinstance(disp, RaplSimple)
    # a pickle written by an older version names the old module path
    from dispatchlab.experiment.statistics import interval_method

    data = pickle.dumps(interval_method, protocol=0).replace(b"dispatchlab.experiment.statistics",
                                                 b"dispatchlab.stats")
    assert b"dispatchlab.stats" in data
    with pytest.warns(MovedWarning):
        assert pickle.loads(data) is interval_method


def test_old_l2r_package_keeps_its_names():
    with pytest.warns(MovedWarning):
        old = importlib.import_module("dispatchlab.l2r")
    from dispatchlab.experiment.l2r.split import split_lists
    from dispatchlab.rank.learn import RankSVM

    assert old.split_lists is split_lists and old.RankSVM is RankSVM


def test_moved_attributes_of_a_package():
    import dispatchlab.power as power
    from dispatchlab.predict.power.base import PowerPredictor

    with pytest.warns(MovedWarning, match="dispatchlab.power.PowerPredictor moved"):
        assert power.PowerPredictor is PowerPredictor
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        power.Nope  # noqa: B018


def test_moved_callable_calls_the_target_and_warns():
    shim = deprecation.moved_callable("dispatchlab.old.thing", "math:hypot")
    with pytest.warns(MovedWarning, match=r"dispatchlab.old.thing moved to math.hypot"):
        assert shim(3, 4) == 5.0
    assert shim.__name__ == "thing"
