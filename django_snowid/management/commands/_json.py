"""The JSON the commands print with ``--json`` (not a command: the leading underscore
hides it from ``manage.py``)."""

from __future__ import annotations

import json
from typing import Any


def json_text(data: Any) -> str:
    """``data`` as indented JSON, its text as written (“default”, not ``\\u201c``)."""
    return json.dumps(data, indent=2, ensure_ascii=False)
