"""Seeded mutation fuzzing of every reader of user files.

Each reader gets a small valid input, mutated a few hundred times (byte flips, random
bytes, deleted / duplicated spans, truncation, numbers replaced by huge integers,
``inf``, ``nan``, negatives, 5,000 digits), then read in this process under a time
limit. The reader must either succeed or raise :class:`~dispatchlab.core.errors.InputError`
(the one ``error:`` line of the command line): any other exception is a traceback
for the user, and running past the limit is a hang. Trace readers with a lenient mode
also read every mutant leniently, and then no record may vanish silently: every
reader's ``lines_read`` (the data records seen, see
:class:`~dispatchlab.workload.jobs.TraceInfo`) is ``jobs + malformed_skipped +
sum(skipped)``, and for the SWF-like files it is also their job lines counted here.

``DISPATCHLAB_FUZZ=5000`` runs 5,000 mutations per reader (default
:data:`DEFAULT_MUTATIONS`); a failure names the reader and the mutation's index, which
with the seed (``reader-index``) reproduces it.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from dispatchlab.core.errors import InputError
from test_bad_inputs import CAMPAIGN, POWER_CSV, TRACE, _model, _platform, _power_parquet
from test_pbs import PRO_LOG, TORQUE_LOG
from test_sacct import EXPORT_2302

pytestmark = pytest.mark.slow

#: mutations per reader unless DISPATCHLAB_FUZZ says otherwise
DEFAULT_MUTATIONS = 300
#: seconds one read may take (the inputs are a few kB: any read is milliseconds)
TIME_LIMIT = 5.0

#: what a number in the input may become
NUMBERS = [b"9" * 25, b"99999999999999999999", b"-1", b"0", b"-0", b"inf", b"-inf", b"nan",
           b"NaN", b"1e308", b"1e-308", b"4611686018427387904", b"9223372036854775808",
           b"-9223372036854775809", b"9" * 5000, b"1.5", b"007", b"1_000", b"0x10"]
_NUMBER = re.compile(rb"-?\d+(?:\.\d+)?")

ALEA_MACHINES = "0\tzewura\t20\t80\t1\t529426432\n1\tzegox\t48\t12\t1\t94035968\n"
ALEA_TRACE = "".join(
    f"{k} {1356996147 + 60 * k} 0 {500 + k} {4 * (1 + k % 3)} 1 1024 {4 * (1 + k % 3)} 86400 "
    f"68719476736 1 {60 + k % 4} 1 1 -1 1 1 1 "
    f"{{{','.join(['1241'] * 4 * (1 + k % 3))}}} q_1d "
    f"1:ppn={4 * (1 + k % 3)}:x86_64{':cl_zewura' if k % 2 else ''}\n"
    for k in range(8))
CAP = "# time;watts\n0;4000\n3600;3000\n\n7200;5000\n"
PLATFORM = (_platform(4, 16) + '\n[[node_type]]\nname = "gpu"\ncount = 2\n'
            "capacity = { core = 8, gpu = 4, mem = 384000 }\nmax_power = 2100.0\n"
            "[queues]\ndebug = 3600\n")


class _Hang(BaseException):
    """Raised by the timer: a read ran past :data:`TIME_LIMIT` (a BaseException, so no
    reader's ``except Exception`` swallows it)."""


def _alarm(signum, frame):
    raise _Hang


def mutate(data: bytes, rng: random.Random) -> bytes:
    """``data`` with 1 to 3 random mutations."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        n = len(out)
        if n == 0:
            out += rng.choice(NUMBERS)
            continue
        i = rng.randrange(n)
        if op == 0:  # flip one bit
            out[i] ^= 1 << rng.randrange(8)
        elif op == 1:  # any byte
            out[i] = rng.randrange(256)
        elif op == 2:  # delete a span
            del out[i:i + rng.randint(1, 16)]
        elif op == 3:  # duplicate a span somewhere
            span = out[i:i + rng.randint(1, 64)]
            j = rng.randrange(len(out) + 1)
            out[j:j] = span
        elif op == 4:  # truncate
            del out[i:]
        else:  # a number becomes a special one
            spans = [m.span() for m in _NUMBER.finditer(bytes(out))]
            if spans:
                a, b = rng.choice(spans)
                out[a:b] = rng.choice(NUMBERS)
    return bytes(out)


def _data_lines(path: Path) -> int:
    """The job lines of an SWF-like file, counted apart from the reader: lines that
    are neither blank nor ``;`` comments."""
    lines = (ln.strip() for ln in path.read_bytes().split(b"\n"))
    return sum(1 for ln in lines if ln and not ln.startswith(b";"))


def _trace_check(table) -> None:
    """No silent loss, the same identity for every reader: each record read
    (``lines_read``) is a job or a counted skip."""
    info = table.info
    counted = len(table) + info.malformed_skipped + sum(info.skipped.values())
    assert info.lines_read == counted, (
        f"{info.lines_read} records read != jobs {len(table)} + malformed "
        f"{info.malformed_skipped} + skipped {dict(info.skipped)}")


def _trace_reader(read: Callable[..., object], swf_like: bool = False
                  ) -> Callable[[Path], None]:
    """Read strictly, then leniently with the loss check (``swf_like``: the reader's
    ``lines_read`` must also be the file's job lines, counted here)."""
    def run(path: Path) -> None:
        with contextlib.suppress(InputError):
            read(path, lenient=False)
        try:
            table = read(path, lenient=True)
        except InputError:
            return
        _trace_check(table)
        if swf_like:
            assert table.info.lines_read == _data_lines(path), (
                f"lines_read {table.info.lines_read} != {_data_lines(path)} job lines")
    return run


def _readers(folder: Path) -> dict[str, tuple[str, bytes, Callable[[Path], None]]]:
    """reader -> (file name, valid content, read function)."""
    from dispatchlab.experiment.campaign.config import load_campaign
    from dispatchlab.platform.alea import read_alea_machines
    from dispatchlab.platform.files import load_platform_file
    from dispatchlab.power.cap import PowerCap
    from dispatchlab.power.data import read_power_table
    from dispatchlab.rank.model import load_model
    from dispatchlab.workload.alea import read_alea
    from dispatchlab.workload.pbs import read_pbs
    from dispatchlab.workload.sacct import read_sacct
    from dispatchlab.workload.swf import read_swf

    machines = folder / "fixed.machines"
    machines.write_text(ALEA_MACHINES)
    (folder / "alea.swf.machines").write_text(ALEA_MACHINES)
    return {
        "swf": ("t.swf", TRACE.encode(), _trace_reader(read_swf, swf_like=True)),
        "sacct": ("j.sacct", ("\n".join(EXPORT_2302) + "\n").encode(),
                  _trace_reader(read_sacct)),
        "pbs": ("20240115", ("\n".join(TORQUE_LOG + PRO_LOG) + "\n").encode(),
                _trace_reader(read_pbs)),
        "alea-trace": ("alea.swf", ALEA_TRACE.encode(), _trace_reader(
            lambda p, lenient: read_alea(p, lenient=lenient, machines=machines),
            swf_like=True)),
        "alea-machines": ("m.machines", ALEA_MACHINES.encode(), read_alea_machines),
        "platform-toml": ("p.toml", PLATFORM.encode(), load_platform_file),
        "power-csv": ("p.csv", POWER_CSV.encode(), read_power_table),
        "power-parquet": ("p.parquet", _power_parquet(), read_power_table),
        "cap-schedule": ("cap.txt", CAP.encode(), PowerCap.from_file),
        "campaign-toml": ("c.toml", CAMPAIGN.replace(
            "seeds = [1]", "seeds = [1, 2]\nrepetitions = 2").encode(), load_campaign),
        "l2r-model": ("m.json", _model("0.5").encode(), load_model),
    }


READERS = ["swf", "sacct", "pbs", "alea-trace", "alea-machines", "platform-toml",
           "power-csv", "power-parquet", "cap-schedule", "campaign-toml", "l2r-model"]


@pytest.mark.parametrize("reader", READERS)
def test_mutated_inputs_end_in_a_result_or_one_error(tmp_path: Path, reader: str) -> None:
    count = int(os.environ.get("DISPATCHLAB_FUZZ", DEFAULT_MUTATIONS))
    name, valid, read = _readers(tmp_path)[reader]
    path = tmp_path / name
    path.write_bytes(valid)
    read(path)  # the valid input reads
    failures: list[str] = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for k in range(count):
            data = mutate(valid, random.Random(f"{reader}-{k}"))
            path.write_bytes(data)
            signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT)
            try:
                read(path)
            except InputError as exc:
                if "\n" in str(exc):
                    failures.append(f"mutation {k}: a multi-line error: {str(exc)[:300]!r}")
            except _Hang:
                failures.append(f"mutation {k}: no result after {TIME_LIMIT} s (a hang); "
                                f"input {data[:200]!r}")
            except Exception as exc:  # a traceback for the user, or a lost record
                where = traceback.extract_tb(exc.__traceback__)[-1]
                failures.append(f"mutation {k}: {type(exc).__name__}: {str(exc)[:200]} (at "
                                f"{Path(where.filename).name}:{where.lineno}); input "
                                f"{data[:200]!r}")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert not failures, f"{reader}: {len(failures)} of {count} mutations failed:\n" + \
        "\n".join(failures[:15])
