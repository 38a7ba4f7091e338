"""The SWF reader's prefetching (``swf._prefetched``): a helper thread decompresses the
next blocks while the compiled parser reads this one; the same blocks, the same
errors at the same point, no thread left behind, and the same tables from read_swf."""

from __future__ import annotations

import gzip
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dispatchlab.workload import swf

THREAD = "dispatchlab-swf-read"


def _readers() -> int:
    return sum(t.name == THREAD for t in threading.enumerate())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=50), max_size=30), st.integers(1, 4))
def test_same_blocks_in_the_same_order(blocks: list[bytes], depth: int) -> None:
    assert list(swf._prefetched(iter(blocks), depth)) == blocks
    assert _readers() == 0


@pytest.mark.parametrize("error", [ValueError("a truncated gzip member"),
                                   zlib.error("invalid"), OSError("read error")])
def test_the_error_comes_after_the_blocks_before_it(error: Exception) -> None:
    def source() -> Iterator[bytes]:
        yield b"a"
        yield b"b"
        raise error

    got = []
    with pytest.raises(type(error)) as caught:
        for block in swf._prefetched(source()):
            got.append(block)
    assert got == [b"a", b"b"]
    assert caught.value is error
    assert _readers() == 0


def test_stopping_early_stops_the_thread_and_closes_the_source() -> None:
    closed = threading.Event()
    made = []

    def source() -> Iterator[bytes]:
        try:
            for i in range(1000):
                made.append(i)
                yield b"x" * 10
        finally:
            closed.set()

    blocks = swf._prefetched(source(), 2)
    assert next(blocks) == b"x" * 10
    blocks.close()
    assert closed.is_set()
    assert _readers() == 0
    assert len(made) <= 4  # the one read, two queued, one waiting for room


def _write_gz(path: Path, text: bytes) -> Path:
    with gzip.open(path, "wb") as fh:
        fh.write(text)
    return path


def _lines(n: int) -> bytes:
    rows = [f"{i + 1} {i * 7} 0 {i % 50 + 1} 4 -1 -1 4 100 -1 1 1 1 -1 1 -1 -1 -1"
            for i in range(n)]
    return ("; MaxProcs: 64\n" + "\n".join(rows) + "\n").encode()


def test_read_swf_uses_it_and_reads_the_same_table(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Several blocks (small ones): the table equals the one read without prefetching."""
    path = _write_gz(tmp_path / "t.swf.gz", _lines(5000))
    monkeypatch.setattr(swf, "NATIVE_BLOCK_BYTES", 4096)
    calls = []
    real = swf._prefetched

    def spy(blocks: Iterator[bytes], depth: int = swf.PREFETCH_BLOCKS) -> Iterator[bytes]:
        calls.append(depth)
        return real(blocks, depth)

    monkeypatch.setattr(swf, "_prefetched", spy)
    fast = swf.read_swf(path)
    assert calls == [swf.PREFETCH_BLOCKS]
    monkeypatch.setattr(swf, "_prefetched", lambda blocks, depth=0: blocks)
    plain = swf.read_swf(path)
    assert fast.columns.keys() == plain.columns.keys()
    for name in fast.columns:
        assert np.array_equal(fast.columns[name], plain.columns[name]), name
    assert _readers() == 0


def test_a_truncated_file_still_gets_the_reference_readers_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reading thread's error hands the file back to the reference reader."""
    whole = gzip.compress(_lines(3000))
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(whole[: len(whole) // 2])
    errors = []
    real = swf._prefetched

    def spy(blocks: Iterator[bytes], depth: int = swf.PREFETCH_BLOCKS) -> Iterator[bytes]:
        try:
            yield from real(blocks, depth)
        except Exception as exc:
            errors.append(exc)
            raise

    monkeypatch.setattr(swf, "_prefetched", spy)
    with pytest.raises(swf.InputError, match="corrupt or truncated gzip file"):
        swf.read_swf(path)
    assert len(errors) == 1 and isinstance(errors[0], (EOFError, ValueError, zlib.error))
    assert _readers() == 0
