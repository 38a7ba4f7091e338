"""``simulate`` prints the power a run reports: its table shows what ``summary.json``
holds about power (energy, mean power, power as a share of the cap, time above the
cap, largest excess, under-use, seed 004's BSLD) and its header names the cap, its
window, the power predictor and the duration model. Through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dispatchlab.metrics.keys import BY_KEY, POWER_TABLE
from dispatchlab.power.eurora_synth import eurora_instance, write_instance
from test_cli import assert_ok, run_cli

CAP_KEYS = ("cap_mean_share", "cap_time_above_share", "cap_max_excess", "cap_mean_underuse")


@pytest.fixture(scope="module")
def instance(tmp_path_factory) -> Path:
    """40 Eurora-like jobs in 2 hours, with their power columns (Parquet)."""
    path = tmp_path_factory.mktemp("power-out") / "inst.parquet"
    write_instance(eurora_instance(40, 7200, "uniform", seed=3), path)
    return path


def flat(text: str) -> str:
    """``text`` with every run of whitespace one space (rich wraps titles)."""
    return " ".join(text.split())


def header(stdout: str) -> str:
    """The table's title: what precedes its top border."""
    return flat(stdout.split("┏")[0])


def rows(stdout: str) -> dict[str, list[str]]:
    """The table's body rows: label -> the other cells."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            out[cells[0]] = cells[1:]
    return out


def test_a_capped_run_prints_its_power_and_names_cap_and_predictors(instance, tmp_path):
    out = tmp_path / "out"
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher",
                   "rapl-dynshare", "--cap", "0.05", "--cap-window", "100:5000",
                   "--power-predictor", "real", "--duration-model", "mixed:profile=dynshare",
                   "--out", out)
    assert_ok(proc)
    summary = json.loads((out / "summary.json").read_text())
    table = rows(proc.stdout)
    # every power metric summary.json holds is in the table, with the same value
    for key in POWER_TABLE:
        m = BY_KEY[key]
        assert summary.get(key) is not None, key
        assert table[m.label][-1] == m.format(summary[key]), key
    assert set(CAP_KEYS) <= set(POWER_TABLE) and "energy_j" in POWER_TABLE
    # the Eurora preset's maximum dynamic power is 64 x 400 W = 25,600 W; 5 % = 1,280 W
    head = header(proc.stdout)
    assert "cap 1,280 W (5.0 % of 25,600 W) on [100, 5,000)" in head
    assert "power predictor real" in head
    assert "duration model mixed:profile=dynshare" in head
    assert "throttling without slowdown" not in head
    assert "power / cap: mean power in the cap window as a share of the cap" in flat(
        proc.stdout)


def test_power_data_without_a_cap_prints_energy_but_no_cap_metrics(instance):
    proc = run_cli("simulate", instance, "--platform", "eurora")
    assert_ok(proc)
    table = rows(proc.stdout)
    assert table[BY_KEY["energy_j"].label][0] == "J"
    assert float(table[BY_KEY["mean_power_w"].label][-1].replace(",", "")) > 0
    for key in CAP_KEYS:
        assert BY_KEY[key].label not in table
    head = header(proc.stdout)
    assert "cap" not in head and "power predictor" not in head


def test_a_cap_file_is_named_by_its_steps(instance, tmp_path):
    caps = tmp_path / "caps.txt"
    caps.write_text("0;3000\n3600;1500\n")
    proc = run_cli("simulate", instance, "--platform", "eurora", "--dispatcher", "bf",
                   "--cap-file", caps, "--power-predictor", "history")
    assert_ok(proc)
    head = header(proc.stdout)
    assert "cap schedule 0 s: 3,000 W, 3,600 s: 1,500 W" in head
    assert "power predictor history" in head and "duration model" not in head
    assert BY_KEY["cap_max_excess"].label in rows(proc.stdout)
