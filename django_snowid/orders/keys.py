"""A concealed stream's key window in this process (``core.order_keys``), and the refusal
when the stream conceals a second with another key."""

from __future__ import annotations

import time

from ..core.layout import iso_utc
from ..core.order_format import OrderNumberFormat
from ..core.order_keys import KeyConflict, KeyWindow
from ..exceptions import OrderKeyConflict

__all__ = ["StreamKeys"]

ROTATION_DOCS = "docs: Order numbers, Key rotation"


class StreamKeys:
    """The key window of one stream in this process (None: plain numbers)."""

    def __init__(self, stream: str, fmt: OrderNumberFormat) -> None:
        self.stream = stream
        self.format = fmt
        now = time.time()
        self.window: KeyWindow | None = fmt.key_window(int(now) + fmt.utc_offset_at(now))

    def renew(self, second: int) -> None:
        """The window of ``second``, where the store is to issue."""
        self.window = self.format.key_window(second)

    def refusal(self, conflict: KeyConflict) -> OrderKeyConflict:
        """Our error for ``conflict``: what the stream records, and the fix."""
        keys, window = self.format.keys, self.window
        assert keys is not None and window is not None  # a concealing format's
        ids = [keys.key_id(index) for index in range(len(keys))]
        mine, theirs = ids.index(window.key_id), conflict.key_id
        head = (
            f"Stream {self.stream!r} conceals the numbers of {self._when(conflict.second)} "
            f"with key {theirs}, and this process's SNOWID_ORDER_KEY with key {window.key_id}"
        )
        if theirs not in ids:
            fix = (
                f"; this schedule does not hold key {theirs}: processes with another "
                "schedule issue into the stream (an old deploy still running after a new "
                "key took over). Give every process one schedule"
            )
        elif ids.index(theirs) < mine:
            fix = (
                f", which this schedule starts at {self._when(window.start)}; the stream "
                f"already issued numbers up to {self._when(conflict.last_second)} with the "
                "key before it, so it cannot take over: a new key must become valid after "
                "every process runs with its entry. Set its valid_from after the end of "
                "the deploy, later than that"
            )
        else:
            fix = (
                f"; other processes start key {theirs} earlier than this schedule does "
                f"({self._when(window.end)}). Give every process one schedule"
            )
        return OrderKeyConflict(f"{head}{fix} ({ROTATION_DOCS}). Nothing was issued.")

    def _when(self, local_second: int) -> str:
        return iso_utc(self.format.time_of_local_second(local_second), milliseconds=False)
