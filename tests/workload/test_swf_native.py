"""The compiled SWF parser (dispatchlab-core's ``swf`` module, ``_core.SwfParser``), the
fast path of :func:`dispatchlab.workload.swf.read_swf`: on every file it gives exactly
the table of the reference reader (the Python parser), or hands the file back to it,
which then reads it with its skips, roundings and one-line errors."""

from __future__ import annotations

import gzip
import random
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import TRACES_DIR
from dispatchlab import _core
from dispatchlab.core.errors import InputError
from dispatchlab.workload import swf
from dispatchlab.workload.jobs import JobTable

GOOD = "1 0 5 100 4 1.5 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1"


def _reference(monkeypatch: pytest.MonkeyPatch, path: Path, **kw) -> JobTable | str:
    """The Python reader's table, or its error message."""
    with monkeypatch.context() as m:
        m.setattr(swf, "_core", None)
        return _outcome(path, **kw)


def _outcome(path: Path, **kw) -> JobTable | str:
    try:
        return swf.read_swf(path, **kw)
    except InputError as exc:
        return f"InputError: {exc}"


def _same(a: JobTable | str, b: JobTable | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return (a.info == b.info and list(a.columns) == list(b.columns)
            and list(a.resources) == list(b.resources)
            and all(a.columns[k].dtype == b.columns[k].dtype
                    and np.array_equal(a.columns[k], b.columns[k]) for k in a.columns)
            and all(np.array_equal(a.resources[k], b.resources[k]) for k in a.resources))


def _native_took(path: Path, *, ignore_extra: bool = False) -> bool:
    gzipped = path.read_bytes()[:2] == b"\x1f\x8b"
    return swf._read_native(path, gzipped=gzipped, ignore_extra=ignore_extra) is not None


# -- the real traces -----------------------------------------------------------------

REAL = sorted(p.name for p in TRACES_DIR.glob("*.swf.gz")) if TRACES_DIR.is_dir() else []


@pytest.mark.traces
@pytest.mark.parametrize("name", [n for n in REAL if "machines" not in n])
def test_every_real_trace_is_read_natively_as_the_reference_reads_it(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = TRACES_DIR / name
    kw = {"extra_fields": "ignore"} if name.startswith("alea") else {}
    assert _native_took(path, ignore_extra=bool(kw))
    assert _same(_outcome(path, **kw), _reference(monkeypatch, path, **kw))


# -- generated SWF text ----------------------------------------------------------------

BLANKS = st.sampled_from([" ", "  ", "\t", " \t ", "\r ", "\x0b", "\x0c"])
INT_TOKEN = st.one_of(
    st.integers(-1, 10**6).map(str),
    st.integers(0, 10**6).map(lambda v: f"+{v}"),
    st.integers(0, 999).map(lambda v: f"00{v}"),
    st.integers(-1, 10**5).map(lambda v: f"{v}.00"),
    st.integers(0, 10**5).map(lambda v: f"{v}."),
    st.just("-0"),
)
FLOAT_TOKEN = st.one_of(
    INT_TOKEN,
    st.decimals(-10**6, 10**6, places=3, allow_nan=False, allow_infinity=False).map(str),
    st.integers(0, 10**17).map(lambda v: f"{v}"[:9] + "." + f"{v}"[9:]),
)
#: tokens the reference reader skips, rounds, re-parses as floats or refuses
ODD_TOKEN = st.sampled_from([
    "abc", "1e3", "2E2", ".5", "-.5", "1.2.3", "12.5", "-7.25", "+", "-", "1-2", "0x10",
    "9007199254740993", "1234567890123456789", "4398046511104", "-2", "-5", "nan", "inf",
    "1.5e1", "\u00e9", "12345678901234567.8",
])


@st.composite
def job_line(draw, odd: bool) -> str:
    n = swf.N_FIELDS
    if odd and draw(st.booleans()):
        n = draw(st.sampled_from([1, 17, 19, 21]))
    tokens = [draw(FLOAT_TOKEN if j in (5, 6) else INT_TOKEN) for j in range(n)]
    if odd:
        for _ in range(draw(st.integers(0, 2))):
            tokens[draw(st.integers(0, n - 1))] = draw(ODD_TOKEN)
    if n > swf.N_FIELDS and draw(st.booleans()):
        tokens[-1] = "x.y"  # non-numeric extras (the Alea file's)
    lead = draw(BLANKS) if draw(st.booleans()) else ""
    seps = [draw(BLANKS) for _ in range(n - 1)] + [draw(st.sampled_from(["", " ", "\r"]))]
    return lead + "".join(t + s for t, s in zip(tokens, seps, strict=True))


@st.composite
def swf_text(draw, odd: bool) -> str:
    comment = st.sampled_from(["; Version: 2.2", "; MaxProcs: 128", ";", "  ; Note: a\r",
                               "; MaxRuntime: 7200 (2 h)", ";\u00e9t\u00e9", "; x 1e3 abc"])
    line = st.one_of(job_line(odd), job_line(odd), comment, BLANKS, st.just(""))
    lines = draw(st.lists(line, min_size=1, max_size=12))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n"]))


def _write(tmp: Path, text: str, gz: bool) -> Path:
    path = tmp / ("t.swf.gz" if gz else "t.swf")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=swf_text(odd=True), gz=st.booleans(), lenient=st.booleans(),
       extra=st.sampled_from(["error", "ignore"]))
def test_any_text_reads_as_the_reference_reads_it(tmp_path: Path, monkeypatch, text: str,
                                                  gz: bool, lenient: bool,
                                                  extra: str) -> None:
    """Malformed lines, skips (lenient), roundings, float re-parses, extra fields: the
    same table or the same one-line error as the Python reader."""
    path = _write(tmp_path, text, gz)
    kw = {"lenient": lenient, "extra_fields": extra}
    assert _same(_outcome(path, **kw), _reference(monkeypatch, path, **kw))


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=swf_text(odd=False), gz=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_clean_text_is_read_natively(tmp_path: Path, monkeypatch, text: str, gz: bool,
                                     seed: int) -> None:
    """A file of clean job lines, comments and blank lines takes the fast path, with the
    reference's table, whatever the blocks the text comes in."""
    path = _write(tmp_path, text, gz)
    reference = _reference(monkeypatch, path)
    if isinstance(reference, str):  # no job line at all: the reader's "no jobs"
        assert "no jobs" in reference and not _native_took(path)
        return
    assert _native_took(path)
    assert _same(_outcome(path), reference)
    whole = _core.SwfParser()
    whole.feed(text.encode())
    rng, data, parts = random.Random(seed), text.encode(), _core.SwfParser()
    while data:
        cut = rng.randint(1, 7)
        parts.feed(data[:cut])
        data = data[cut:]
    a, b = whole.finish(), parts.finish()
    assert a[1:] == b[1:] and all(np.array_equal(x, y) for x, y in zip(a[0], b[0], strict=True))


# -- what the fast path hands back -----------------------------------------------------

@pytest.mark.parametrize(("line", "why"), [
    ("1 0 5 100 4 1.5 -1 4 200", "field 10: fewer than 18 fields"),
    (GOOD + " 7", "field 19: more than 18 fields"),
    ("1 0 5 1e2 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1", "field 4: not a plain decimal number"),
    ("1 0 5 100 4 1 -1 4 200 -1 1.5 3 1 -1 1 -1 -1 -1", "field 11: a fraction in an integer"),
    ("1 -1 5 100 4 1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1", "field 2: no submit time"),
    ("1 0 5 100 4 1 -1 4 -3 -1 1 3 1 -1 1 -1 -1 -1", "field 9: a negative requested time"),
])
def test_a_file_is_handed_back_at_its_first_unclean_line(line: str, why: str) -> None:
    parser = _core.SwfParser()
    assert parser.feed(f"; c\n{GOOD}\n".encode())
    assert not parser.feed(f"{line}\n{GOOD}\n".encode())
    assert parser.finish().startswith(f"line 3 {why}")
    with pytest.raises(ValueError, match="already finished"):
        parser.finish()


def test_rounding_is_left_to_the_reference_reader(tmp_path: Path, monkeypatch) -> None:
    path = _write(tmp_path, GOOD.replace(" 1 3 1 ", " 1 3.5 1 ") + "\n", gz=False)
    assert not _native_took(path)
    table = _outcome(path)
    assert isinstance(table, JobTable) and table.info.rounded == {"user": 1}
    assert _same(table, _reference(monkeypatch, path))


def test_gzip_members_back_to_back_are_read_natively(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.swf.gz"
    path.write_bytes(gzip.compress(f"; a\n{GOOD}\n".encode()) + gzip.compress(
        f"{GOOD}\n".encode()) + gzip.compress(b""))
    assert _native_took(path)
    table = _outcome(path)
    assert isinstance(table, JobTable) and table["line"].tolist() == [2, 3]
    assert _same(table, _reference(monkeypatch, path))


@pytest.mark.parametrize("tail", [b"\0\0\0\0", b"garbage", b"cut"])
def test_odd_gzip_files_are_left_to_the_reference_reader(tmp_path: Path, monkeypatch,
                                                         tail: bytes) -> None:
    """Zero padding (gzip accepts it), trailing garbage, a truncated member: read (or
    refused) by the reference reader, with its message."""
    data = gzip.compress(f"{GOOD}\n".encode() * 50)
    path = tmp_path / "t.swf.gz"
    path.write_bytes(data[:-7] if tail == b"cut" else data + tail)
    assert not _native_took(path)
    assert _same(_outcome(path), _reference(monkeypatch, path))


def test_a_corrupt_member_is_left_to_the_reference_reader(tmp_path: Path,
                                                          monkeypatch) -> None:
    data = bytearray(gzip.compress(f"{GOOD}\n".encode() * 50))
    data[-6] ^= 0xFF  # the CRC: zlib checks it
    path = tmp_path / "t.swf.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(zlib.error):
        zlib.decompress(bytes(data), wbits=31)
    assert not _native_took(path)
    outcome = _outcome(path)
    assert isinstance(outcome, str) and "gzip" in outcome
    assert outcome == _reference(monkeypatch, path)


@pytest.mark.parametrize("block", [1, 2, 7, 64, 1 << 22])
def test_the_text_of_gzip_members_in_blocks_of_any_size(tmp_path: Path, block: int) -> None:
    """The decompressed text handed to the parser is gzip's, member after member,
    whatever the size of the blocks read and decompressed."""
    rng = random.Random(block)
    parts = [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 300)))
             for _ in range(4)]
    path = tmp_path / "t.gz"
    path.write_bytes(b"".join(gzip.compress(p, compresslevel=rng.choice([1, 9]))
                              for p in parts))
    blocks = list(swf._text_blocks(path, True, block))
    assert b"".join(blocks) == b"".join(parts) == gzip.decompress(path.read_bytes())
    assert all(0 < len(b) <= block for b in blocks)
    plain = tmp_path / "t.swf"
    plain.write_bytes(b"".join(parts))
    assert b"".join(swf._text_blocks(plain, False, block)) == b"".join(parts)


def test_a_failing_compiled_parser_leaves_the_file_to_the_reference_reader(
        tmp_path: Path, monkeypatch) -> None:
    """A panic in the compiled parser (a RuntimeError, a bug) is no traceback for the
    user: the reference reader reads the file."""
    path = _write(tmp_path, f"{GOOD}\n", gz=True)

    class Broken:
        def __init__(self, *args) -> None:
            pass

        def feed(self, data: bytes) -> bool:
            raise RuntimeError("the native core panicked (a bug): test")

    reference = _reference(monkeypatch, path)
    monkeypatch.setattr(swf._core, "SwfParser", Broken)
    assert not _native_took(path)
    assert _same(_outcome(path), reference)
