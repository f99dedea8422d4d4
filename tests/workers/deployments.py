"""Processes of a deployment, for the lease tests: started together, each issuing ids."""

from __future__ import annotations

import django_snowid
from tests.support import Children


def eight_processes(target, arguments: list[object]) -> list[int]:
    """Start eight processes ``target(argument, barrier, results)``; every id they issued."""
    with Children() as children:
        barrier = children.context.Barrier(8)
        for argument in arguments:
            children.start(target, argument, barrier, children.queue)
        return [i for ids in children.results() for i in ids]


def deployed_process(layout: dict[str, object], barrier, results) -> None:
    from django.test import override_settings

    with override_settings(**layout):
        django_snowid.next_id()  # every process holds its worker id before any issues more
        barrier.wait(30)
        results.put(django_snowid.next_ids(25_000))
