"""The admin's import and export (``ImportExportModelAdmin`` with our resource): an XLSX
file written by the admin holds text cells, and importing it back through the admin's
confirm page updates every row in place."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from import_export.formats.base_formats import XLSX

from tests.testapp.models import Purchase, Shopper
from tests.testapp.resources import site

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_orders")]
URL = "/spreadsheets/testapp/purchase"
COLUMNS = ("id", "shopper", "number", "receipt")


def test_an_xlsx_round_trip_through_the_admin(admin_client):
    from openpyxl import load_workbook

    purchases = [
        Purchase.objects.create(shopper=Shopper.objects.create(name=f"s{i}")) for i in range(3)
    ]
    before = sorted(Purchase.objects.values_list(*COLUMNS))
    model_admin = site._registry[Purchase]

    chosen = {f"purchaseresource_{name}": "on" for name in COLUMNS}
    export_format = str(model_admin.get_export_formats().index(XLSX))
    exported = admin_client.post(
        f"{URL}/export/", {"format": export_format, "resource": "0", **chosen}
    )
    assert exported.status_code == 200, exported.content[:500]
    sheet = load_workbook(io.BytesIO(exported.content)).active
    rows = [[(cell.data_type, cell.value) for cell in row] for row in sheet.iter_rows(min_row=2)]
    assert sorted(rows) == sorted([("s", str(value)) for value in row] for row in before)

    upload = SimpleUploadedFile("purchases.xlsx", exported.content)
    import_format = str(model_admin.get_import_formats().index(XLSX))
    preview = admin_client.post(f"{URL}/import/", {"format": import_format, "import_file": upload})
    assert preview.status_code == 200
    result = preview.context["result"]
    assert not result.has_errors() and not result.has_validation_errors()
    assert (result.totals["update"], result.totals["new"]) == (len(purchases), 0)

    confirmed = admin_client.post(f"{URL}/process_import/", preview.context["confirm_form"].initial)
    assert confirmed.status_code == 302
    assert sorted(Purchase.objects.values_list(*COLUMNS)) == before
