"""Slot leases (lock files on one host) after crashes, suspensions and epoch changes."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time

import pytest
from django.test import override_settings

import django_snowid
from django_snowid.core.layout import PRESETS, layout_from_spec
from django_snowid.exceptions import WorkerIdError, WorkerLeaseLost
from django_snowid.ids import issuer as ids
from django_snowid.workers.lease import release_all
from django_snowid.workers.leased import lease_generator, lease_of
from django_snowid.workers.stores.base import LeaseRequest
from django_snowid.workers.stores.slot import SlotStore
from tests.support import Children, held_slots

CLASSIC = PRESETS["classic"]


@pytest.fixture
def slots(tmp_path):
    directory = tmp_path / "slots"
    with override_settings(SNOWID_WORKER_ID_SOURCE="slot", SNOWID_WORKER_SLOT_DIR=str(directory)):
        yield str(directory)
    ids.reset()
    release_all()


def _issue_to_file(path: str, ready) -> None:
    generator = lease_generator(CLASSIC, 0, "slot")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    ready.set()
    while True:  # until SIGKILL; every batch reaches the file before the next
        os.write(fd, "".join(f"{i}\n" for i in generator.next_ids(50)).encode())


@pytest.mark.slow
def test_killed_slot_holder_restarted_with_its_clock_behind_repeats_no_id(slots, tmp_path):
    issued_path = str(tmp_path / "issued")
    with Children() as children:
        children.kill_when_running(_issue_to_file, issued_path, after_s=1.0)
    with open(issued_path) as file:
        before = {int(line) for line in file if line.strip()}
    assert before
    # The kernel freed the lock file at once; the restart's clock is 3 s behind.
    behind = lambda: time.time_ns() - 3_000_000_000  # noqa: E731
    try:
        generator = lease_generator(CLASSIC, 0, "slot", clock=behind, heartbeat=False)
    except WorkerIdError as exc:  # a refusal of ours is safe, if it names the cause
        assert "ahead of this host's clock" in str(exc)
        return
    assert generator.node == 0
    after: set[int] = set()
    newest = max(before)
    while not after or max(after) <= newest:  # until past the dead holder's last id
        after.update(generator.next_ids(50))
    assert not before & after, f"{len(before & after)} ids issued twice"


def _issue_through_the_registry(stop_at) -> None:
    while time.monotonic() < stop_at.value:
        with contextlib.suppress(WorkerLeaseLost):
            django_snowid.next_id()


@pytest.mark.slow
def test_slot_holder_suspended_past_its_ttl_leaks_no_slot(slots):
    with Children() as children, override_settings(SNOWID_WORKER_LEASE_TTL_S=1.5):
        stop_at = children.context.Value("d", time.monotonic() + 30)
        holder = children.start(_issue_through_the_registry, stop_at)
        deadline = time.monotonic() + 20
        while not (os.path.isdir(slots) and held_slots(slots)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(held_slots(slots)) == 1
        os.kill(holder.pid, signal.SIGSTOP)
        time.sleep(2.0)  # past the time-to-live: the lease is lost when it wakes
        os.kill(holder.pid, signal.SIGCONT)
        time.sleep(1.0)
        held = held_slots(slots)
        stop_at.value = 0
        holder.join(20)
    assert len(held) == 1, f"slots held by one process: {held}"


def test_two_projects_with_different_epochs_share_a_slot_directory(slots):
    first = layout_from_spec("classic", epoch="2020-01-01T00:00:00Z", name="default")
    second = layout_from_spec("classic", epoch="2025-01-01T00:00:00Z", name="default")
    issued = lease_generator(first, 0, "slot", heartbeat=False).next_ids(10)
    release_all()  # the first project records where it stopped, and exits
    generator = lease_generator(second, 0, "slot", heartbeat=False)
    assert generator.node == 0  # the same lock file
    later = second.decode(generator.next_id()).time
    assert later >= first.decode(max(issued)).time


def test_the_default_slot_directory_is_one_per_project(settings):
    from django_snowid.conf import conf

    del settings.SNOWID_WORKER_SLOT_DIR
    mine = conf.WORKER_SLOT_DIR
    settings.SETTINGS_MODULE = "another_project.settings"
    assert mine != conf.WORKER_SLOT_DIR
    assert os.path.dirname(mine) == os.path.dirname(conf.WORKER_SLOT_DIR)


def test_a_generator_whose_lease_was_released_issues_nothing_more(slots, clock):
    """A release records the last tick used; a thread still holding the generator must
    not issue past it (the next holder starts right after that tick)."""
    generator = lease_generator(CLASSIC, 0, "slot", clock=clock, sleep=clock.sleep, heartbeat=False)
    issued = generator.next_id()
    lease_of(generator).release()  # type: ignore[union-attr]
    clock.advance_ms(1)
    with pytest.raises(WorkerLeaseLost, match="was released"):
        generator.next_id()
    successor = lease_generator(CLASSIC, 0, "slot", clock=clock, sleep=clock.sleep, heartbeat=False)
    assert successor.node == 0 and successor.next_id() > issued


def test_a_removed_slot_directory_ends_its_holders_leases(slots, clock):
    """Removing the directory lets a newcomer lock a new file of the same worker id: the
    holder notices at its next horizon write and issues nothing more under it."""
    generator = lease_generator(CLASSIC, 0, "slot", clock=clock, sleep=clock.sleep, heartbeat=False)
    issued = generator.next_id()
    shutil.rmtree(slots)
    holder = lease_of(generator)
    assert holder is not None
    request = LeaseRequest(holder.pool.name, 1, "newcomer", "token", 0, first=holder.worker)
    assert SlotStore(slots).acquire(request).worker == holder.worker  # a new file, same id
    clock.advance_ms(1_000)  # past the horizon the holder recorded
    with pytest.raises(WorkerLeaseLost):
        generator.next_id()
    assert issued
