"""Tests of the Lublin & Feitelson (2003) workload generator (dispatchlab.workload.lublin).

The distribution checks compare a large sample with expectations computed here, from
the model's parameters, independently of the generator's code (numeric integration of
the gamma densities, the two-stage uniform CDF written out, scipy's incomplete gamma).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from dispatchlab.core.errors import InputError
from dispatchlab.workload.generate import write_generated
from dispatchlab.workload.load import load_trace
from dispatchlab.workload.lublin import (
    REQUEST_STEPS,
    LublinModel,
    gamma_cdf,
    lublin_header_lines,
    lublin_model,
    requested_times,
)
from dispatchlab.workload.swf import parse_header

N_BIG = 50_000
PROCS = 128


@cache
def _big():
    model = lublin_model(PROCS)
    return model, model.sample(N_BIG, seed=2024)


def _gamma_pdf(x: np.ndarray, shape: float, scale: float) -> np.ndarray:
    """Gamma density, written out (independent of the module)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    pos = x > 0
    xp = x[pos]
    out[pos] = np.exp((shape - 1) * np.log(xp) - xp / scale - math.lgamma(shape)
                      - shape * math.log(scale))
    return out


def _tsu_cdf(x: np.ndarray, m: LublinModel) -> np.ndarray:
    """CDF of the two-stage uniform on log2(size)."""
    x = np.asarray(x, dtype=np.float64)
    low = np.clip((x - m.ulow) / (m.umed - m.ulow), 0.0, 1.0)
    high = np.clip((x - m.umed) / (m.uhi - m.umed), 0.0, 1.0)
    return m.uprob * low + (1.0 - m.uprob) * high


# ------------------------------------------------------------------------------------------
# API, determinism, files
# ------------------------------------------------------------------------------------------


def test_defaults_are_the_published_batch_parameters():
    m = lublin_model(PROCS)
    assert (m.serial_prob, m.pow2_prob, m.ulow, m.umed, m.uhi, m.uprob) == (
        0.2927, 0.6686, 1.2, 5.0, 7.0, 0.875)
    assert (m.a1, m.b1, m.a2, m.b2, m.pa, m.pb) == (6.57, 0.823, 639.1, 0.0156, -0.003, 0.6986)
    assert (m.aarr, m.barr, m.arar, m.anum, m.bnum) == (6.0415, 0.8531, 1.0519, 6.1271, 5.2740)
    assert (m.max_log_run, m.max_log_gap, m.day_start_bucket, m.start_hour) == (12, 13, 11, 0)
    big = lublin_model(1024)
    assert (big.uhi, big.umed, big.ulow) == (10.0, 8.0, 1.2)
    assert LublinModel(max_procs=1024) == big
    with pytest.raises(Exception):  # frozen  # noqa: B017
        big.pa = 0.0  # type: ignore[misc]


def test_same_seed_same_table_and_file(tmp_path):
    model = lublin_model(PROCS)
    a, b = model.sample(3000, seed=5), model.sample(3000, seed=5)
    assert set(a.columns) == set(b.columns)
    for name in a.columns:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    for suffix in ("swf", "swf.gz"):
        pa, pb = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
        write_generated(a, pa, lublin_header_lines(model, 5, 3000))
        write_generated(b, pb, lublin_header_lines(model, 5, 3000))
        assert pa.read_bytes() == pb.read_bytes()
    c = model.sample(3000, seed=6)
    for name in ("submit", "run", "units"):
        assert not np.array_equal(a[name], c[name]), name
    # a prefix of a longer sample is not required, but the model object is reusable
    np.testing.assert_array_equal(model.sample(10, 1)["run"], model.sample(10, 1)["run"])


@pytest.mark.parametrize("procs", [128, 100, 2, 3, 6])
def test_written_file_rereads(tmp_path, procs):
    model = lublin_model(procs)
    n = 4000
    table = model.sample(n, seed=11)
    assert table["job_id"].tolist() == list(range(1, n + 1))
    assert table["submit"][0] == 0
    assert np.all(np.diff(table["submit"]) >= 0)
    path = tmp_path / "lublin.swf"
    write_generated(table, path, lublin_header_lines(model, 11, n))
    back = load_trace(path)
    assert back.n == n
    assert back.info.max_procs == procs and back.info.max_nodes == procs
    units, run, req = back["units"], back["run"], back["requested_time"]
    assert units.min() >= 1 and units.max() <= procs
    assert run.min() >= 1 and run.max() <= math.floor(math.exp(12))
    assert np.all(req >= run)
    assert set(np.unique(req).tolist()) <= set(REQUEST_STEPS)
    np.testing.assert_array_equal(back["submit"], table["submit"])
    np.testing.assert_array_equal(back["run"], table["run"])
    np.testing.assert_array_equal(back["units"], table["units"])
    np.testing.assert_array_equal(back["req_time"], table["requested_time"])
    assert np.all(back["user"] == -1) and np.all(back["status"] == 1)
    np.testing.assert_array_equal(back["alloc_procs"], units)


def test_header_lines():
    model = lublin_model(256)
    lines = lublin_header_lines(model, 42, 1000)
    assert all(line.startswith("; ") for line in lines)
    header = parse_header(lines)
    assert header["MaxProcs"] == "256" and header["MaxNodes"] == "256"
    assert header["MaxJobs"] == "1000"
    notes = header["Note"]
    assert "generated by dispatchlab generate --model lublin --seed 42 --jobs 1000" in notes
    for text in ("serial_prob=0.2927", "pow2_prob=0.6686", "umed=6", "uhi=8", "a2=639.1",
                 "pa=-0.003", "aarr=6.0415", "anum=6.1271", "bnum=5.274", "requested"):
        assert text in notes, text


def test_requested_time_rule():
    run = np.array([1, 299, 300, 301, 3600, 3601, 100_000, 172_800, 172_801])
    assert requested_times(run).tolist() == [300, 300, 300, 600, 3600, 7200, 129_600,
                                             172_800, 176_400]


# ------------------------------------------------------------------------------------------
# the model's pieces against independent computations
# ------------------------------------------------------------------------------------------


def test_gamma_cdf_and_bucket_weights():
    special = pytest.importorskip("scipy.special")
    for shape, x in [(6.1271, 2.0), (6.1271, 11.0), (0.4, 0.05), (0.4, 9.0), (639.1, 650.0),
                     (3.0, 1e-4), (40.0, 300.0)]:
        assert gamma_cdf(x, shape, 1.0) == pytest.approx(float(special.gammainc(shape, x)),
                                                         abs=1e-12)
    assert gamma_cdf(10.0, 2.0, 5.0) == pytest.approx(float(special.gammainc(2.0, 2.0)))
    m = lublin_model(PROCS)
    expected = np.empty(48)
    for k in range(48):
        i = k + 1 if k + 1 >= 11 else k + 49  # the model's day starts at bucket 11
        expected[k] = (special.gammainc(m.anum, (i + 0.5) / m.bnum)
                       - special.gammainc(m.anum, (i - 0.5) / m.bnum))
    expected /= expected.mean()
    np.testing.assert_allclose(m.bucket_weights(), expected, rtol=1e-9)
    w = m.bucket_weights()
    assert 25 <= int(np.argmax(w)) <= 27  # peak about 13:00
    assert int(np.argmin(w)) == 9  # trough just before the day start (04:30-05:00)


# ------------------------------------------------------------------------------------------
# distributions of a large sample
# ------------------------------------------------------------------------------------------


def test_serial_and_power_of_two_shares():
    m, t = _big()
    units = t["units"]
    n = units.size
    serial = float(np.mean(units == 1))
    se = math.sqrt(m.serial_prob * (1 - m.serial_prob) / n)
    assert abs(serial - m.serial_prob) < 4 * se
    # power-of-two sizes: serial + designated power of two + the other parallel jobs
    # whose round(2**x) happens to be a power of two
    j = np.arange(1, 8)
    hit = _tsu_cdf(np.log2(2.0**j + 0.5), m) - _tsu_cdf(np.log2(2.0**j - 0.5), m)
    p_expected = m.serial_prob + m.pow2_prob + (1 - m.serial_prob - m.pow2_prob) * hit.sum()
    pow2 = float(np.mean((units & (units - 1)) == 0))
    se = math.sqrt(p_expected * (1 - p_expected) / n)
    assert abs(pow2 - p_expected) < 4 * se, (pow2, p_expected)
    assert p_expected == pytest.approx(0.9689, abs=2e-3)


def test_parallel_sizes_follow_the_two_stage_uniform():
    m, t = _big()
    par = t["units"][t["units"] > 1]
    assert par.min() >= 2
    q = m.pow2_prob / (1 - m.serial_prob)  # designated power-of-two share of parallel jobs
    k = np.arange(2, PROCS + 1)
    # power of two: size 2**round(x) <= k  <=>  x < floor(log2 k) + 0.5
    f_pow2 = _tsu_cdf(np.floor(np.log2(k)) + 0.5, m)
    # other: round(2**x) <= k  <=>  x < log2(k + 0.5)
    f_other = _tsu_cdf(np.log2(k + 0.5), m)
    expected = q * f_pow2 + (1 - q) * f_other
    expected[-1] = 1.0
    empirical = np.searchsorted(np.sort(par), k, side="right") / par.size
    d = float(np.max(np.abs(empirical - expected)))
    assert d < 1.63 / math.sqrt(par.size), d  # KS, 1 % level (conservative when discrete)
    # and the CDF really has the two-stage shape: 87.5 % below 2**umed (+ rounding)
    assert float(np.mean(par <= 32)) == pytest.approx(expected[32 - 2], abs=0.01)
    assert expected[32 - 2] > 0.85


def _expected_log_run(m: LublinModel, size: int) -> tuple[float, float]:
    """E[ln run] and P(run >= 2981 s) for a job of ``size`` (numeric integration of the
    hyper-gamma truncated at max_log_run, with run = floor(exp(g)))."""
    p = min(max(m.pa * size + m.pb, 0.0), 1.0)
    g = np.linspace(1e-9, m.max_log_run, 400_001)
    dens = p * _gamma_pdf(g, m.a1, m.b1) + (1 - p) * _gamma_pdf(g, m.a2, m.b2)
    dens /= np.trapezoid(dens, g)
    log_run = np.log(np.maximum(np.floor(np.exp(g)), 1.0))
    mean = float(np.trapezoid(dens * log_run, g))
    tail = float(np.trapezoid(dens * (g >= math.log(2981)), g))
    return mean, tail


def test_run_time_mixing_shifts_with_size():
    m, t = _big()
    units, log_run = t["units"], np.log(t["run"].astype(np.float64))
    groups = {"small": units <= 4, "large": units >= 64}
    means = {}
    for name, mask in groups.items():
        sizes, counts = np.unique(units[mask], return_counts=True)
        exp_mean = exp_tail = 0.0
        for s, c in zip(sizes.tolist(), counts.tolist(), strict=True):
            mu, tail = _expected_log_run(m, s)
            exp_mean += c * mu
            exp_tail += c * tail
        k = int(mask.sum())
        exp_mean, exp_tail = exp_mean / k, exp_tail / k
        vals = log_run[mask]
        assert abs(vals.mean() - exp_mean) < 4 * vals.std() / math.sqrt(k), (name, exp_mean)
        tail = float(np.mean(t["run"][mask] >= 2981))
        assert abs(tail - exp_tail) < 4 * math.sqrt(exp_tail * (1 - exp_tail) / k), name
        means[name] = (vals.mean(), exp_mean)
    # large jobs run longer: p = pa*size + pb is smaller for them (pa < 0)
    diff, exp_diff = (means["large"][0] - means["small"][0],
                      means["large"][1] - means["small"][1])
    assert exp_diff > 1.0
    assert diff == pytest.approx(exp_diff, abs=0.25)


def test_arrivals_daily_cycle():
    m, t = _big()
    w = m.bucket_weights()
    bucket = (t["submit"] % 86400) // 1800
    counts = np.bincount(bucket, minlength=48)
    share = counts / counts.sum()
    assert np.max(np.abs(share - w / 48)) < 0.0075
    order = np.argsort(w)
    peak, night = order[-8:], order[:8]
    ratio = counts[peak].sum() / counts[night].sum()
    expected = w[peak].sum() / w[night].sum()
    assert expected == pytest.approx(5.04, abs=0.01)
    assert ratio == pytest.approx(expected, rel=0.25)
    # a flat arrival process would fail this
    assert ratio > 3.5


def test_mean_interarrival():
    m, t = _big()
    shape, scale, top = m.aarr * m.arar, m.barr, m.max_log_gap
    h = np.linspace(1e-9, top, 400_001)
    dens = _gamma_pdf(h, shape, scale)
    dens /= np.trapezoid(dens, h)
    mean = float(np.trapezoid(dens * np.exp(h), h))
    sd = math.sqrt(float(np.trapezoid(dens * np.exp(2 * h), h)) - mean**2)
    assert mean == pytest.approx(3517, rel=0.01)
    sub = t["submit"]
    observed = (sub[-1] - sub[0]) / (sub.size - 1)
    assert abs(observed - mean) < 5 * sd / math.sqrt(sub.size - 1), (observed, mean)


def test_sampling_is_fast():
    import time

    model = lublin_model(1024)
    start = time.perf_counter()
    table = model.sample(100_000, seed=3)
    assert time.perf_counter() - start < 2.0
    assert table.n == 100_000


# ------------------------------------------------------------------------------------------
# bad inputs
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("procs", [1, 0, -8, 2.5, True, "128", None])
def test_bad_max_procs(procs):
    with pytest.raises(InputError, match="max_procs"):
        lublin_model(procs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("n_jobs", "seed", "what"), [
    (0, 1, "number of jobs"), (-3, 1, "number of jobs"), (2.0, 1, "number of jobs"),
    (True, 1, "number of jobs"), (10, -1, "seed"), (10, 1.5, "seed"),
])
def test_bad_sample_arguments(n_jobs, seed, what):
    with pytest.raises(InputError, match=what):
        lublin_model(64).sample(n_jobs, seed)  # type: ignore[arg-type]


@pytest.mark.parametrize("kwargs", [
    {"serial_prob": 1.5}, {"pow2_prob": -0.1}, {"serial_prob": 0.6, "pow2_prob": 0.6},
    {"ulow": 6.0, "umed": 5.0}, {"umed": 8.0}, {"a1": 0.0}, {"bnum": -1.0},
    {"start_hour": 24}, {"pa": float("nan")}, {"max_log_run": 0.0}, {"uprob": "x"},
])
def test_bad_parameters(kwargs):
    with pytest.raises(InputError, match="Lublin model"):
        LublinModel(max_procs=128, **kwargs)


def test_one_job_and_tiny_machines():
    t = lublin_model(2).sample(1, seed=0)
    assert t.n == 1 and t["submit"].tolist() == [0]
    sizes = lublin_model(2).sample(2000, seed=1)["units"]
    assert set(np.unique(sizes).tolist()) == {1, 2}
    sizes = lublin_model(3).sample(2000, seed=1)["units"]
    assert sizes.max() <= 3 and 3 in sizes


def test_arrivals_uniform_within_a_bucket():
    # the rate is constant within a half-hour bucket: positions in the bucket are uniform
    _, t = _big()
    pos = np.sort((t["submit"] % 1800) / 1800.0)
    d = float(np.max(np.abs(np.arange(1, pos.size + 1) / pos.size - pos)))
    assert d < 0.025, d
