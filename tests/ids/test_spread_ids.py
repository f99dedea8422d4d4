"""Spread low bits: ``id % 16`` routes our ids evenly at any rate.

A sequence that restarts at 0 every tick leaves the low bits of ids issued at ordinary
rates (one a tick or fewer) at 0: ``id % 16`` and ``shard_from`` pointing at our ids put
nearly everything on shard 0. Each tick's sequence starts at a random offset below
``2**spread_bits`` instead.

The statistical tests use real randomness and the injected clock. Their thresholds make a
false failure a one-in-a-million event or rarer (figures next to each).
"""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest
from django.db import models
from django.test import override_settings
from django.test.utils import isolate_apps

from django_snowid.core.generator import SnowflakeGenerator
from django_snowid.core.layout import PRESETS, Layout, NodePart, layout_from_spec
from django_snowid.exceptions import LayoutError
from django_snowid.fields import OrderNumberField, SnowflakeAutoField, SnowflakeField
from django_snowid.settings_layouts import get_layout
from tests.support import FakeClock
from tests.testapp.models import Product, ShopOrder

CLASSIC = PRESETS["classic"]
SHARDS = 16
# scipy.stats.chi2.isf(1e-6, 15): a chi-square statistic over 16 shards above this has a
# probability below one in a million when the shards are even.
CHI2_15_P_1E6 = 56.49


def chi_square(values: list[int], shards: int = SHARDS) -> float:
    counts = Counter(v % shards for v in values)
    expected = len(values) / shards
    return sum((counts.get(s, 0) - expected) ** 2 / expected for s in range(shards))


def generator(clock: FakeClock, layout: Layout = CLASSIC, **kwargs) -> SnowflakeGenerator:
    return SnowflakeGenerator(layout, 5, clock=clock, sleep=clock.sleep, **kwargs)


def test_ids_at_ordinary_rates_fall_evenly_on_16_shards(clock):
    """10,000 ids: one a millisecond, slower, and in bursts within a millisecond."""
    pace = random.Random(20261124)  # the pace is fixed; the generator's offsets are not
    gen = generator(clock)
    ids: list[int] = []
    while len(ids) < 4_000:  # one a millisecond
        ids.append(gen.next_id())
        clock.advance_ms(1)
    while len(ids) < 7_000:  # slower: one every 2 to 50 ms
        ids.append(gen.next_id())
        clock.advance_ms(pace.randint(2, 50))
    while len(ids) < 10_000:  # bursts of 2 to 40 ids inside one millisecond
        ids.extend(gen.next_id() for _ in range(pace.randint(2, 40)))
        clock.advance_ms(pace.randint(1, 20))
    ids = ids[:10_000]
    assert ids == sorted(set(ids))
    statistic = chi_square(ids)
    assert statistic < CHI2_15_P_1E6, (statistic, Counter(i % SHARDS for i in ids))


@pytest.mark.django_db
def test_orders_of_customers_with_snowflake_ids_use_most_shards(settings):
    """64 customers (Snowflake ids, a few milliseconds apart), one order each, shard taken
    from the customer's id: the orders spread over the 16 shards.

    With the shards even, 64 orders leave 5 or more of 16 shards empty with a probability
    below C(16, 5) * (11/16)**64 = 1.7e-7.
    """
    settings.SNOWID_ORDER_BACKEND = "database"
    customers = []
    for index in range(64):
        customers.append(Product.objects.create(name=f"customer {index}"))
        time.sleep(0.002)  # each customer in a tick of its own: the rate of sign-ups
    orders = [ShopOrder.objects.create(user_id=customer.pk) for customer in customers]
    assert all(o.number % 16 == o.user_id % 16 for o in orders)
    shards = Counter(order.number % 16 for order in orders)
    assert len(shards) >= 12, shards


def test_each_tick_starts_at_the_offset_drawn_for_it(clock):
    offsets = iter([9, 0, 15, 3])
    drawn: list[int] = []

    def random_bits(bits: int) -> int:
        drawn.append(bits)
        return next(offsets)

    gen = generator(clock, random_bits=random_bits)
    first = [gen.next_id() for _ in range(3)]
    clock.advance_ms(1)
    second = gen.next_id()
    clock.advance_ms(5)
    third = gen.next_ids(20)
    clock.advance_ms(1)
    fourth = gen.next_id()
    decoded = [CLASSIC.decode(v) for v in [*first, second, *third, fourth]]
    assert [d.sequence for d in decoded[:3]] == [9, 10, 11]
    assert decoded[3].sequence == 0
    assert [d.sequence for d in decoded[4:24]] == list(range(15, 35))
    assert decoded[24].sequence == 3
    assert drawn == [4, 4, 4, 4]  # CLASSIC spreads 4 bits: offsets in 0..15
    ids = [d.value for d in decoded]
    assert ids == sorted(set(ids))
    assert {d.node for d in decoded} == {5}


def test_a_tick_after_a_full_one_starts_at_zero_so_full_load_keeps_every_id(clock):
    """The offset costs ids only in a tick entered after one that was not used up: under
    sustained full load every tick after the first holds 2**sequence_bits ids."""
    layout = PRESETS["js53"]  # 128 ids a tick: the layout where 15 of them would matter
    gen = SnowflakeGenerator(layout, 1, clock=clock, sleep=clock.sleep, random_bits=lambda b: 11)
    ids = gen.next_ids(128 - 11 + 128 * 3)
    ticks = Counter(layout.decode(v).tick for v in ids)
    assert sorted(ticks.values()) == [117, 128, 128, 128]
    assert ids == sorted(set(ids))
    clock.advance_ms(3)  # idle: the next tick is not right after a full one
    assert layout.decode(gen.next_id()).sequence == 11


def test_every_preset_spreads_four_bits_and_small_sequences_fewer():
    assert {name: layout.spread_bits for name, layout in PRESETS.items()} == {
        "classic": 4,
        "datacenter": 4,
        "server-business": 4,
        "sonyflake": 4,
        "js53": 4,
        "sharded": 4,
    }
    # The default: 4, at most sequence_bits - 3 (an offset never takes more than an
    # eighth of a tick), never below 0.
    assert [Layout(41, (NodePart("w", 2),), bits).spread_bits for bits in (0, 3, 5, 6, 7, 20)] == [
        0,
        0,
        2,
        3,
        4,
        4,
    ]


def test_spread_bits_in_a_layout_spec():
    assert layout_from_spec({"preset": "js53", "spread_bits": 0}).spread_bits == 0
    assert layout_from_spec({"preset": "classic", "spread_bits": 6}).spread_bits == 6
    spec = {"time_bits": 41, "node": {"worker": 10}, "sequence_bits": 12}
    assert layout_from_spec(spec).spread_bits == 4
    assert "spread 4" in CLASSIC.describe()


@pytest.mark.parametrize("bits", [-1, 13, 1.5, True, "4"])
def test_bad_spread_bits_are_refused(bits):
    with pytest.raises(LayoutError, match="spread_bits"):
        Layout(41, (NodePart("worker", 10),), 12, spread_bits=bits)


def test_spread_bits_zero_restarts_every_tick_at_zero(clock):
    flat = layout_from_spec({"preset": "classic", "spread_bits": 0})
    gen = generator(clock, flat, random_bits=lambda bits: pytest.fail("no offset is drawn"))
    values = []
    for _ in range(5):
        values.append(gen.next_id())
        clock.advance_ms(1)
    assert [flat.decode(v).sequence for v in values] == [0] * 5


def test_a_bad_spread_in_the_settings_is_check_e003():
    from django.core import checks

    layouts = {
        "js": "js53",
        "dc": "datacenter",
        "sharded": {"preset": "sharded", "spread_bits": 13},
    }
    with override_settings(SNOWID_LAYOUTS=layouts):
        found = {m.id for m in checks.run_checks(databases=[])}
    assert "django_snowid.E003" in found


def test_the_settings_layouts_spread_by_default():
    assert get_layout().spread_bits == 4 and get_layout("js").spread_bits == 4


# ------------------------------------------------------------------ W201
FLAT_LAYOUTS = {
    "js": "js53",
    "dc": "datacenter",
    "sharded": "sharded",
    "flat": {"preset": "classic", "spread_bits": 0},
    "one": {"preset": "classic", "spread_bits": 1},
}


def warnings_of(field) -> list[str]:
    return [m.id for m in field.check() if m.id == "django_snowid.W201"]


@isolate_apps("tests.testapp")
@override_settings(SNOWID_LAYOUTS=FLAT_LAYOUTS)
def test_w201_warns_where_shard_from_names_ids_whose_low_bits_are_not_spread():
    class Account(models.Model):
        id = SnowflakeAutoField(primary_key=True, layout="flat")
        token = SnowflakeField(layout="one")

        class Meta:
            app_label = "testapp"

    class Member(models.Model):  # DEFAULT_AUTO_FIELD: the default layout, 4 bits spread
        class Meta:
            app_label = "testapp"

    class Basket(models.Model):
        account = models.ForeignKey(Account, on_delete=models.CASCADE)
        member = models.ForeignKey(Member, on_delete=models.CASCADE)
        plain_id = models.BigIntegerField()
        by_account = OrderNumberField(shard_from="account_id")
        by_member = OrderNumberField(shard_from="member_id")
        by_plain = OrderNumberField(shard_from="plain_id")  # not ours: nothing known
        decimal_by_member = OrderNumberField(shard_from="member_id", packing="decimal")
        receipt = SnowflakeField(layout="sharded", shard_from="account_id")
        ticket = SnowflakeField(layout="sharded", shard_from="member_id")

        class Meta:
            app_label = "testapp"

    field = Basket._meta.get_field
    assert warnings_of(field("by_account")) == ["django_snowid.W201"]
    assert warnings_of(field("receipt")) == ["django_snowid.W201"]
    assert warnings_of(field("by_member")) == []
    assert warnings_of(field("by_plain")) == []
    assert warnings_of(field("decimal_by_member")) == []
    assert warnings_of(field("ticket")) == []
    (message,) = [m for m in field("by_account").check() if m.id == "django_snowid.W201"]
    assert "testapp.Account.id" in message.msg and "'flat'" in message.msg
    assert message.hint.endswith("python manage.py snowid_explain W201")


@isolate_apps("tests.testapp")
@override_settings(SNOWID_LAYOUTS=FLAT_LAYOUTS)
def test_w201_follows_snowflake_fields_and_sharded_layouts():
    class Source(models.Model):
        token = SnowflakeField(layout="one")
        sharded_plain = SnowflakeField(layout="sharded")  # no shard_from: its shard is 0
        user_id = models.BigIntegerField()
        sharded_by_user = SnowflakeField(layout="sharded", shard_from="user_id")

        class Meta:
            app_label = "testapp"

    class Target(models.Model):
        token = models.BigIntegerField()
        source = models.ForeignKey(Source, on_delete=models.CASCADE)
        plain = SnowflakeField(layout="sharded", shard_from="source_id")  # default layout
        by_token = OrderNumberField(shard_from="token")

        class Meta:
            app_label = "testapp"

    class Via(models.Model):
        one = models.ForeignKey(
            Source, to_field="token", on_delete=models.CASCADE, related_name="+"
        )
        zero = models.ForeignKey(
            Source, to_field="sharded_plain", on_delete=models.CASCADE, related_name="+"
        )
        user = models.ForeignKey(
            Source, to_field="sharded_by_user", on_delete=models.CASCADE, related_name="+"
        )
        by_one = OrderNumberField(shard_from="one_id", packing="decimal", stream="a")
        by_zero = OrderNumberField(shard_from="zero_id", stream="b")
        by_user = OrderNumberField(shard_from="user_id", stream="c")

        class Meta:
            app_label = "testapp"

    assert warnings_of(Target._meta.get_field("plain")) == []
    assert warnings_of(Target._meta.get_field("by_token")) == []  # a plain integer column
    assert warnings_of(Via._meta.get_field("by_one")) == ["django_snowid.W201"]
    assert warnings_of(Via._meta.get_field("by_zero")) == ["django_snowid.W201"]
    assert warnings_of(Via._meta.get_field("by_user")) == []  # the user's low bits: unknown


def test_w201_is_silent_on_the_test_models():
    from django.core import checks

    assert "django_snowid.W201" not in {m.id for m in checks.run_checks(databases=[])}
