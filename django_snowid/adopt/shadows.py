"""Copies of indexes and constraints on shadow columns (PostgreSQL's online switch), made
from their catalog definitions with the columns renamed, and compared with the originals."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping

from ..exceptions import AdoptionError
from .pg_catalog import Built, q

__all__ = [
    "SUFFIX",
    "attach_sql",
    "create_sql",
    "rename_columns",
    "same_definition",
    "shadow",
    "widened_opclasses",
]

SUFFIX = "_snowid"

_LITERAL = re.compile(r"('(?:[^']|'')*')")
_IDENT = re.compile(r'"(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_$]*')
_INDEX = re.compile(
    r'^CREATE (UNIQUE )?INDEX (?P<name>"(?:[^"]|"")*"|\S+) '
    r'ON (?P<table>(?:ONLY )?(?:"(?:[^"]|"")*"|[^\s"])+) '
    r"USING (?P<method>\S+) (?P<rest>.*)$",
    re.S,
)
_FOREIGN = re.compile(
    r"^FOREIGN KEY \((?P<cols>.*?)\) REFERENCES (?P<target>.+?)\((?P<refs>.*?)\)(?P<tail>.*)$", re.S
)
_OPCLASS = re.compile(r"\b(gist_)?int[248](_\w*)?_ops\b")


def shadow(name: str) -> str:
    """The name of ``name``'s shadow (column, index, constraint), at most 63 bytes."""
    full = f"{name}{SUFFIX}"
    if len(full) <= 63:
        return full
    digest = hashlib.md5(name.encode()).hexdigest()[:8]
    return f"{name[: 63 - len(SUFFIX) - 9]}_{digest}{SUFFIX}"


def _unquoted(token: str) -> str:
    return token[1:-1].replace('""', '"') if token.startswith('"') else token


def rename_columns(text: str, renames: Mapping[str, str]) -> str:
    """``text`` (SQL of the catalog) with the columns ``renames`` names replaced, outside
    literals, qualified names, calls and collations; an integer operator class after a
    renamed column becomes its bigint one."""
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _rename_outside_literals(parts[i], renames)
    return "".join(parts)


def _rename_outside_literals(text: str, renames: Mapping[str, str]) -> str:
    out: list[str] = []
    last = 0
    renamed_at = -1
    for match in _IDENT.finditer(text):
        token, start, end = match.group(), match.start(), match.end()
        before, after = text[:start].rstrip(), text[end:].lstrip()
        name = _unquoted(token)
        out.append(text[last:start])
        last = end
        if renamed_at >= 0 and not text[renamed_at:start].strip() and _OPCLASS.fullmatch(token):
            out.append(
                _OPCLASS.sub(lambda m: f"{m.group(1) or ''}int8{m.group(2) or ''}_ops", token)
            )
            continue
        qualified = before.endswith(".") or after.startswith(".")
        call = not token.startswith('"') and after.startswith("(")
        collation = before.upper().endswith("COLLATE")
        if name in renames and not (qualified or call or collation):
            out.append(renames[name])
            renamed_at = end
        else:
            out.append(token)
            renamed_at = -1
    out.append(text[last:])
    return "".join(out)


def widened_opclasses(text: str) -> str:
    """``text`` with every integer operator class named for 64 bits."""
    return _OPCLASS.sub(lambda m: f"{m.group(1) or ''}int8{m.group(2) or ''}_ops", text)


def _to_shadows(columns: list[str]) -> dict[str, str]:
    return {c: q(shadow(c)) for c in columns}


def create_sql(built: Built, mine: list[str], theirs: list[str]) -> str:
    """The statement making ``built``'s copy on the shadows of ``mine`` (its table's
    converted columns) and ``theirs`` (a key's target's)."""
    if built.kind in ("index", "unique", "primary key"):
        match = _INDEX.match(built.definition)
        if match is None:
            raise AdoptionError(
                f"Index {built.name} of {built.table}: cannot read {built.definition!r}."
            )
        unique = "UNIQUE " if match.group(1) else ""
        rest = rename_columns(match.group("rest"), _to_shadows(mine))
        return (
            f"CREATE {unique}INDEX CONCURRENTLY {q(shadow(built.name))} ON "
            f"{match.group('table')} USING {match.group('method')} {rest}"
        )
    definition = built.definition.removesuffix(" NOT VALID")
    if built.kind == "foreign key":
        definition = _foreign_key(built, definition, mine, theirs)
    elif built.kind == "check":
        definition = rename_columns(definition, _to_shadows(mine))
    else:
        raise AdoptionError(f"{built.kind} {built.name} of {built.table} has no copy.")
    return (
        f"ALTER TABLE {q(built.table)} ADD CONSTRAINT {q(shadow(built.name))} "
        f"{definition} NOT VALID"
    )


def _foreign_key(built: Built, definition: str, mine: list[str], theirs: list[str]) -> str:
    match = _FOREIGN.match(definition)
    if match is None:
        raise AdoptionError(
            f"Foreign key {built.name} of {built.table}: cannot read {definition!r}."
        )
    cols = rename_columns(match.group("cols"), _to_shadows(mine))
    refs = rename_columns(match.group("refs"), _to_shadows(theirs))
    tail = rename_columns(match.group("tail"), _to_shadows(mine))  # ON DELETE SET NULL (cols)
    return f"FOREIGN KEY ({cols}) REFERENCES {match.group('target')}({refs}){tail}"


def attach_sql(built: Built) -> str:
    """In the swap: the statement giving ``built``'s copy its original's name (an
    exclusion constraint is made again)."""
    table, name = q(built.table), q(built.name)
    if built.kind in ("unique", "primary key"):
        return (
            f"ALTER TABLE {table} ADD CONSTRAINT {name} {built.kind.upper()} "
            f"USING INDEX {q(shadow(built.name))}{built.timing}"
        )
    if built.kind == "index":
        return f"ALTER INDEX {q(shadow(built.name))} RENAME TO {name}"
    if built.kind == "exclusion":
        return f"ALTER TABLE {table} ADD CONSTRAINT {name} {widened_opclasses(built.definition)}"
    return f"ALTER TABLE {table} RENAME CONSTRAINT {q(shadow(built.name))} TO {name}"


def _normal(text: str) -> str:
    return _OPCLASS.sub(lambda m: f"{m.group(1) or ''}int*{m.group(2) or ''}_ops", text)


def _index_parts(definition: str) -> str | None:
    match = _INDEX.match(definition)
    if match is None:
        return None
    return "|".join(str(match.group(g)) for g in (1, "table", "method", "rest"))


def same_definition(built: Built, copy: str, back: Callable[[str], str]) -> bool:
    """Whether ``copy`` (the catalog's definition of ``built``'s copy) defines ``built``
    once ``back`` renamed the shadow names in it back, integer widths aside."""
    original = built.definition
    if built.kind in ("index", "unique", "primary key"):
        index, copy_index = _index_parts(built.definition), _index_parts(copy)
        if index is None or copy_index is None:
            return False
        original, copy = index, copy_index
    return _normal(original) == _normal(back(copy))
