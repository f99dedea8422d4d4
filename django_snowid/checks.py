"""What the system checks share, and the Redis client checks (E500, E501).

Every id is in :data:`CHECK_IDS`; every hint ends with the command that prints its entry.
``AppConfig.ready()`` registers each feature's ``CHECKS`` (:func:`register`).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, Warning
from django.core.checks import register as register_check

from .conf import conf
from .core.layout import Layout, parse_epoch
from .exceptions import LayoutError, RedisClientError, RedisUnavailable
from .settings_layouts import build_layout, layout_names
from .stores.redis_client import describe, factory

__all__ = [
    "CHECKS",
    "CHECK_IDS",
    "DEPLOY",
    "EXPLAIN_COMMAND",
    "HINT",
    "Check",
    "Checklist",
    "check_pointer",
    "checklist",
    "configured_layouts",
    "error",
    "is_number",
    "project_app",
    "redis_cache_problem",
    "register",
    "warning",
]

#: A check function and its tag.
Check = tuple[Callable[..., list[CheckMessage]], str]
F = TypeVar("F", bound=Callable[..., list[CheckMessage]])


class Checklist(list[Check]):
    """A feature's checks with their tags; ``AppConfig.ready()`` registers them."""

    def register(self, tag: str) -> Callable[[F], F]:
        """``@CHECKS.register(Tags.compatibility)`` above a check function lists it."""

        def add(check: F) -> F:
            self.append((check, tag))
            return check

        return add


def checklist() -> Checklist:
    return Checklist()


#: Every check id of the app and what it means (reST); the docs' checks page is made from it.
CHECK_IDS: dict[str, str] = {
    # ------------------------------------------------------ ids and layouts
    "django_snowid.E001": "``SNOWID_EPOCH`` is not an aware date-time (naive, or not ISO 8601). "
    "Said once: the layouts that use it get no E003, their fields no E101.",
    "django_snowid.E002": "The epoch is in the future: every id would need a negative time part.",
    "django_snowid.E003": "``SNOWID_LAYOUT`` or an entry of ``SNOWID_LAYOUTS`` is invalid: unknown "
    "preset or key, missing keys, more than 63 bits, time bits reaching past year 9999, "
    "``spread_bits`` outside ``0..sequence_bits``.",
    "django_snowid.E004": "The worker id does not fit a layout (out of range, or named parts that "
    "do not match); with a lease source, a fixed part out of range.",
    "django_snowid.E005": "A layout's time bits are already exhausted: no id can be issued.",
    "django_snowid.W001": "A layout's time bits run out within ten years.",
    "django_snowid.E006": '``SNOWID_WORKER_ID_SOURCE`` is unknown, or (``"env"``) its environment '
    "variable is set but not a worker id. An unset variable passes these checks (``migrate`` "
    "runs without it): ``check --deploy`` reports it (E050).",
    "django_snowid.E050": '``SNOWID_WORKER_ID_SOURCE = "env"`` and its environment variable '
    "(``SNOWID_WORKER_ID_ENV``) is not set where ``check --deploy`` runs: the server's first "
    "id would refuse. A deploy check: run ``manage.py check --deploy`` in the environment "
    "the server runs in (its process manager's), where the variable must be set.",
    "django_snowid.E007": "``SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS`` is not a number >= 0.",
    "django_snowid.E101": "A field's ``layout=`` names no configured layout (a configured but "
    "invalid one is E003's).",
    "django_snowid.W030": "``DEFAULT_AUTO_FIELD`` names ``SnowflakeAutoField``, but an app of the "
    "project sets its own ``default_auto_field`` in its ``AppConfig`` (``startapp`` writes "
    '``"django.db.models.BigAutoField"``), so its models get no Snowflake key and the admin '
    "mixin has nothing to decode. Names each such app and its models; remove the line from its "
    "``apps.py``. Django's own apps and installed distributions are not reported.",
    "django_snowid.E031": "A model uses a field of django-snowid (``DEFAULT_AUTO_FIELD`` names "
    "``SnowflakeAutoField``, say) but ``django_snowid`` is not in ``INSTALLED_APPS``: its tables "
    "are never created and its settings never checked. A field check, said once.",
    "django_snowid.W031": "A ``SNOWID_*`` name in the settings is no setting of django-snowid (a "
    "misspelling, say ``SNOWID_WORKER_SOURCE``): it is ignored. Names the closest real setting.",
    "django_snowid.E400": "``SnowflakeAutoField(shard_from=...)`` or "
    "``SnowflakeField(shard_from=...)`` uses a layout without shard bits.",
    "django_snowid.E401": "``SNOWID_PUBLIC_ID_ALPHABET`` or ``SNOWID_PUBLIC_ID_MIN_LENGTH`` is "
    "invalid (fewer than 3 characters, a repeated or multibyte character, a length outside "
    "0..255).",
    "django_snowid.E402": "``SNOWID_PUBLIC_ID_ALPHABET`` is set but ``sqids`` is not installed.",
    "django_snowid.W400": "``SNOWID_PUBLIC_ID_ALPHABET`` is sqids' default alphabet or the "
    "example of this documentation, which anyone can decode with. "
    "``django_snowid.ids.publicids.new_alphabet()`` makes one of your own.",
    # ------------------------------------------------------------ worker ids
    "django_snowid.E010": "``SNOWID_WORKER_LEASE_TTL_S`` is not a number > 0 (0 would make the "
    "heartbeat spin and the lease fence at once).",
    "django_snowid.E011": "``SNOWID_WORKER_POOL_SIZE`` is neither ``None`` nor an integer >= 1.",
    "django_snowid.E012": "``SNOWID_WORKER_RESUME_MAX_WAIT_MS`` is not a number >= 0.",
    "django_snowid.E013": "``SNOWID_WORKER_SLOT_DIR`` is neither ``None`` nor a path.",
    "django_snowid.E014": "``SNOWID_WORKER_ID_ENV`` is not the name of an environment variable.",
    "django_snowid.E015": "``SNOWID_WORKER_ID`` is neither an integer >= 0 nor a dict of part "
    "names to integers >= 0.",
    "django_snowid.E016": 'Worker-id leases use Redis (``SNOWID_WORKER_ID_SOURCE = "redis"``) but '
    "``CACHES[SNOWID_REDIS_ALIAS]`` is missing or not a django-redis cache (and no "
    "``SNOWID_REDIS_CLIENT_FACTORY`` makes the client).",
    "django_snowid.E017": 'The worker-id lease table (``SNOWID_WORKER_ID_SOURCE = "database"``) is '
    "missing from its database: the code runs before ``manage.py migrate``, or the table was "
    "dropped. Processes refuse to issue ids until it exists (a database check: ``check "
    "--database``; ``migrate`` creates the table and does not report it).",
    "django_snowid.W010": '``SNOWID_WORKER_ID_SOURCE = "slot"`` and nothing tells hosts apart (a '
    "layout leases its whole node, or ``SNOWID_WORKER_ID`` is not set): every host starts at "
    "worker 0. On one host, silence it (``SILENCED_SYSTEM_CHECKS``).",
    # --------------------------------------------------------- order numbers
    "django_snowid.E201": "``shard_from=...`` (of ``OrderNumberField``, ``SnowflakeAutoField`` or "
    "``SnowflakeField``) names no field or attribute of the model.",
    "django_snowid.W201": "``shard_from=...`` names values whose low bits are known to be uneven, "
    "so most rows would share a few shards: ids (or a foreign key to ids) of a layout whose "
    "``spread_bits`` are fewer than the shard needs (its shard bits; for decimal packing, as "
    "many bits as shard digits), or a field whose own shard part is always 0 (no "
    "``shard_from`` of its own). Give that layout ``spread_bits`` (the default, 4).",
    "django_snowid.E202": "An order-number format is invalid: bits beyond 63, digits beyond 19, a "
    "decimal packing that overflows 64 bits before the end of 2090, an unknown zone. A check "
    "digit takes one of the 19 digits, and the default decimal format (12 + 5 + 2) has none to "
    "spare: give up a sequence digit (``sequence_digits=4``, 9,999 numbers a second) or a shard "
    "digit (``shard_digits=1``, 10 shards); the formats that fit are listed in "
    ":doc:`/orders` (Check digits).",
    "django_snowid.E203": "The order-number zone has daylight saving and "
    "``SNOWID_ORDER_ALLOW_DST`` is not set.",
    "django_snowid.E204": "Fields sharing one stream use different formats.",
    "django_snowid.E205": '``SNOWID_ORDER_BACKEND`` is neither ``"redis"`` nor ``"database"``.',
    "django_snowid.E206": "Order numbers use Redis but ``CACHES[SNOWID_REDIS_ALIAS]`` is missing "
    "or not a django-redis cache (and no ``SNOWID_REDIS_CLIENT_FACTORY`` makes the client).",
    "django_snowid.E207": "``SNOWID_ORDER_RANDOM_START`` is not an integer >= 0, or leaves no "
    "sequence of a second.",
    "django_snowid.E208": '``SNOWID_ORDER_WHEN_FULL`` is neither ``"wait"`` nor ``"raise"``.',
    "django_snowid.E210": "``SNOWID_ORDER_ALLOW_DST`` is not ``True`` or ``False``.",
    "django_snowid.E211": "``SNOWID_ORDER_MAX_WAIT_MS`` is not a number of milliseconds from 0 to "
    '60000 (``"2s"`` is refused).',
    "django_snowid.E212": "``SNOWID_ORDER_MAX_BACKWARDS_S`` is not an integer from 1 to 3600 (a "
    "recovered stream resumes one second ahead).",
    "django_snowid.E213": "``SNOWID_ORDER_INSERT_RETRIES`` is not an integer from 0 to 100.",
    "django_snowid.E214": "The ``SNOWID_ORDER_PACKING``/``SEQUENCE_BITS``/``SHARD_BITS``/"
    "``SEQUENCE_DIGITS``/``SHARD_DIGITS``/``ZONE`` settings make no valid format (each field "
    "that uses them also reports E202).",
    "django_snowid.E215": "``SNOWID_ORDER_KEY`` is missing while a field conceals its "
    "sequences, or is no key of at least 32 characters, or no list of ``(valid_from, key)`` "
    "pairs with increasing ``valid_from`` (the message never shows a key).",
    "django_snowid.E219": "``SNOWID_ORDER_BLOCK_MAX`` is not an integer from 1 to 1000000.",
    "django_snowid.E230": "A concealed stream's store records another key for the current "
    "second than this process's ``SNOWID_ORDER_KEY`` schedule, and this process would be "
    "refused (``OrderKeyConflict``): processes with another schedule issue into the stream, "
    "or a new key's ``valid_from`` is not after the numbers already issued. The message "
    "names both keys (by key id, never the key) and the fix; see :ref:`key-rotation`. A "
    "deploy check (``check --deploy``: it reads the store).",
    "django_snowid.W230": "A key of ``SNOWID_ORDER_KEY`` becomes valid less than an hour "
    "after this process starts: every process must run with its entry before its "
    "``valid_from``, or some are refused. Give it a ``valid_from`` after the end of the "
    "deploy (see :ref:`key-rotation`).",
    "django_snowid.W231": "A concealed stream's store records a key that other processes "
    "announced to take over at a second this process's ``SNOWID_ORDER_KEY`` schedule does "
    "not: from that second on this process is refused. Deploy their schedule here too (see "
    ":ref:`key-rotation`). A deploy check.",
    "django_snowid.E220": "Order numbers keep their streams in the database "
    '(``SNOWID_ORDER_BACKEND = "database"``) but its table is missing: the code runs before '
    "``manage.py migrate``, or the table was dropped. No order number is issued until it "
    "exists (a database check: ``check --database``; ``migrate`` creates the table and does "
    "not report it).",
    # ------------------------------------------------------- named sequences
    "django_snowid.E300": '``SNOWID_SEQUENCE_BACKEND`` is neither ``"database"`` nor ``"redis"``.',
    "django_snowid.E301": '``SNOWID_SEQUENCES_UNKNOWN`` is neither ``"create"`` nor ``"refuse"``.',
    "django_snowid.E302": "``SNOWID_SEQUENCES`` is not a dict, or a declaration is invalid: an "
    "illegal name, an unknown key or kind, a zone that is not IANA, ``start`` < 0, step bounds "
    "not integers >= 1 or ``max_step < min_step``.",
    "django_snowid.E303": "``SNOWID_SEQUENCE_MIN_STEP``/``MAX_STEP`` are not integers >= 1, or max "
    "< min.",
    "django_snowid.E310": "A sequence field names a sequence that "
    '``SNOWID_SEQUENCES_UNKNOWN = "refuse"`` refuses.',
    "django_snowid.E311": "A ``SequenceTextField`` template has no ``{value}``, an unknown field, "
    "or a format other than a width.",
    "django_snowid.E312": "A ``SequenceTextField`` template, with its value at its padded width, "
    "is longer than ``max_length``.",
    "django_snowid.E313": "A sequence field is used but ``django_snowid.sequences`` is not in "
    "``INSTALLED_APPS``: its values would have no table.",
    "django_snowid.E320": "The named sequences' mark table is missing from its database: the "
    "code runs before ``manage.py migrate``, or the table was dropped. Nothing is issued until "
    "it exists (a database check: ``check --database``; ``migrate`` creates the table and does "
    "not report it).",
    # ------------------------------------------------------------ operations
    "django_snowid.E700": "``SNOWID_METRICS`` is True but prometheus_client is not installed "
    "(``django-snowid[metrics]``).",
    "django_snowid.E701": "``SNOWID_METRICS`` is not True or False.",
    "django_snowid.E702": "``SNOWID_HEALTH_TIME_BITS_HORIZON`` is not a ``timedelta`` of zero or "
    "more.",
    "django_snowid.E703": "``SNOWID_METRICS`` is True and ``PROMETHEUS_MULTIPROC_DIR`` (the "
    "directory of prometheus_client's multiprocess mode) is not a directory the process can "
    "write.",
    "django_snowid.W700": "A layout's time bits run out within "
    "``SNOWID_HEALTH_TIME_BITS_HORIZON``: plan the move to a later epoch or more time bits.",
    # ------------------------------------------------------- named sequences
    "django_snowid.W800": "django-sequences' table holds sequences above the values of ours: run "
    "``manage.py snowid_sequences --import-django-sequences`` before drawing them "
    "(a database check: ``migrate``, ``check --database``). Once an import is recorded, E801 "
    "reports any change instead.",
    "django_snowid.E801": "django-sequences' table changed after its import (recorded by "
    "``snowid_sequences --import-django-sequences``): old code is still drawing from "
    "django-sequences, whichever way its values went, and issues values that ours issue too. "
    "Stop it, then import again (a database check: ``check --database``; ``migrate`` does not "
    "report it).",
    # -------------------------------------------------------------- adoption
    "django_snowid.E900": "A model with a Snowflake primary key declares a generic relation (a "
    "``GenericRelation``, or a django-taggit ``TaggableManager``) whose object-id column cannot "
    "hold a 64-bit id (``IntegerField``, ``PositiveIntegerField``, a short ``CharField``): the "
    "first row it relates fails on PostgreSQL and MariaDB/MySQL. Names the app, model and "
    "column; give the relation a through model whose ``object_id`` is a ``BigIntegerField`` "
    "(see :doc:`/adopting`).",
    "django_snowid.W900": "A ``GenericForeignKey`` of any installed app stores object ids in a "
    "column that cannot hold a 64-bit id while models with Snowflake primary keys exist: "
    "relating one of their rows fails. Widen the field if it is yours; for another app's "
    "model (django-taggit's ``TaggedItem``) relate Snowflake rows through a model of your "
    "own, then silence the warning (see :doc:`/adopting`).",
    "django_snowid.W910": "A model has a Snowflake primary key, but on a database (``check "
    "--database``, ``migrate``) its key, or a column holding its ids (a foreign key, a "
    "many-to-many table), is narrower than 64 bits: its first new row fails there. Seen "
    "after ``DEFAULT_AUTO_FIELD`` changes in a project made under ``AutoField``. Names the "
    "columns; switch the model with ``manage.py snowid_adopt`` (see :doc:`/adopting`).",
    # ----------------------------------------------------------------- Redis
    "django_snowid.E500": "``SNOWID_REDIS_CLIENT_FACTORY`` is not a dotted path, or cannot be "
    "imported.",
    "django_snowid.E501": "``SNOWID_REDIS_CLIENT_FACTORY`` names something that is not callable.",
    "django_snowid.E510": "The Redis server our settings use (order numbers, sequences or "
    "worker-id leases) does not say which server it is: ``INFO`` is refused over the "
    "connection and inside scripts too (a proxy, a managed service that renames it). A "
    "failover or a restart could not be told from the same server, so nothing is issued "
    "through it. Allow ``INFO`` inside scripts, or reach Redis without the proxy (see "
    ":ref:`redis-proxies`). A deploy check (``check --deploy``: it connects).",
    # --------------------------------------------------------- database ids
    "django_snowid.E600": "``database_ids=True`` needs Django 5.0 or later (the column default "
    "is a ``db_default``).",
    "django_snowid.E601": "``database_ids=True`` on a model that lives on SQLite, which has no "
    "sequences: its ids are made in Python only.",
    "django_snowid.E602": "``database_ids=True`` on a model that lives on MariaDB or MySQL, where "
    "the database cannot make such ids safely.",
    "django_snowid.E603": "``database_ids=True`` on a model that lives on a backend other than "
    "PostgreSQL, SQLite, MariaDB or MySQL.",
    "django_snowid.E604": "``SNOWID_DATABASE_NODES`` is not an integer >= 1, or leaves no worker "
    "id of a layout to processes.",
    "django_snowid.E605": "More PostgreSQL databases hold models with ``database_ids=True`` than "
    "``SNOWID_DATABASE_NODES`` reserves node values.",
    "django_snowid.E606": "A fixed worker id (``static`` or ``env`` source) is one of the node "
    "values reserved for databases.",
    "django_snowid.E607": "``database_ids=True`` with ``shard_from``: the database cannot read "
    "the shard source of a row it fills.",
    "django_snowid.W600": "A column with ``database_ids=True`` lacks its database default on a "
    "database, or calls the function of another layout (run ``migrate``).",
}

#: What ends every hint: the command that prints a check id's entry of :data:`CHECK_IDS`
#: (what the reference page says of it) on any installation, online or not.
EXPLAIN_COMMAND = "python manage.py snowid_explain"


def check_pointer(id_: str) -> str:
    """Where a person reads ``id_``'s entry: ``python manage.py snowid_explain E001``."""
    return f"{EXPLAIN_COMMAND} {id_.removeprefix('django_snowid.')}"


class _Hint:
    """What ends every check's hint: ``HINT.format(id=...)`` points at that id's entry."""

    def format(self, *, id: str) -> str:
        return f"See: {check_pointer(id)}"


HINT = _Hint()


def error(msg: str, id_: str) -> Error:
    return Error(msg, hint=HINT.format(id=id_), id=id_)


def warning(msg: str, id_: str) -> Warning:
    return Warning(msg, hint=HINT.format(id=id_), id=id_)


def is_number(value: object, *, above: float | None = None, least: float | None = None) -> bool:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number = float(value)
    return (above is None or number > above) and (least is None or number >= least)


def project_app(config: Any) -> bool:
    """An app of the project itself: not Django's own, not ours, not an installed
    distribution."""
    path = str(getattr(config, "path", ""))
    if config.name.startswith("django.") or config.name == "django_snowid":
        return False
    return not any(part in path for part in ("site-packages", "dist-packages"))


def redis_cache_problem(alias: str) -> str:
    """Why our Redis parts have no client through ``CACHES[alias]``, or ``""``."""
    if conf.REDIS_CLIENT_FACTORY is not None:
        return ""
    caches: dict[str, dict[str, Any]] = getattr(settings, "CACHES", {})
    if alias not in caches:
        return f"CACHES[{alias!r}] is missing; it must be a django_redis cache"
    backend = caches[alias].get("BACKEND", "")
    if not backend.startswith("django_redis."):
        return f"CACHES[{alias!r}] is {backend!r}; it must be a django_redis cache"
    return ""


def check_redis_client(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """SNOWID_REDIS_CLIENT_FACTORY must name a callable (not called: it would connect)."""

    try:
        factory()
    except RedisClientError as exc:
        return [error(str(exc), exc.check_id)]
    return []


#: The tag of a check that only ``check --deploy`` runs: it reads what the server's own
#: environment holds, which ``migrate`` and ``collectstatic`` may run without.
DEPLOY = "snowid_deploy"


def check_redis_identity(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """E510 (``check --deploy``): a Redis our settings use hides its identity."""
    uses = (conf.ORDER_BACKEND, conf.SEQUENCE_BACKEND, conf.WORKER_ID_SOURCE)
    if "redis" not in uses:
        return []
    from .stores.redis_client import get_client
    from .stores.redis_scripts import IDENTITY_UNKNOWN, server_id

    try:
        server_id(get_client(), "{snowid:identity-check}")
    except RedisUnavailable as exc:
        if IDENTITY_UNKNOWN in str(exc):
            return [error(f"Redis ({describe()}): {exc}.", "django_snowid.E510")]
    except Exception:  # unreachable: the first call says it
        pass
    return []


CHECKS: tuple[Check, ...] = (
    (check_redis_client, Tags.compatibility),
    (check_redis_identity, DEPLOY),
)


def register(checks: Iterable[Check]) -> None:
    """Register ``checks`` (a feature's ``CHECKS``) with Django; called by ``ready()``."""
    for check, tag in checks:
        if tag == DEPLOY:
            register_check(check, Tags.compatibility, deploy=True)
        else:
            register_check(check, tag)


def configured_layouts() -> tuple[list[Layout], list[CheckMessage]]:
    """The layouts of the settings that build, and an E003 for each that does not."""
    layouts: list[Layout] = []
    errors: list[CheckMessage] = []
    try:
        parse_epoch(conf.EPOCH)
        epoch_error = ""
    except LayoutError as exc:
        epoch_error = str(exc)
    for name in layout_names():
        setting = "SNOWID_LAYOUT" if name == "default" else f"SNOWID_LAYOUTS[{name!r}]"
        try:
            layouts.append(build_layout(name))
        except (LayoutError, TypeError) as exc:
            if str(exc) == epoch_error:
                continue  # the shared SNOWID_EPOCH: E001 says it once, not once a layout
            errors.append(error(f"{setting} is invalid: {exc}", "django_snowid.E003"))
    return layouts, errors
