"""The engine's event kinds and the packing of an event into one integer key.

Every event the engine handles is a key ``(time, kind rank, payload)`` packed into one
Python int: ``time << (RANK_BITS + payload_bits) | rank << payload_bits | payload``, so
that integer order is the event order: by time, then by kind rank, then by payload
(the job row for job events, a sequence number for the others). The engine keeps one
heap of such keys (completions, cap changes, wake-ups, kinds added later) merged with
the pre-sorted stream of submissions, and hands each event to the handler of its kind.

Built-in kinds, in the order they are handled at one time point:

========  ====  =====================================================================
kind      rank  what happens
========  ====  =====================================================================
complete  0     a running job ends (in job order); superseded ends are skipped
submit    1     a job is submitted (in file order)
cap       2     the power cap changes (index into the cap's steps)
wake      3     a pass a dispatcher asked for (``view.wake_at``)
========  ====  =====================================================================

After the events of a time point, one dispatch pass runs (and another while jobs it
started end at that same time). A new kind takes a free rank (:data:`KINDS`) and a
handler method ``_on_<name>(payload)`` on the engine: the loop itself does not change.
"""

from __future__ import annotations

#: bits of the kind rank in a key
RANK_BITS = 4

COMPLETE = 0
SUBMIT = 1
CAP = 2
WAKE = 3

#: rank -> kind name (the engine's handler of a kind is ``_on_<name>``)
KINDS: dict[int, str] = {COMPLETE: "complete", SUBMIT: "submit", CAP: "cap", WAKE: "wake"}


class KeyCodec:
    """Packs and unpacks event keys for payloads of ``payload_bits`` bits."""

    def __init__(self, payload_bits: int) -> None:
        self.payload_bits = payload_bits
        self.time_shift = payload_bits + RANK_BITS
        self.payload_mask = (1 << payload_bits) - 1
        self.rank_mask = (1 << RANK_BITS) - 1

    def key(self, time: int, rank: int, payload: int) -> int:
        return (time << self.time_shift) | (rank << self.payload_bits) | payload

    def time(self, key: int) -> int:
        return key >> self.time_shift

    def rank(self, key: int) -> int:
        return (key >> self.payload_bits) & self.rank_mask

    def payload(self, key: int) -> int:
        return key & self.payload_mask
