"""The SQL text of the database default on PostgreSQL: per geometry a sequence whose value
is the last id issued, an inlinable SQL function, and a PL/pgSQL helper that moves the
sequence to a new tick (docs/database-ids.rst says how).

Invariants: the sequence only moves forward; the helper's advisory lock is the session's,
released before it returns or raises (a transaction lock would stall writers until a long
``COPY`` commits).
"""

from __future__ import annotations

from .geometry import Geometry

__all__ = ["ERRCODE", "comment_of", "install_statements", "uninstall_statements"]

#: The SQLSTATE of a clock behind the last tick issued by more than the tolerance.
ERRCODE = "SNW01"
#: The comment of the function says which node and tolerance it was made with.
COMMENT = "django-snowid database ids: node={node} tolerance_ms={tolerance}"


def comment_of(node: int, tolerance_ms: float) -> str:
    return COMMENT.format(node=node, tolerance=f"{tolerance_ms:g}")


def _tick(g: Geometry) -> str:
    """The clock's tick, as bigint, from ``clock_timestamp()`` (a double: microseconds)."""
    now_ms = f"date_part('epoch', clock_timestamp()) * 1000 - {g.epoch_ms}"
    return (
        f"floor({now_ms})::bigint" if g.unit_ms == 1 else f"floor(({now_ms}) / {g.unit_ms})::bigint"
    )


def install_statements(g: Geometry, *, schema: str, node: int, tolerance_ms: float) -> list[str]:
    """``CREATE`` statements for ``g`` in ``schema`` (a quoted name), issuing from ``node``."""
    return [
        # CACHE 1: a session must never hand out values it cached before a move.
        f"CREATE SEQUENCE IF NOT EXISTS {schema}.{g.sequence} AS bigint INCREMENT BY {g.step} "
        f"MINVALUE 0 START WITH 0 CACHE 1 NO CYCLE",
        _advance_function(g, schema=schema, node=node, tolerance_ms=tolerance_ms),
        _next_id_function(g, schema=schema, node=node),
        f"COMMENT ON FUNCTION {schema}.{g.function}() IS '{comment_of(node, tolerance_ms)}'",
    ]


def _next_id_function(g: Geometry, *, schema: str, node: int) -> str:
    """The column default: the next value while it is ``node``'s in the clock's tick."""
    seq = f"{schema}.{g.sequence}"
    return f"""
CREATE OR REPLACE FUNCTION {schema}.{g.function}() RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE AS $body$
SELECT CASE
    WHEN (nextval('{seq}') >> {g.node_shift}) = (({_tick(g)} << {g.node_bits}) | {node})
    THEN lastval()
    ELSE {schema}.{g.advance_function}()
END
$body$"""


def _advance_function(g: Geometry, *, schema: str, node: int, tolerance_ms: float) -> str:
    """The advance function: the steps below, in a loop under the advisory lock."""
    seq = f"{schema}.{g.sequence}"
    tolerance_ticks = int(tolerance_ms // g.unit_ms)
    loop = (
        _draw(g, seq)
        + _return_if_current(g, node, tolerance_ticks)
        + _last_tick(node)
        + _refuse_clock_behind(g, tolerance_ticks, tolerance_ms)
        + _wait_for_target(g)
        + _refuse_outside_time_bits(g)
        + _move_to_clock(g, seq, node)
    )
    return f"""
CREATE OR REPLACE FUNCTION {schema}.{g.advance_function}() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $body$
DECLARE
    v bigint;
    now_tick bigint;
    tick bigint;
    node_field bigint;
    last_tick bigint;
    target bigint;
    used_up boolean;
    spread bigint;
    wait_ms double precision;
BEGIN
    PERFORM pg_advisory_lock({g.lock_key});
    BEGIN
        LOOP
{loop}        END LOOP;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock({g.lock_key});
        RAISE;
    END;
END
$body$"""


def _draw(g: Geometry, seq: str) -> str:
    return f"""\
            v := nextval('{seq}');
            now_tick := {_tick(g)};
            tick := v >> {g.time_shift};
            node_field := (v >> {g.node_shift}) & {(1 << g.node_bits) - 1};
"""


def _return_if_current(g: Geometry, node: int, tolerance_ticks: int) -> str:
    return f"""\
            IF node_field = {node} AND tick >= now_tick AND tick - now_tick <= {tolerance_ticks}
            THEN
                PERFORM pg_advisory_unlock({g.lock_key});
                RETURN v;
            END IF;
"""


def _last_tick(node: int) -> str:
    """The last tick ``node`` issued in, and whether its ids there are used up."""
    return f"""\
            IF node_field > {node} THEN      -- past this node's ids of its tick: used up
                last_tick := tick;
                used_up := true;
            ELSIF node_field < {node} THEN   -- carried into the next tick's lower nodes
                last_tick := tick - 1;
                used_up := true;
            ELSE                             -- an old tick, or a tick far ahead
                last_tick := tick;
                used_up := false;
            END IF;
"""


def _refuse_clock_behind(g: Geometry, tolerance_ticks: int, tolerance_ms: float) -> str:
    return f"""\
            IF last_tick - now_tick > {tolerance_ticks} THEN
                RAISE EXCEPTION USING
                    ERRCODE = '{ERRCODE}',
                    MESSAGE = format(
                        'django-snowid: the database clock is %s ms behind the last id issued '
                        'by %s (tolerance {tolerance_ms:g} ms, '
                        'SNOWID_CLOCK_BACKWARDS_TOLERANCE_MS); no id was issued.',
                        (last_tick - now_tick) * {g.unit_ms}, '{g.function}'),
                    HINT = 'Wait until the clock has caught up, or fix the clock (NTP). '
                           'Ids are never issued twice.';
            END IF;
"""


def _wait_for_target(g: Geometry) -> str:
    return f"""\
            target := CASE WHEN used_up THEN last_tick + 1 ELSE last_tick END;
            IF target > now_tick THEN
                -- The tick is used up, or the clock is a little behind: wait for it.
                wait_ms := target * {g.unit_ms} + {g.epoch_ms}
                           - date_part('epoch', clock_timestamp()) * 1000;
                IF wait_ms > 0 THEN
                    PERFORM pg_sleep(wait_ms / 1000.0);
                END IF;
                CONTINUE;
            END IF;
"""


def _refuse_outside_time_bits(g: Geometry) -> str:
    return f"""\
            IF now_tick < 0 OR now_tick > {(1 << g.time_bits) - 1} THEN
                RAISE EXCEPTION USING
                    ERRCODE = '{ERRCODE}',
                    MESSAGE = format('django-snowid: tick %s is outside the time bits of %s '
                                     '(before the epoch, or after they ran out); no id was issued.',
                                     now_tick, '{g.function}');
            END IF;
"""


def _move_to_clock(g: Geometry, seq: str, node: int) -> str:
    """Move the sequence to ``node`` in the clock's tick, at a random spread."""
    node_bits = f"{node} << {g.node_shift}"
    return f"""\
            spread := CASE WHEN used_up AND now_tick = last_tick + 1 THEN 0
                           ELSE floor(random() * {1 << g.spread_bits})::bigint END;
            PERFORM setval(
                '{seq}',
                (now_tick << {g.time_shift}) | ({node_bits}) | (spread << {g.shard_bits}),
                false);
"""


def uninstall_statements(g: Geometry, *, schema: str) -> list[str]:
    return [
        f"DROP FUNCTION IF EXISTS {schema}.{g.function}()",
        f"DROP FUNCTION IF EXISTS {schema}.{g.advance_function}()",
        f"DROP SEQUENCE IF EXISTS {schema}.{g.sequence}",
    ]
