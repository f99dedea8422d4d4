"""What the time-travel tests share (``ids/test_time_travel.py`` with pytest-django,
``ids/test_time_travel_testcase.py`` with Django's ``TestCase``): the moments, each tool
in its own words, and what a row made while the clock was moved must show."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import time_machine
from freezegun import freeze_time

from django_snowid import decode

PAST = datetime(2021, 3, 14, 15, 9, 26, 535_000, tzinfo=timezone.utc)
FUTURE = datetime(2031, 7, 1, 8, 30, 0, 250_000, tzinfo=timezone.utc)
TOOLS = ("freezegun", "time-machine")
#: How far a clock that ticks (time-machine's default) may have moved past its
#: destination by the time a row is made, on a loaded machine.
TICKED = timedelta(seconds=60)
#: How many rows the tests make in one frozen millisecond with ``bulk_create``, and one
#: ``create()`` at a time (fewer: each is an INSERT): both more than the 4,096 ids a
#: millisecond of the classic layout holds.
MANY = 10_000
MANY_CREATES = 4_200
_minutes = itertools.count(1)


def unused(moment: datetime) -> datetime:
    """``moment`` moved by whole minutes to one no other test of this process used: a
    millisecond's ids are shared by every test that stops the clock there (once they are
    used up, ids carry the next milliseconds)."""
    return moment + timedelta(minutes=next(_minutes))


@contextlib.contextmanager
def travel(tool: str, moment: datetime, *, tick: bool | None = None) -> Iterator[None]:
    """Move the clock to ``moment`` with ``tool``, in its default configuration unless
    ``tick`` is given (freezegun stands still by default, time-machine ticks)."""
    options = {} if tick is None else {"tick": tick}
    if tool == "freezegun":
        with freeze_time(moment, **options):
            yield
    else:
        with time_machine.travel(moment, **options):
            yield


def stands_still(tool: str, tick: bool | None) -> bool:
    return tick is False or (tick is None and tool == "freezegun")


def created(pk: int) -> datetime:
    return decode(pk).time


def problems_of_later_row(pk: int, before: datetime) -> list[str]:
    """What is wrong with an id made after the clock came back, between ``before`` (read
    outside the block) and now."""
    after = datetime.now(timezone.utc)
    if before - timedelta(milliseconds=1) <= created(pk) <= after:
        return []
    return [f"the id made after the block decodes to {created(pk)}, not {before} .. {after}"]


def problems_of_moved_rows(
    pks: list[int], moment: datetime, *, still: bool, borrowed_ms: int = 0
) -> list[str]:
    """What is wrong with ids made while the clock stood at (or ticked from) ``moment``:
    each must decode to that moment (or to the ``borrowed_ms`` after it), and none repeat."""
    wrong = []
    if len(set(pks)) != len(pks):
        wrong.append(f"{len(pks) - len(set(pks))} repeated ids")
    latest = moment + (timedelta(milliseconds=borrowed_ms) if still else TICKED)
    outside = [created(pk) for pk in pks if not moment <= created(pk) <= latest]
    if outside:
        wrong.append(f"{len(outside)} ids outside {moment} .. {latest}, e.g. {outside[0]}")
    return wrong
