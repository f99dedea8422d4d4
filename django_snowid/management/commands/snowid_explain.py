"""``manage.py snowid_explain E202``: a system check's entry of the reference, as text."""

from __future__ import annotations

import difflib
import re
import textwrap
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ...checks import CHECK_IDS
from ...core.echo import shown

_ROLES = (
    (re.compile(r"``(.+?)``"), r"\1"),
    (re.compile(r":doc:`/?([^`]+)`"), r"docs/\1.rst"),
)


def plain(text: str) -> str:
    for role, replacement in _ROLES:
        text = role.sub(replacement, text)
    return text


def check_id(text: str) -> str:
    id_ = f"django_snowid.{text.strip().rpartition('.')[2].upper()}"
    if id_ in CHECK_IDS:
        return id_
    close = difflib.get_close_matches(id_, CHECK_IDS, n=3)
    guess = f" Did you mean {', '.join(c.removeprefix('django_snowid.') for c in close)}?"
    raise CommandError(
        f"{shown(text)} is no check id of django-snowid.{guess if close else ''} "
        "Without an id, every one is listed."
    )


class Command(BaseCommand):
    help = (
        "Print what a system check of django-snowid means and how to fix it: the entry of "
        "the reference's checks page (every check's hint ends with this command)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "ids",
            nargs="*",
            metavar="ID",
            help="Check ids, such as E202 or django_snowid.E202 (default: every one).",
        )

    def handle(self, *args: Any, ids: list[str], **options: Any) -> None:
        chosen = [check_id(text) for text in ids] or list(CHECK_IDS)
        for index, id_ in enumerate(chosen):
            kind = "error" if id_.rpartition(".")[2].startswith("E") else "warning"
            if index:
                self.stdout.write("")
            self.stdout.write(f"{id_} ({kind})")
            self.stdout.write(textwrap.fill(plain(CHECK_IDS[id_]), 88))
