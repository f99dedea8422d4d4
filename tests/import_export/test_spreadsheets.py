"""django-import-export: ids, order numbers and relations to them leave as text cells (as
tablib writes XLSX and ODS), exact in CSV, and come back exactly: a round trip updates
every row in place."""

from __future__ import annotations

import io
import zipfile

import pytest
from import_export.formats.base_formats import CSV, ODS, XLSX

from tests.project.test_hostile_input import HOSTILE
from tests.testapp.models import Customer, Parcel, Product, Purchase, Shopper, Tag, Ticket
from tests.testapp.resources import (
    CustomerResource,
    ParcelResource,
    PurchaseResource,
    TagResource,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]

FORMATS = [pytest.param(XLSX, id="xlsx"), pytest.param(ODS, id="ods"), pytest.param(CSV, id="csv")]


def export(resource, fmt) -> bytes | str:
    """What the admin's export writes (native types for the binary formats, as it asks)."""
    return fmt().export_data(resource.export(force_native_type=fmt().is_binary()))


def import_back(resource, fmt, data):
    """The result of importing ``data`` (errors collected, not raised)."""
    return resource.import_data(fmt().create_dataset(data), dry_run=False, raise_errors=False)


def xlsx_cells(data: bytes) -> list[list[tuple[str, object]]]:
    """Each cell of the first sheet: (openpyxl's type, value); "s" is text, "n" a number."""
    from openpyxl import load_workbook

    sheet = load_workbook(io.BytesIO(data)).active
    return [[(cell.data_type, cell.value) for cell in row] for row in sheet.iter_rows()]


def ods_cells(data: bytes) -> list[list[tuple[str, str]]]:
    """Each cell of the first table: (its office:value-type, its text)."""
    from odf import table, teletype
    from odf.opendocument import load

    document = load(io.BytesIO(data))
    (sheet, *_) = document.spreadsheet.getElementsByType(table.Table)
    return [
        [
            (cell.getAttribute("valuetype"), teletype.extractText(cell))
            for cell in row.getElementsByType(table.TableCell)
        ]
        for row in sheet.getElementsByType(table.TableRow)
    ]


@pytest.fixture
def purchases():
    shoppers = [Shopper.objects.create(name=f"s{i}") for i in range(3)]
    return [Purchase.objects.create(shopper=shopper) for shopper in shoppers]


def as_text(purchase: Purchase) -> list[str]:
    return [str(purchase.pk), str(purchase.shopper_id), str(purchase.number), str(purchase.receipt)]


def test_xlsx_cells_are_text(purchases):
    header, *rows = xlsx_cells(export(PurchaseResource(), XLSX))
    assert [value for _, value in header] == ["id", "shopper", "number", "receipt"]
    assert rows == [[("s", text) for text in as_text(p)] for p in purchases]


def test_ods_cells_are_text(purchases):
    header, *rows = ods_cells(export(PurchaseResource(), ODS))
    assert [text for _, text in header] == ["id", "shopper", "number", "receipt"]
    assert rows == [[("string", text) for text in as_text(p)] for p in purchases]


def test_csv_is_exact(purchases):
    lines = export(PurchaseResource(), CSV).splitlines()
    assert lines == ["id,shopper,number,receipt", *(",".join(as_text(p)) for p in purchases)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_round_trip_updates_every_row_in_place(purchases, fmt):
    before = sorted(Purchase.objects.values_list("pk", "shopper_id", "number", "receipt"))
    result = import_back(PurchaseResource(), fmt, export(PurchaseResource(), fmt))
    assert not result.has_errors() and not result.has_validation_errors()
    assert (result.totals["update"], result.totals["new"]) == (len(purchases), 0)
    after = sorted(Purchase.objects.values_list("pk", "shopper_id", "number", "receipt"))
    assert after == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_foreign_keys_to_order_numbers_and_snowflake_columns_come_back(purchases, fmt):
    tickets = [Ticket.objects.create(title=f"t{i}") for i in range(2)]
    for purchase, ticket in zip(purchases, [*tickets, None], strict=True):
        Parcel.objects.create(purchase=purchase, ticket=ticket)
    before = sorted(Parcel.objects.values_list("pk", "purchase_id", "ticket_id"))
    data = export(ParcelResource(), fmt)
    if fmt is XLSX:
        assert {kind for row in xlsx_cells(data)[1:] for kind, value in row if value} == {"s"}
    Parcel.objects.update(ticket=None)  # the import must set them again
    result = import_back(ParcelResource(), fmt, data)
    assert not result.has_errors() and not result.has_validation_errors(), result.invalid_rows
    assert (result.totals["update"], result.totals["new"]) == (3, 0)
    assert sorted(Parcel.objects.values_list("pk", "purchase_id", "ticket_id")) == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_many_to_many_keys_come_back(fmt):
    products = [Product.objects.create(name=f"p{i}") for i in range(3)]
    tag = Tag.objects.create(name="tea")
    tag.products.set(products[:2])
    data = export(TagResource(), fmt)
    tag.products.clear()
    result = import_back(TagResource(), fmt, data)
    assert not result.has_errors() and not result.has_validation_errors()
    assert set(tag.products.all()) == set(products[:2])


def test_sequence_values_are_number_cells_while_a_spreadsheet_keeps_them(settings):
    settings.SNOWID_SEQUENCE_BACKEND = "database"
    customers = [Customer.objects.create() for _ in range(2)]
    Customer.objects.filter(pk=customers[1].pk).update(number=2**60)
    _, *rows = xlsx_cells(export(CustomerResource(), XLSX))
    assert [row[1] for row in rows] == [("n", customers[0].number), ("s", str(2**60))]
    result = import_back(CustomerResource(), XLSX, export(CustomerResource(), XLSX))
    assert (result.totals["update"], result.totals["new"]) == (2, 0)
    assert Customer.objects.get(pk=customers[1].pk).number == 2**60


def test_a_row_without_an_id_gets_a_new_one(purchases):
    data = "id,shopper,number,receipt\n" + f",{purchases[0].shopper_id},,\n"
    result = import_back(PurchaseResource(), CSV, data)
    assert not result.has_errors() and not result.has_validation_errors(), result.invalid_rows
    assert (result.totals["update"], result.totals["new"]) == (0, 1)
    new = Purchase.objects.exclude(pk__in=[p.pk for p in purchases]).get()
    assert new.pk > 2**53 and new.number % 16 == new.shopper_id % 16


def rewritten_by_a_spreadsheet(purchase: Purchase) -> bytes:
    """An XLSX whose shopper column a spreadsheet stored as number cells (a float)."""
    from openpyxl import Workbook

    book = Workbook()
    book.active.append(["id", "shopper", "number", "receipt"])
    book.active.append([str(purchase.pk), float(purchase.shopper_id), str(purchase.number), None])
    stream = io.BytesIO()
    book.save(stream)
    return stream.getvalue()


def field_errors(result) -> list[str]:
    return [
        str(message)
        for row in result.invalid_rows
        for message in row.field_specific_errors.values()
    ]


def test_a_number_cell_a_spreadsheet_rounded_is_refused_not_imported(purchases):
    purchase = purchases[0]
    result = import_back(PurchaseResource(), XLSX, rewritten_by_a_spreadsheet(purchase))
    assert result.totals["update"] == 0 and result.totals["new"] == 0
    (message,) = field_errors(result)
    assert "came from a number cell, which keeps 15 significant digits" in message
    assert "Format the column as text" in message
    assert Purchase.objects.get(pk=purchase.pk).shopper_id == purchase.shopper_id


@pytest.mark.parametrize(
    "cell, message",
    [
        ("9.16251538245038E+17", "a spreadsheet rewrote as a rounded number"),
        ("abc", "is not an id: only the digits 0-9"),
        (str(2**63), "out of range for layout 'default'"),
    ],
)
def test_bad_foreign_key_cells_name_the_problem(purchases, cell, message):
    purchase = purchases[0]
    data = f"id,shopper,number,receipt\n{purchase.pk},{cell},{purchase.number},\n"
    result = import_back(PurchaseResource(), CSV, data)
    errors = field_errors(result) + [str(e.error) for _, row in result.row_errors() for e in row]
    assert any(message in error for error in errors), errors
    assert Purchase.objects.get(pk=purchase.pk).shopper_id == purchase.shopper_id


def test_a_mistyped_check_digit_is_refused(settings):
    settings.SNOWID_ORDER_CHECK_DIGIT = "damm"
    settings.SNOWID_ORDER_SEQUENCE_DIGITS = 4
    purchase = Purchase.objects.create(shopper=Shopper.objects.create(name="b"))
    text = str(purchase.receipt)
    mistyped = text[:-4] + str((int(text[-4]) + 3) % 10) + text[-3:]
    data = f"id,receipt\n{purchase.pk},{mistyped}\n"
    result = import_back(PurchaseResource(), CSV, data)
    assert result.totals["update"] == 0
    assert any("fails its check digit" in error for error in field_errors(result))


def test_a_many_to_many_key_of_no_row_is_refused(purchases):
    tag = Tag.objects.create(name="tea")
    missing = purchases[0].pk  # a Snowflake id, but of no product
    result = import_back(TagResource(), CSV, f"id,name,products\n{tag.pk},tea,{missing}\n")
    errors = [str(e.error) for _, row in result.row_errors() for e in row]
    assert any(f"No product with pk {missing}" in error for error in errors), errors


def test_the_xlsx_file_holds_the_digits_themselves(purchases):
    """Not only openpyxl's reading: the sheet's XML holds each value as a text cell."""
    data = export(PurchaseResource(), XLSX)
    with zipfile.ZipFile(io.BytesIO(data)) as book:
        sheet = book.read("xl/worksheets/sheet1.xml").decode()
    for text in (text for p in purchases for text in as_text(p)):
        assert f'" t="inlineStr"><is><t>{text}</t></is></c>' in sheet, text


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_cells_get_our_refusal(text):
    from django_snowid.import_export import SnowflakeWidget

    if text == "":
        assert SnowflakeWidget().clean(text) is None  # an empty cell: no value
        return
    with pytest.raises(ValueError) as refused:
        SnowflakeWidget().clean(text)
    assert "is not an id" in str(refused.value) or "rounded number" in str(refused.value)
