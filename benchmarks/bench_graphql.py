"""GraphQL: our scalars next to each library's own, same run.

    python benchmarks/bench_graphql.py [--objects 10000] [--repeat 7]

Answers a query for ``--objects`` objects (an id, a foreign-key id, an order number and a
name) with graphene, our ``SnowflakeID`` and ``OrderNumber`` against graphene's ``BigInt``
(what graphene-django gives a ``BigIntegerField``), and with strawberry, ours against its
``ID`` (what strawberry-django gives a primary key: its ``Int`` is 32-bit and cannot
carry these values). The two of a library alternate in chunks of 500, and every figure
is the median of ``--repeat`` runs. Target: ours within 1.1x of the library's own.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.payloads import alternate, arguments, make_objects, setup_django

setup_django()

import graphene
import strawberry

from django_snowid.graphql import graphene as ours_graphene
from django_snowid.graphql import strawberry as ours_strawberry

TARGET = 1.1
QUERY = "{ rows { id productId number name } }"
Run = Callable[[list[Any]], list[Any]]


def graphene_schema(id_type: Any, number_type: Any) -> graphene.Schema:
    row = type(
        f"Row{id_type.__name__}",
        (graphene.ObjectType,),
        {
            "id": graphene.Field(id_type, required=True),
            "product_id": graphene.Field(id_type, required=True),
            "number": graphene.Field(number_type, required=True),
            "name": graphene.String(required=True),
        },
    )

    class Query(graphene.ObjectType):
        rows = graphene.List(graphene.NonNull(row), required=True)

        def resolve_rows(root: Any, info: Any) -> Any:
            return info.context["rows"]

    return graphene.Schema(query=Query)


@strawberry.type
class OurRow:
    id: ours_strawberry.SnowflakeID
    product_id: ours_strawberry.SnowflakeID
    number: ours_strawberry.OrderNumber
    name: str


@strawberry.type
class IdRow:
    id: strawberry.ID
    product_id: strawberry.ID
    number: strawberry.ID
    name: str


def strawberry_schema(row: type) -> strawberry.Schema:
    def rows(info: strawberry.Info) -> Any:
        return info.context["rows"]

    field = strawberry.field(resolver=rows, graphql_type=list[row])  # type: ignore[valid-type]
    return strawberry.Schema(
        query=strawberry.type(type(f"{row.__name__}Query", (), {"rows": field}))
    )


def runner(execute: Callable[..., Any]) -> Run:
    """A run of ``execute`` (a schema's ``execute`` or ``execute_sync``): the rows written."""

    def run(chunk: list[Any]) -> list[Any]:
        result = execute(QUERY, context_value={"rows": chunk})
        assert result.errors is None, result.errors
        return result.data["rows"]

    return run


def report(library: str, times: dict[str, list[float]], theirs: str) -> None:
    ours_ms, theirs_ms = (statistics.median(times[n]) * 1000 for n in ("ours", theirs))
    ratios = sorted(o / t for o, t in zip(times["ours"], times[theirs], strict=True))
    ratio = ours_ms / theirs_ms
    verdict = "within" if ratio <= TARGET else "MISSES"
    print(library)
    print(f"  SnowflakeID, OrderNumber {ours_ms:8.1f} ms")
    print(f"  {theirs:<23} {theirs_ms:8.1f} ms")
    print(
        f"  ratio ours/{theirs} {ratio:.3f} ({verdict} the {TARGET}x target; "
        f"paired ratios {ratios[0]:.3f}..{ratios[-1]:.3f})"
    )


def main() -> None:
    args = arguments(__doc__)

    rows = make_objects(args.objects)
    print(
        f"Answering a query for {args.objects:,} objects (id, foreign key, order number, "
        f"name), median of {args.repeat}"
    )
    graphene_runs = {
        "ours": runner(
            graphene_schema(ours_graphene.SnowflakeID, ours_graphene.OrderNumber).execute
        ),
        "BigInt": runner(graphene_schema(graphene.BigInt, graphene.BigInt).execute),
    }
    strawberry_runs = {
        "ours": runner(strawberry_schema(OurRow).execute_sync),
        "ID": runner(strawberry_schema(IdRow).execute_sync),
    }
    # Same values, or the comparison means nothing (BigInt writes numbers, ours strings).
    sample = rows[:3]
    as_strings = [{k: str(v) for k, v in row.items()} for row in graphene_runs["BigInt"](sample)]
    assert graphene_runs["ours"](sample) == as_strings
    assert strawberry_runs["ours"](sample) == strawberry_runs["ID"](sample)
    report("graphene", alternate(graphene_runs, rows, args.repeat), "BigInt")
    report("strawberry", alternate(strawberry_runs, rows, args.repeat), "ID")


if __name__ == "__main__":
    main()
