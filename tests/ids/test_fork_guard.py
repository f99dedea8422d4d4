"""A forked child must not silently share its parent's worker id."""

from __future__ import annotations

import os

import pytest
from django.test import override_settings

from django_snowid.exceptions import SnowidError, StaticWorkerIdAfterFork, WorkerIdError
from django_snowid.ids import issuer as ids
from tests.support import in_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def test_static_worker_id_refused_in_a_forked_child():
    parent_id = ids.get_generator().next_id()
    result = in_child(lambda: ids.get_generator().next_id())
    assert result.startswith("StaticWorkerIdAfterFork:"), result
    assert "gunicorn --preload" in result and "SNOWID_WORKER_ID_SOURCE" in result
    assert ids.get_generator().next_id() > parent_id  # the parent carries on


def test_static_worker_id_refused_even_if_the_parent_issued_nothing():
    ids.reset()
    result = in_child(lambda: ids.get_generator().next_id())
    assert result.startswith("StaticWorkerIdAfterFork:"), result


def test_env_worker_id_set_after_the_fork_is_accepted(monkeypatch):
    monkeypatch.setenv("SNOWID_TEST_WORKER", "7")
    with override_settings(
        SNOWID_WORKER_ID_SOURCE="env", SNOWID_WORKER_ID_ENV="SNOWID_TEST_WORKER"
    ):
        ids.get_generator().next_id()  # the parent claims worker 7

        def child_with_same_id() -> int:
            return ids.get_generator().next_id()

        def child_with_own_id() -> int:
            os.environ["SNOWID_TEST_WORKER"] = "8"  # e.g. gunicorn's post_fork hook
            return ids.get_layout().decode(ids.get_generator().next_id()).node

        assert in_child(child_with_same_id).startswith("StaticWorkerIdAfterFork:")
        assert in_child(child_with_own_id) == "ok:8"


def test_env_value_inherited_from_a_master_that_issued_nothing_is_refused(monkeypatch):
    # gunicorn --preload: the master loaded the app, issued nothing, and forks workers
    # that all inherit its SNOWID_WORKER_ID.
    monkeypatch.setenv("SNOWID_TEST_WORKER", "7")
    with override_settings(
        SNOWID_WORKER_ID_SOURCE="env", SNOWID_WORKER_ID_ENV="SNOWID_TEST_WORKER"
    ):
        ids.reset()
        children = [in_child(lambda: ids.get_generator().next_id()) for _ in range(4)]
    assert all(r.startswith("StaticWorkerIdAfterFork:") for r in children), children
    assert "inherited unchanged" in children[0]


@pytest.mark.django_db
def test_migrate_runs_with_env_source_and_no_variable(monkeypatch):
    from django.core.management import call_command

    monkeypatch.delenv("SNOWID_TEST_UNSET_VAR", raising=False)
    with override_settings(
        SNOWID_WORKER_ID_SOURCE="env", SNOWID_WORKER_ID_ENV="SNOWID_TEST_UNSET_VAR"
    ):
        ids.reset()
        call_command("migrate", skip_checks=False, verbosity=0)  # issues no id
        with pytest.raises(WorkerIdError, match="SNOWID_TEST_UNSET_VAR is not set"):
            ids.get_generator().next_id()


def test_the_exception_is_ours():
    def provoke() -> str:
        try:
            ids.get_generator().next_id()
        except StaticWorkerIdAfterFork as exc:
            return ",".join(
                cls.__name__
                for cls in (StaticWorkerIdAfterFork, WorkerIdError, SnowidError)
                if isinstance(exc, cls)
            )
        return "issued"

    ids.reset()
    assert in_child(provoke) == "ok:StaticWorkerIdAfterFork,WorkerIdError,SnowidError"
