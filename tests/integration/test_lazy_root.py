"""The package root re-exports its public names lazily: importing a lower layer loads
nothing above it, and every public name still resolves."""

from __future__ import annotations

import subprocess
import sys

import pytest

import dispatchlab


def loaded_after(statement: str) -> set[str]:
    """The modules a fresh interpreter holds after ``statement``."""
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return set(out.split())


def test_importing_dispatch_loads_neither_the_engine_nor_ortools() -> None:
    mods = loaded_after("import dispatchlab.dispatch")
    assert "dispatchlab.dispatch" in mods
    assert "dispatchlab.sim" not in mods
    assert not any(m == "ortools" or m.startswith("ortools.") for m in mods)


def test_importing_the_root_loads_no_submodule() -> None:
    mods = loaded_after("import dispatchlab")
    # the one exception: the finder of moved module names (core/deprecation.py)
    assert {m for m in mods if m.startswith("dispatchlab.")} == {
        "dispatchlab.core", "dispatchlab.core.deprecation"}


@pytest.mark.parametrize("name", sorted(dispatchlab.__all__))
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(dispatchlab, name) is not None
    assert name in dir(dispatchlab)


def test_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Simulator'"):
        dispatchlab.Simulator  # noqa: B018
