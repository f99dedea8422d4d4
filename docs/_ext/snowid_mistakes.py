"""The common mistakes page: each mistake made in a project (``docshop``, as ``shop``), and
what the system checks or the command then print, word for word.

A mistake is its settings (or its command line); ``mistakes_rst()`` runs the checks (or
the command) under them and writes what they print, so that the page cannot drift from
the messages. tests/project/test_docs_agree.py holds every mistake to its check id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from io import StringIO
from typing import Any

#: The apps of the docs' project (``snowid_generated.setup_django``), without ``removed``.
APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django_snowid",
    "django_snowid.sequences",
    "docshop",
]


@dataclass(frozen=True)
class Mistake:
    """``did`` (reST), made by ``settings`` (and apps ``removed``): check ``id_`` answers."""

    title: str
    did: str
    id_: str
    settings: dict[str, Any] = field(default_factory=dict)
    removed: tuple[str, ...] = ()


@dataclass(frozen=True)
class CommandMistake:
    """``did`` (reST): ``manage.py`` with ``args`` refuses, and says why."""

    title: str
    did: str
    args: tuple[str, ...]
    removed: tuple[str, ...] = ()


REDIS_CACHE = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

MISTAKES = [
    Mistake(
        "The app is not in ``INSTALLED_APPS``",
        "Models use fields of ours, but ``django_snowid`` was not added to ``INSTALLED_APPS``.",
        "django_snowid.E031",
        removed=("django_snowid", "django_snowid.sequences"),
    ),
    Mistake(
        "``startapp``'s ``default_auto_field`` wins over ``DEFAULT_AUTO_FIELD``",
        "``DEFAULT_AUTO_FIELD`` names ``SnowflakeAutoField``, and ``shop/apps.py`` still has "
        "the line ``startapp`` wrote.",
        "django_snowid.W030",
        {"DEFAULT_AUTO_FIELD": "django_snowid.fields.SnowflakeAutoField"},
    ),
    Mistake(
        "A misspelt setting",
        '``SNOWID_WORKER_SOURCE = "static"`` (the setting is ``SNOWID_WORKER_ID_SOURCE``).',
        "django_snowid.W031",
        {"SNOWID_WORKER_SOURCE": "static"},
    ),
    Mistake(
        "Sequence fields without the sequences app",
        "A model uses ``SequenceField``; ``django_snowid.sequences`` is not installed.",
        "django_snowid.E313",
        removed=("django_snowid.sequences",),
    ),
    Mistake(
        "Order numbers in Redis without a django-redis cache",
        '``SNOWID_ORDER_BACKEND`` is ``"redis"`` (the default) and ``CACHES`` has no '
        "django-redis cache under ``SNOWID_REDIS_ALIAS``.",
        "django_snowid.E206",
        {"CACHES": REDIS_CACHE, "SNOWID_ORDER_BACKEND": "redis"},
    ),
    Mistake(
        "A check digit on the default decimal format",
        '``SNOWID_ORDER_PACKING = "decimal"`` and ``SNOWID_ORDER_CHECK_DIGIT = "luhn"``: '
        "12 + 5 + 2 digits leave no room for it.",
        "django_snowid.E202",
        {"SNOWID_ORDER_PACKING": "decimal", "SNOWID_ORDER_CHECK_DIGIT": "luhn"},
    ),
    Mistake(
        "Concealed numbers without a key",
        "``SNOWID_ORDER_CONCEAL = True`` and no ``SNOWID_ORDER_KEY``.",
        "django_snowid.E215",
        {"SNOWID_ORDER_CONCEAL": True},
    ),
    Mistake(
        "An order-number zone with daylight saving",
        '``SNOWID_ORDER_ZONE = "Europe/Paris"``.',
        "django_snowid.E203",
        {"SNOWID_ORDER_ZONE": "Europe/Paris"},
    ),
    Mistake(
        "An epoch without a time zone",
        '``SNOWID_EPOCH = "2024-01-01T00:00:00"``.',
        "django_snowid.E001",
        {"SNOWID_EPOCH": "2024-01-01T00:00:00"},
    ),
    Mistake(
        "A fixed worker id that does not fit the layout",
        '``SNOWID_WORKER_ID_SOURCE = "static"`` and ``SNOWID_WORKER_ID = 5000`` (the '
        "default layout has 10 bits: 0 to 1,023).",
        "django_snowid.E004",
        {"SNOWID_WORKER_ID_SOURCE": "static", "SNOWID_WORKER_ID": 5000},
    ),
    Mistake(
        "Lock files where several hosts run",
        '``SNOWID_WORKER_ID_SOURCE = "slot"``: lock files are unique on one host only.',
        "django_snowid.W010",
        {"SNOWID_WORKER_ID_SOURCE": "slot"},
    ),
    Mistake(
        "The ``env`` source where the server has no variable",
        '``SNOWID_WORKER_ID_SOURCE = "env"``, and ``manage.py check --deploy`` runs where '
        "the variable is not set (``migrate`` runs without it; the server's first id would "
        "refuse).",
        "django_snowid.E050",
        {"SNOWID_WORKER_ID_SOURCE": "env", "SNOWID_WORKER_ID_ENV": "SNOWID_DOCS_UNSET_WORKER"},
    ),
]

COMMAND_MISTAKES = [
    CommandMistake(
        "``snowid_sequences`` without the sequences app",
        "Named sequences are an app of their own.",
        ("snowid_sequences",),
        removed=("django_snowid.sequences",),
    ),
    CommandMistake(
        "Raising a mark without saying by how much",
        "``--raise`` names the sequence, ``--by`` the number of values.",
        ("snowid_sequences", "--raise", "invoices"),
    ),
    CommandMistake(
        "A field where ``snowid_recover`` takes a model",
        "Its labels are apps or models; ``--above`` takes a field.",
        ("snowid_recover", "shop.Order.number"),
    ),
    CommandMistake(
        "A mistyped number with a check digit",
        "``shop.PhoneOrder.number`` has a check digit; one digit of the number was mistyped.",
        ("snowid_decode", "2612030758210001436"),
    ),
    CommandMistake(
        "A check id as Django prints it, with a typo",
        "``snowid_explain`` takes ``E202``, ``e202`` or ``django_snowid.E202``.",
        ("snowid_explain", "E2022"),
    ),
]


def _apps(removed: tuple[str, ...]) -> Any:
    from django.test import override_settings

    return override_settings(INSTALLED_APPS=[app for app in APPS if app not in removed])


def check_messages(mistake: Mistake) -> list[Any]:
    """What ``manage.py check --deploy`` says of ``mistake`` under its check id."""
    from django.core import checks
    from django.test import override_settings

    with _apps(mistake.removed), override_settings(**mistake.settings):
        if mistake.removed:  # the app's own checks need its models: the fields' alone
            from django.apps import apps

            found = [m for model in apps.get_models() for m in model.check()]
        else:
            found = checks.run_checks(include_deployment_checks=True, databases=[])
    return [m for m in found if m.id == mistake.id_]


def command_message(mistake: CommandMistake) -> str:
    """The ``CommandError`` of ``manage.py`` with ``mistake.args``."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with _apps(mistake.removed):
        try:
            call_command(*mistake.args, stdout=StringIO(), stderr=StringIO())
        except CommandError as exc:
            return f"CommandError: {exc}"
    raise AssertionError(f"manage.py {' '.join(mistake.args)} did not refuse")


def _block(text: str) -> list[str]:
    return [".. code-block:: text", "", *(f"   {line}" for line in text.splitlines()), ""]


def mistakes_rst() -> list[str]:
    lines = ["System checks", "-------------", ""]
    for mistake in MISTAKES:
        messages = check_messages(mistake)
        if not messages:
            raise AssertionError(f"{mistake.title}: no {mistake.id_}")
        printed = "\n".join(str(m).replace("\t", "    ") for m in messages)
        lines += [mistake.title, "~" * len(mistake.title), "", mistake.did, ""]
        lines += [*_block(printed), f"Its entry: :ref:`{mistake.id_}`.", ""]
    lines += ["Commands", "--------", ""]
    for command in COMMAND_MISTAKES:
        shell = f"$ python manage.py {' '.join(command.args)}"
        lines += [command.title, "~" * len(command.title), "", command.did, ""]
        lines += _block(f"{shell}\n{command_message(command)}")
    return lines
