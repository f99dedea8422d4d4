"""A store family (the stores one setting chooses from), what a store needs, and the
protocol every store follows."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Protocol, runtime_checkable

from ..conf import Setting
from ..exceptions import SnowidError

__all__ = ["Family", "FamilyChecks", "Needs", "Store", "StoreErrors"]


@dataclass(frozen=True)
class Needs:
    redis: bool = False
    tables: tuple[str, ...] = ()  # model labels: "django_snowid.WorkerLease"
    one_host: bool = False  # unique on one host only (lock files)


@dataclass(frozen=True)
class StoreErrors:
    """``unavailable``: down, timed out, read-only, moving; ``refused``: an unusable answer
    or client; ``invalid``: a setting naming no store (default ``refused``). ``unreachable``
    takes ``{where}`` and ``{error}``, ``bad_key`` ``{key}`` and ``{error}``."""

    unavailable: type[SnowidError]
    refused: type[SnowidError]
    unreachable: str
    bad_key: str
    invalid: type[SnowidError] | None = None


@dataclass(frozen=True)
class FamilyChecks:
    """The check ids of ``store_checks()``; ``redis_message`` takes ``{alias}`` and
    ``{problem}``, ``table_consequence`` completes ``db.tables.missing_message``."""

    unknown: str | None = None
    redis: str | None = None
    redis_message: str = ""
    table: str | None = None
    table_consequence: str = ""


def _always() -> bool:
    return True


def _nothing() -> Hashable:
    return None


@dataclass(frozen=True)
class Family:
    """The stores ``setting`` chooses from: each choice names (dotted path) a callable
    without arguments that builds the store from the settings, imported on first use."""

    label: str
    setting: Setting[Any]
    choices: Mapping[str, str]
    errors: StoreErrors
    checks: FamilyChecks
    in_use: Callable[[], bool] = _always
    scope: Callable[[], Hashable] = _nothing  # what tells stores apart beside the settings

    def choice(self) -> str:
        """The setting's value, or the family's ``invalid`` error naming the choices."""
        value = self.setting.given()
        if isinstance(value, str) and value in self.choices:
            return value
        raise (self.errors.invalid or self.errors.refused)(
            f"{self.setting.name} is {value!r}; expected one of {list(self.choices)}."
        )

    def factory(self, choice: str | None = None) -> Callable[[], Any]:
        """The callable that builds the store of ``choice`` (default: the setting's)."""
        return _imported(self.choices[self.choice() if choice is None else choice])


def _imported(path: str) -> Any:
    """What ``path`` names: a module's attribute, or an attribute of one."""
    parts = path.split(".")
    for end in range(len(parts) - 1, 0, -1):
        module = ".".join(parts[:end])
        try:
            found = import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not f"{module}.".startswith(f"{exc.name}."):
                raise  # a module it imports is missing (redis, say)
            continue
        for name in parts[end:]:
            found = getattr(found, name)
        return found
    raise ImportError(f"{path!r} names nothing importable.")


@runtime_checkable
class Store(Protocol):
    name: str  # the setting's value (messages, metric labels)
    needs: Needs

    def describe(self) -> str:
        """Where it lives, for people: "Redis (cache alias 'default')"."""
        ...

    def after_fork(self) -> None:
        """In a forked child: let go of the parent's resources, without releasing them."""
        ...
