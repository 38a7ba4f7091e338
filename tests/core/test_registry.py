"""The component registry (core/registry.py): lazy entries, aliases, did-you-mean
errors, own classes from a module or a file, registering, building; and the
registries the packages own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dispatchlab.core.components import parse_component, parse_spec, registry_of
from dispatchlab.core.errors import InputError
from dispatchlab.core.params import Params
from dispatchlab.core.registry import Registry


class Shape(Params):
    """Base class of the test kind."""


class Square(Shape):
    def __init__(self, side: int = 1, filled: bool = False) -> None:
        self.side = side
        self.filled = filled


class Circle(Shape):
    def __init__(self, radius: float = 1.0) -> None:
        self.radius = radius


LAZY_MODULE = '''
from test_registry import Shape


class Hexagon(Shape):
    def __init__(self, side: int = 2) -> None:
        self.side = side
'''


def shapes(**kwargs) -> Registry[Shape]:
    return Registry("shape", Shape, {"square": Square, "circle": Circle}, **kwargs)


@pytest.fixture
def lazy_module(tmp_path: Path, monkeypatch) -> str:
    """A module on sys.path, not imported yet; its name."""
    name = f"lazy_shapes_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(LAZY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_lazy_entry_is_imported_on_first_use_only(lazy_module: str) -> None:
    reg = shapes()
    reg.register("hexagon", f"{lazy_module}:Hexagon")
    assert reg.names() == ["square", "circle", "hexagon"]
    assert "hexagon" in reg and list(reg) == reg.names() and len(reg) == 3
    assert reg.canonical("HEXAGON") == "hexagon"
    assert lazy_module not in sys.modules  # names, membership, spelling: no import
    cls = reg.resolve("hexagon")
    assert lazy_module in sys.modules and cls.__name__ == "Hexagon"
    assert reg["hexagon"] is cls and reg.build("hexagon:side=5").side == 5


def test_alias_and_case() -> None:
    reg = shapes(aliases={"box": "square"})
    assert reg.canonical("Box") == "square" and reg.resolve("BOX") is Square
    assert reg.canonical("Circle") == "circle"
    assert isinstance(reg.build("box", side=3), Square)
    # an alias is a name: 'box:side=2' parses, 'box:2' asks for KEY=VALUE
    assert parse_spec("box:side=2", reg) == ("square", {"side": 2})
    spec = parse_component("Box:side=2", reg)  # a kind of one's own builds too
    assert (spec.kind, spec.name, spec.build().side) == ("shape", "square", 2)
    with pytest.raises(InputError, match="expected KEY=VALUE after 'box'"):
        parse_spec("box:2", reg)


def test_unknown_name_suggests_and_lists_choices() -> None:
    with pytest.raises(InputError) as err:
        shapes().resolve("sqare")
    assert err.value.field == "shape"
    assert err.value.message == (
        "unknown shape 'sqare' (did you mean 'square'?) (choose from square, circle, or "
        "give module:Class or path/file.py:Class)")
    with pytest.raises(KeyError):
        shapes()["Square"]  # the mapping itself is exact, as the dicts it replaces


def test_own_class_from_module_and_from_file(lazy_module: str, tmp_path: Path) -> None:
    reg = shapes()
    cls = reg.resolve(f"{lazy_module}:Hexagon")
    assert cls.__name__ == "Hexagon" and reg.canonical(f"{lazy_module}:Hexagon") == (
        f"{lazy_module}:Hexagon")
    path = tmp_path / f"{lazy_module}.py"
    from_file = reg.build(f"{path}:Hexagon:side=4")
    assert type(from_file).__name__ == "Hexagon" and from_file.side == 4
    with pytest.raises(InputError, match="did you mean 'Hexagon'"):
        reg.resolve(f"{path}:Hexagn")
    with pytest.raises(InputError, match="no such Python file"):
        reg.resolve(f"{tmp_path / 'nothere.py'}:Hexagon")
    with pytest.raises(InputError, match="cannot import module 'no_such_mod_xyz'"):
        reg.resolve("no_such_mod_xyz:Hexagon")
    with pytest.raises(InputError, match="is not a subclass of Shape"):
        reg.resolve("pathlib:Path")


def test_register_refuses_a_taken_name_and_a_wrong_class() -> None:
    reg = shapes()
    assert reg.register("circle", Circle) is Circle  # the same entry again: fine
    with pytest.raises(ValueError, match="shape 'circle' is already registered"):
        reg.register("circle", Square)
    with pytest.raises(ValueError, match="without ':'"):
        reg.register("a:b", Square)
    with pytest.raises(TypeError, match="not a subclass of Shape"):
        reg.register("path", Path)
    # the mapping interface replaces and deletes, as the old dicts did
    reg["circle"] = Square
    del reg["square"]
    assert reg.names() == ["circle"] and reg["circle"] is Square


def test_build_types_values_clones_instances_and_validates() -> None:
    seen: list[Shape] = []
    reg = shapes(validate=seen.append)
    sq = reg.build("square:side=3:filled=yes")
    assert (sq.side, sq.filled) == (3, True) and seen == [sq]
    twin = reg.build(sq, side=4)
    assert twin is not sq and (twin.side, twin.filled, sq.side) == (4, True, 3)
    with pytest.raises(InputError, match="given twice"):
        reg.build("square:side=3", side=4)
    with pytest.raises(InputError, match="shape 'square' has no parameter 'sid' "
                       r"\(did you mean 'side'\?\)"):
        reg.build("square", sid=2)
    with pytest.raises(InputError, match="a shape is a name or a Shape instance"):
        reg.build(Path("x"))


def test_packages_own_their_registries_and_nested_parameters_hold_them() -> None:
    from dispatchlab.dispatch import DISPATCHERS, EASY
    from dispatchlab.dispatch.allocators import ALLOCATORS
    from dispatchlab.dispatch.orderings import ALIASES, ORDERINGS
    from dispatchlab.predict import PREDICTORS, Inflated
    from dispatchlab.predict.power.predictors import POWER_PREDICTORS
    from dispatchlab.sim.duration import DURATION_MODELS

    for kind, reg in [("dispatcher", DISPATCHERS), ("predictor", PREDICTORS),
                      ("allocator", ALLOCATORS), ("ordering", ORDERINGS),
                      ("power-predictor", POWER_PREDICTORS),
                      ("duration-model", DURATION_MODELS)]:
        assert isinstance(reg, Registry) and reg.kind == kind and registry_of(kind) is reg
    assert EASY.nested == {"allocator": ALLOCATORS, "order": ORDERINGS,
                           "priority": ORDERINGS}
    assert Inflated.nested == {"base": PREDICTORS}
    assert ALIASES is ORDERINGS.aliases and ORDERINGS.canonical("FCFS") == "fifo"
    # a nested name becomes an instance from the registry the parameter names
    easy = EASY(order="Maui").set_params(order__wait=0.0)
    assert type(easy.order) is ORDERINGS["maui"] and easy.order.wait == 0.0


def test_importing_dispatch_loads_no_cp_dispatcher() -> None:
    code = ("import sys, dispatchlab.dispatch as d; d.DISPATCHERS.names(); "
            "'hcp' in d.DISPATCHERS; "
            "print(sorted(m for m in sys.modules if m.startswith(('ortools', "
            "'dispatchlab.dispatch.cp', 'dispatchlab.dispatch.powercap'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_helpers_of_before_registries_warn_and_still_work() -> None:
    from dispatchlab.core import params
    from dispatchlab.core.deprecation import MovedWarning
    from dispatchlab.dispatch import DISPATCHERS, EASY

    with pytest.warns(MovedWarning, match="params.build moved to .*Registry.build"):
        easy = params.build(DISPATCHERS, "dispatcher", "easy:order=sjf", {})
    assert isinstance(easy, EASY) and easy.order == "sjf"
    with pytest.warns(MovedWarning, match="canonical_name moved"):
        assert params.canonical_name({"square": Square}, "shape", "SQUARE") == "square"
    with pytest.warns(MovedWarning, match="is_own_class_name moved"):
        assert params.is_own_class_name("mod:Cls")
    with pytest.warns(MovedWarning, match="component_registry moved"):
        assert params.component_registry("dispatcher") == (DISPATCHERS, DISPATCHERS.base)
