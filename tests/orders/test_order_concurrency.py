"""8 processes x 4 threads saving orders at once."""

from __future__ import annotations

import multiprocessing
import threading

import pytest
from django.db import connections
from django.db.models import Max

from django_snowid.orders.stores import get_store
from tests.testapp.models import ShopOrder

PROCESSES, THREADS, PER_THREAD = 8, 4, 40


def _save_orders(process: int) -> list[list[int]]:
    results: list[list[int]] = [[] for _ in range(THREADS)]
    errors: list[str] = []
    barrier = threading.Barrier(THREADS)

    def run(thread: int) -> None:
        barrier.wait()
        try:
            for i in range(PER_THREAD):
                order = ShopOrder.objects.create(user_id=process * 1000 + thread * 100 + i)
                results[thread].append(order.number)
        except Exception as exc:  # reported to the parent, which fails the test
            errors.append(f"process {process} thread {thread}: {exc!r}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("; ".join(errors))
    return results


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_processes_and_threads_save_orders_without_duplicates(backend):
    connections.close_all()  # children must not share the parent's socket
    context = multiprocessing.get_context("fork")
    # The fixture changed the settings before the fork: override_settings is not thread-safe.
    with context.Pool(PROCESSES) as pool:
        per_process = pool.map(_save_orders, range(PROCESSES))
    numbers = [n for threads in per_process for ns in threads for n in ns]
    assert len(numbers) == PROCESSES * THREADS * PER_THREAD
    assert len(set(numbers)) == len(numbers), "duplicate order numbers"
    field = ShopOrder._meta.get_field("number")
    for threads in per_process:
        for ns in threads:
            positions = [field.format.position(n) for n in ns]
            assert positions == sorted(positions), f"a thread's numbers went down: {positions}"
    assert ShopOrder.objects.count() == len(numbers)
    largest = ShopOrder.objects.aggregate(m=Max("number"))["m"]
    assert largest == max(numbers)
    # Past the largest number: numbers left in the processes' blocks are gaps.
    assert get_store().read(field.stream) >= field.format.position(largest)


@pytest.mark.django_db(transaction=True)
def test_database_store_under_threads():
    """8 threads reserving from one stream of the database store, on every backend."""
    from django_snowid.core.order_stream import Reserved
    from django_snowid.models import OrderStreamState
    from django_snowid.orders.stores import DatabaseOrderStore, ReserveArgs

    store = DatabaseOrderStore()
    OrderStreamState.objects.create(name="threads", second=0, sequence=0)
    results: list[list[tuple[int, int]]] = [[] for _ in range(8)]
    errors: list[str] = []

    def run(index: int) -> None:
        try:
            for _ in range(100):
                outcome = store.reserve(
                    "threads",
                    ReserveArgs(offset=0, cap=16_383, wanted=2, first_sequence=1, max_lead=5),
                )
                assert isinstance(outcome, Reserved)
                results[index].extend(
                    (outcome.local_second, outcome.first_sequence + i) for i in range(outcome.count)
                )
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    everything = [p for r in results for p in r]
    assert len(everything) == 8 * 100 * 2 and len(set(everything)) == len(everything)
    assert all(r == sorted(r) for r in results)
    assert store.read("threads") == max(everything)
