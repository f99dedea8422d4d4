"""The package's shape can only improve: prose (docstring and comment lines) against code
lines, and string dispatch (``==``/``!=`` against a store or kind name) outside the
settings and the stores."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import django_snowid

PACKAGE = Path(django_snowid.__file__).parent
DISPATCH = re.compile(r"""(==|!=)\s*["'](order|snowflake|redis|slot|database|memory)["']""")
SKIPPED = (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)

#: Ceilings: lower them as the package improves, never raise them.
MOST_PROSE = 0.146
MOST_DISPATCH_SITES = 0


def _sources() -> list[Path]:
    return [f for f in sorted(PACKAGE.rglob("*.py")) if "migrations" not in f.parts]


def _lines(source: str) -> tuple[int, int]:
    """(prose lines, code lines) of ``source``: a string that starts a statement is a
    docstring, a comment on a docstring line counts once."""
    prose: set[int] = set()
    comments: set[int] = set()
    code: set[int] = set()
    previous = None
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        lines = range(token.start[0], token.end[0] + 1)
        if token.type == tokenize.COMMENT:
            comments.add(token.start[0])
        elif token.type == tokenize.STRING and previous in (*SKIPPED[1:4], None):
            prose.update(lines)
        elif token.type not in SKIPPED:
            code.update(lines)
        if token.type not in (tokenize.NL, tokenize.COMMENT):
            previous = token.type
    return len(prose | comments), len(code - prose)


def prose_ratio() -> float:
    counts = [_lines(f.read_text()) for f in _sources()]
    return sum(p for p, _ in counts) / sum(c for _, c in counts)


def dispatch_sites() -> list[str]:
    sites = []
    for f in _sources():
        relative = f.relative_to(PACKAGE)
        if relative.name == "conf.py" or "stores" in relative.parts:
            continue
        for number, line in enumerate(f.read_text().splitlines(), 1):
            if DISPATCH.search(line) and not line.strip().startswith("#"):
                sites.append(f"{relative}:{number}")
    return sites


def test_prose_does_not_grow():
    assert round(prose_ratio(), 3) <= MOST_PROSE


def test_no_new_string_dispatch():
    sites = dispatch_sites()
    assert len(sites) <= MOST_DISPATCH_SITES, sites


def test_the_measure_counts_docstrings_comments_and_dispatch():
    source = '"""Doc\nstring."""\n# note\nx = 1  # code\nif kind == "order":\n    pass\n'
    assert _lines(source) == (4, 3)
    assert DISPATCH.search('if kind == "order":')
