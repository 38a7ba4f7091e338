"""The component grammar NAME(:KEY=VALUE)* (registered names, module:Class, file paths,
typed values, -D/-P) and the 'did you mean' suggestions, in the library and the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from dispatchlab.core.components import (
    parse_assignments,
    parse_component,
    parse_component_list,
    split_spec,
)
from dispatchlab.core.errors import InputError
from dispatchlab.core.suggest import case_match, did_you_mean, missing_file_hint
from dispatchlab.dispatch import EASY, SJF
from dispatchlab.predict import Inflated
from test_cli import assert_ok, assert_user_error, run_cli, synthetic_swf

OWN_MODULE = '''
from dispatchlab.dispatch import EASY


class EasyTagged(EASY):
    """EASY with one extra text parameter (to test typing and -D values with ':')."""

    def __init__(self, tag: str = "x", order: str = "fifo") -> None:
        super().__init__(order=order)
        self.tag = tag
'''


# ---------------------------------------------------------------- registered names
def test_split_spec_forms() -> None:
    assert split_spec("easy", "--d") == ("easy", {})
    assert split_spec("easy:order=sjf:reservations=2", "--d") == (
        "easy", {"order": "sjf", "reservations": "2"})
    # the name may hold ':' (module:Class); the first KEY=VALUE segment ends it
    assert split_spec("pkg.mod:Cls:alpha=0.5", "--d") == ("pkg.mod:Cls", {"alpha": "0.5"})
    assert split_spec("dir/f.py:Cls", "--d") == ("dir/f.py:Cls", {})


def test_registered_name_typed_values() -> None:
    spec = parse_component("easy:order=sjf:reservations=2", "dispatcher")
    assert spec.name == "easy"
    # reservations has an int default, so "2" becomes the integer 2
    assert spec.params == {"order": "sjf", "reservations": 2}
    disp = spec.build()
    assert isinstance(disp, EASY) and disp.reservations == 2 and disp.order == "sjf"
    assert spec.text == "easy:order=sjf:reservations=2"


def test_bool_and_float_values() -> None:
    assert parse_component("sjf:skip=true", "dispatcher").params == {"skip": True}
    assert parse_component("sjf:skip=no", "dispatcher").params == {"skip": False}
    spec = parse_component("inflated:factor=2", "predictor")
    # factor has a float default: "2" is the float 2.0
    assert spec.params == {"factor": 2.0} and isinstance(spec.params["factor"], float)
    assert isinstance(spec.build(), Inflated)


def test_case_insensitive_name_is_stored_canonically() -> None:
    assert parse_component("EASY", "dispatcher").name == "easy"
    assert parse_component("Tsafrir", "predictor").name == "tsafrir"


@pytest.mark.parametrize(("text", "needles"), [
    ("eassy", ["unknown dispatcher 'eassy'", "did you mean 'easy'"]),
    ("easy:reservation=2", ["no parameter 'reservation'", "did you mean 'reservations'"]),
    ("easy:reservations=two", ["must be an integer", "'two'"]),
    ("sjf:skip=maybe", ["must be true or false"]),
    ("easy:order", ["expected KEY=VALUE"]),
    ("easy:order=sjf:order=fifo", ["given twice"]),
    ("easy:order=backwards", ["unknown ordering 'backwards'", "choose from fifo, sjf"]),
    (":order=sjf", ["expected NAME"]),
])
def test_dispatcher_spec_errors(text: str, needles: list[str]) -> None:
    with pytest.raises(InputError) as err:
        parse_component(text, "dispatcher")
    for needle in needles:
        assert needle in str(err.value), str(err.value)


def test_predictor_typo_suggestion() -> None:
    with pytest.raises(InputError, match="did you mean 'tsafrir'"):
        parse_component("tsafir", "predictor")


def test_assignments_and_inline_conflict() -> None:
    extra = parse_assignments(["order=sjf", "reservations=3"], "-D")
    spec = parse_component("easy", "dispatcher", extra=extra)
    assert spec.params == {"order": "sjf", "reservations": 3}
    with pytest.raises(InputError, match="both inline and with -D"):
        parse_component("easy:order=fifo", "dispatcher", extra={"order": "sjf"})
    with pytest.raises(InputError, match="expected KEY=VALUE"):
        parse_assignments(["order"], "-D")


def test_list_forms() -> None:
    specs = parse_component_list(["easy,sjf", "easy:order=sjf"], "dispatcher")
    assert [s.text for s in specs] == ["easy", "sjf", "easy:order=sjf"]
    assert isinstance(specs[1].build(), SJF)
    with pytest.raises(InputError, match="given twice"):
        parse_component_list(["easy", "EASY"], "dispatcher")
    with pytest.raises(InputError, match="comma-separated"):
        parse_component_list(["easy,,sjf"], "dispatcher")


# ----------------------------------------------------------------- own classes
def test_module_class_from_current_directory(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "own_tagged_mod.py").write_text(OWN_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    spec = parse_component("own_tagged_mod:EasyTagged:tag=a", "dispatcher")
    assert spec.name == "own_tagged_mod:EasyTagged"
    assert spec.build().tag == "a"
    sys.modules.pop("own_tagged_mod", None)


def test_file_path_class_and_values_with_colons(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "tagged.py").write_text(OWN_MODULE)
    name = f"{folder / 'tagged.py'}:EasyTagged"
    # a value containing ':' goes through -D, typed as text (the default is a str)
    spec = parse_component(name, "dispatcher", extra={"tag": "a:b,c"})
    assert spec.build().tag == "a:b,c"
    with pytest.raises(InputError, match="did you mean 'EasyTagged'"):
        parse_component(f"{folder / 'tagged.py'}:EasyTaged", "dispatcher")
    with pytest.raises(InputError, match="no such Python file"):
        parse_component(f"{folder / 'nothere.py'}:EasyTagged", "dispatcher")
    with pytest.raises(InputError, match="not a subclass of Predictor"):
        parse_component(name, "predictor")


# ------------------------------------------------------------------ suggestions
def test_suggestions() -> None:
    assert did_you_mean("dispatcher", ["dispatchers", "predictors"]) == \
        " (did you mean 'dispatchers'?)"
    assert did_you_mean("zzzz", ["easy", "sjf"]) == ""
    assert case_match("FIFO", ["fifo", "sjf"]) == "fifo"
    assert case_match("x", ["fifo"]) is None


def test_missing_file_hint(tmp_path: Path) -> None:
    (tmp_path / "KTH-SP2.swf").write_text("")
    assert "KTH-SP2.swf" in missing_file_hint(tmp_path / "KHT-SP2.swf")
    assert missing_file_hint(tmp_path / "nothing-like-it.txt") == ""


# --------------------------------------------------------------------------- CLI
@pytest.fixture(scope="module")
def swf(tmp_path_factory) -> Path:
    return synthetic_swf(tmp_path_factory.mktemp("grammar") / "syn.swf", n=300)


def _summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text())


def test_cli_three_ways_to_set_a_parameter(swf: Path, tmp_path: Path) -> None:
    """--dispatcher easy:order=sjf, -D order=sjf and --order sjf are one configuration."""
    outs = []
    for i, args in enumerate((["--dispatcher", "easy:order=sjf"],
                              ["--dispatcher", "easy", "-D", "order=sjf"],
                              ["--dispatcher", "easy", "--order", "sjf"])):
        out = tmp_path / f"o{i}"
        assert_ok(run_cli("simulate", swf, "--nodes", "8", "--cores-per-node", "8", *args,
                          "--out", out))
        outs.append(_summary(out))
    plain = tmp_path / "plain"
    assert_ok(run_cli("simulate", swf, "--nodes", "8", "--cores-per-node", "8",
                      "--out", plain))
    keys = ("mean_wait", "mean_bsld", "max_wait")
    assert all({k: o[k] for k in keys} == {k: outs[0][k] for k in keys} for o in outs)
    # the SJF backfill order changes the schedule of this contended trace
    assert {k: _summary(plain)[k] for k in keys} != {k: outs[0][k] for k in keys}


def test_cli_predictor_param(swf: Path) -> None:
    proc = run_cli("simulate", swf, "--predictor", "inflated", "-P", "factor=2",
                   "-P", "base=tsafrir")
    assert_ok(proc)
    assert "inflated:factor=2.0:base=tsafrir" in proc.stdout


@pytest.mark.parametrize(("args", "needles"), [
    (["--dispatcher", "easy,sjf"], ["runs one dispatcher", "dispatchlab compare"]),
    (["--dispatcher", "eassy"], ["did you mean 'easy'"]),
    (["-D", "reservation=2"], ["-D", "did you mean 'reservations'"]),
    (["-P", "factor=2"], ["-P", "predictor 'walltime' has no parameter 'factor'"]),
    (["--dispatcher", "fifo", "--order", "sjf"], ["--order", "does not apply"]),
    (["--allocator", "bestfit", "--nodes", "8", "--cores-per-node", "8"],
     ["--allocator", "did you mean 'best-fit'"]),
    (["--overrun", "kil"], ["--overrun", "did you mean 'kill'"]),
])
def test_cli_component_errors(swf: Path, args: list[str], needles: list[str]) -> None:
    assert_user_error(run_cli("simulate", swf, *args), *needles)


def test_cli_command_and_file_typos(swf: Path) -> None:
    assert_user_error(run_cli("simualte", swf), "did you mean 'simulate'")
    assert_user_error(run_cli("simulate", swf.with_name("sin.swf")), "did you mean",
                      "syn.swf")


def test_cli_open_ranges(swf: Path, tmp_path: Path) -> None:
    out = tmp_path / "open"
    assert_ok(run_cli("simulate", swf, "--jobs", "100:", "--measure", "index:50:",
                      "--out", out))
    s = _summary(out)
    # rows 100..299 kept (200 jobs); jobs 50..199 of those measured (150)
    assert s["total_jobs"] == 200 and s["measured_jobs"] == 150


def test_cli_help_lists_registered_names() -> None:
    from dispatchlab.core.components import registered_names

    text = run_cli("simulate", "--help").stdout
    for name in registered_names("dispatcher") + registered_names("predictor"):
        assert name in text


def test_cli_predict_parametrised_predictors_and_selection(swf: Path, tmp_path: Path) -> None:
    """Two parametrised predictors of one class are told apart by their spec text; the
    trace selection options work in predict too."""
    proc = run_cli("predict", swf, "--predictors", "walltime",
                   "--predictors", "inflated:factor=1.5", "--predictors", "inflated:factor=3",
                   "--jobs", "0:150", "--out", tmp_path)
    assert_ok(proc)
    summary = json.loads((tmp_path / "prediction_summary.json").read_text())
    assert set(summary["metrics"]) == {"walltime", "inflated:factor=1.5",
                                       "inflated:factor=3.0"}
    assert "150 jobs" in proc.stdout
