"""Shard bits at the end of Snowflake ids: the layout, the generator and the fields."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from django.core.management import call_command
from django.db import models, transaction
from django.test.utils import isolate_apps
from hypothesis import given
from hypothesis import strategies as st

from django_snowid.core.generator import SnowflakeGenerator
from django_snowid.core.layout import PRESETS, Layout, NodePart, layout_from_spec
from django_snowid.exceptions import InvalidShardValue, LayoutError
from django_snowid.fields import SnowflakeAutoField, SnowflakeField
from django_snowid.readings import snowflake_bits
from tests.support import FakeClock
from tests.testapp.models import ShardedOrder

UNIX = datetime(1970, 1, 1, tzinfo=timezone.utc)
# time 41 | worker 6 | sequence 12 | uid 4, counted from the Unix epoch.
GENE = Layout(41, (NodePart("worker", 6),), 12, epoch=UNIX, shard_bits=4)


def test_reference_vector():
    value = GENE.compose(1572070381000, 1, 0, GENE.shard_of(1820))
    assert value == 1572070381000 << 22 | 1 << 16 | 0 << 4 | (1820 & 15)
    assert value == 6593741087309889548
    assert value % 16 == 1820 % 16 == 12
    decoded = GENE.decode(value)
    assert (decoded.tick, decoded.parts, decoded.sequence, decoded.shard) == (
        1572070381000,
        {"worker": 1},
        0,
        12,
    )
    assert decoded.time == datetime(2019, 10, 26, 6, 13, 1, tzinfo=timezone.utc)
    assert decoded.as_dict()["shard"] == 12
    assert GENE.describe().endswith("| sequence 12 (spread 4) | shard 4")
    assert [s.name for s in snowflake_bits(decoded)][-2:] == ["sequence", "shard"]


def test_the_preset_and_the_mapping_spec():
    assert PRESETS["sharded"].shard_bits == 4 and PRESETS["sharded"].total_bits == 63
    spec = {"time_bits": 41, "node": {"worker": 6}, "sequence_bits": 12, "shard_bits": 4}
    assert layout_from_spec(spec, epoch=UNIX) == GENE
    assert layout_from_spec({"preset": "classic", "shard_bits": 0}).shard_bits == 0
    # Layouts without shard bits keep their ids and their decode output.
    assert "shard" not in PRESETS["classic"].decode(2**40).as_dict()


@pytest.mark.parametrize("shard_bits", [-1, 1.5, True])
def test_bad_shard_bits_are_refused(shard_bits):
    with pytest.raises(LayoutError, match="shard_bits"):
        Layout(41, (NodePart("worker", 6),), 12, shard_bits=shard_bits)


def test_shard_bits_count_towards_the_63():
    with pytest.raises(LayoutError, match="64 bits"):
        Layout(41, (NodePart("worker", 6),), 12, shard_bits=5)
    with pytest.raises(LayoutError, match=r"Shard 16 is out of range 0\.\.15"):
        GENE.compose(1, 1, 0, 16)


@given(
    tick=st.integers(0, GENE.max_tick),
    node=st.integers(0, GENE.max_node),
    sequence=st.integers(0, GENE.max_sequence),
    user=st.integers(0, 2**63 - 1),
)
def test_compose_decode_round_trip(tick, node, sequence, user):
    value = GENE.compose(tick, node, sequence, GENE.shard_of(user))
    assert value % 16 == user % 16
    decoded = GENE.decode(value)
    assert (decoded.tick, decoded.node, decoded.sequence, decoded.shard) == (
        tick,
        node,
        sequence,
        user % 16,
    )


@given(users=st.lists(st.integers(0, 2**40), min_size=1, max_size=300))
def test_generator_ids_stay_unique_and_increasing_whatever_the_shard(users):
    clock = FakeClock()
    generator = SnowflakeGenerator(GENE, 5, clock=clock, sleep=clock.sleep)
    ids = []
    for i, user in enumerate(users):
        if i % 97 == 0:
            clock.advance_ms(1)
        ids.append(generator.next_id() | GENE.shard_of(user))
    assert ids == sorted(set(ids))
    assert [GENE.decode(v).shard for v in ids] == [u % 16 for u in users]
    assert {GENE.decode(v).node for v in ids} == {5}


def test_a_tick_still_holds_2_to_the_sequence_bits_ids():
    clock = FakeClock()
    # An offset of 0 for the first tick (the spread's cost is tested in test_spread_ids).
    generator = SnowflakeGenerator(GENE, 0, clock=clock, sleep=clock.sleep, random_bits=lambda b: 0)
    ids = generator.next_ids(4096 + 1)
    ticks = [GENE.decode(v).tick for v in ids]
    assert ticks[0] == ticks[4095] != ticks[4096]
    assert [GENE.decode(v).sequence for v in ids[:4096]] == list(range(4096))


# ------------------------------------------------------------------ fields
@pytest.mark.django_db
def test_save_puts_the_user_shard_in_the_pk_and_the_column():
    orders = [ShardedOrder.objects.create(user_id=user) for user in (1820, 7, 2**40 + 3, 16)]
    for order in orders:
        assert order.pk % 16 == order.user_id % 16
        assert order.receipt % 16 == order.user_id % 16
        assert ShardedOrder.objects.get(pk=order.pk).receipt == order.receipt
    pks = [o.pk for o in orders]
    assert pks == sorted(set(pks))
    assert ShardedOrder._meta.pk.decode(orders[0].pk).shard == 1820 % 16


@pytest.mark.django_db
def test_bulk_create_fills_the_shard_of_each_row():
    users = list(range(0, 3000, 7))
    orders = ShardedOrder.objects.bulk_create(
        [ShardedOrder(user_id=u) for u in users], batch_size=500
    )
    assert [o.pk % 16 for o in orders] == [u % 16 for u in users]
    assert [o.receipt % 16 for o in orders] == [u % 16 for u in users]
    stored = dict(ShardedOrder.objects.values_list("pk", "user_id"))
    assert {pk: user for pk, user in stored.items()} == {o.pk: o.user_id for o in orders}
    assert all(pk % 16 == user % 16 for pk, user in stored.items())


@pytest.mark.django_db
@pytest.mark.parametrize("user_id", [None, -1, "12"])
def test_bad_shard_sources_write_nothing(user_id):
    # Each in a savepoint: an error inside save() marks the surrounding transaction.
    with pytest.raises(InvalidShardValue, match=r"ShardedOrder\.user_id"), transaction.atomic():
        ShardedOrder.objects.create(user_id=user_id)
    with pytest.raises(InvalidShardValue, match=r"ShardedOrder\.user_id"), transaction.atomic():
        ShardedOrder.objects.bulk_create([ShardedOrder(user_id=1), ShardedOrder(user_id=user_id)])
    assert ShardedOrder.objects.count() == 0


@pytest.mark.django_db
def test_decode_command_shows_the_shard(capsys):
    order = ShardedOrder.objects.create(user_id=1820)
    call_command("snowid_decode", str(order.pk), "--layout", "sharded")
    assert "shard=12" in capsys.readouterr().out


def test_deconstruct_keeps_shard_from():
    field = ShardedOrder._meta.get_field("receipt")
    assert field.deconstruct()[3]["shard_from"] == "user_id"
    assert ShardedOrder._meta.pk.deconstruct()[3]["shard_from"] == "user_id"


@isolate_apps("tests.testapp")
def test_check_refuses_shard_from_on_a_layout_without_shard_bits():
    class NoShardBits(models.Model):
        id = SnowflakeAutoField(primary_key=True, shard_from="user_id")
        user_id = models.BigIntegerField()
        other = SnowflakeField(layout="sharded", shard_from="nowhere")

        class Meta:
            app_label = "testapp"

    assert [e.id for e in NoShardBits._meta.pk.check()] == ["django_snowid.E400"]
    assert [e.id for e in NoShardBits._meta.get_field("other").check()] == ["django_snowid.E201"]


@isolate_apps("tests.testapp")
def test_check_accepts_shard_from_on_a_sharded_layout():
    class Sharded(models.Model):
        id = SnowflakeAutoField(primary_key=True, layout="sharded", shard_from="user_id")
        user_id = models.BigIntegerField()

        class Meta:
            app_label = "testapp"

    assert Sharded._meta.pk.check() == []


@pytest.mark.django_db
def test_admin_shows_the_shard_of_a_sharded_id(rf):
    from django.contrib import admin

    from django_snowid.admin.mixins import SnowflakeModelAdmin

    model_admin = SnowflakeModelAdmin(ShardedOrder, admin.site)
    order = ShardedOrder.objects.create(user_id=1820)
    assert "snowid_shard" in model_admin.get_list_display(rf.get("/"))
    assert model_admin.snowid_shard(order) == 12
    assert ", shard 12" in model_admin.snowid_decoded(order)
    # A value no layout issues (a row written by hand): the columns say so or stay empty.
    foreign = ShardedOrder(id=-5, user_id=1820)
    assert model_admin.snowid_shard(foreign) is None
    assert model_admin.snowid_worker(foreign) is None
    assert "-5" in model_admin.snowid_created(foreign)


@pytest.mark.django_db
def test_decode_page_rows_show_the_shard():
    from django_snowid.readings import decode_tokens

    order = ShardedOrder.objects.create(user_id=1820)
    (row,) = decode_tokens([str(order.pk)], "field:testapp.ShardedOrder.id")
    assert ("shard", 12) in row.parts
    assert row.bits[-1].name == "shard" and row.bits[-1].cells == "1100"


@pytest.mark.parametrize("shard_bits", [5, -1, "4"])
def test_a_bad_shard_part_in_the_settings_is_check_e003(shard_bits):
    from django.core import checks
    from django.test import override_settings

    layouts = {"js": "js53", "dc": "datacenter", "sharded": {"preset": "sharded"}}
    layouts["sharded"]["shard_bits"] = shard_bits
    with override_settings(SNOWID_LAYOUTS=layouts):
        found = {m.id for m in checks.run_checks(databases=[])}
    assert "django_snowid.E003" in found
