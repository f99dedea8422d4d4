"""Every example of the documentation (docs/**/*.rst) and of the README runs, in the
Quick start's project.

The project is built as ``test_readme_quickstart.py`` builds it, from the README's own
Quick start blocks (``<!-- quickstart: ... -->``); docs/quickstart.rst shows the same
blocks (marked ``.. quickstart: ...``) and must say the same. Then, as CONTRIBUTING.md
says:

- ``.. code-block:: python`` with ``:caption: <path>`` is APPENDED to that file of the
  project (all pages' blocks into the one project);
- ``.. code-block:: python`` without a caption and ``.. code-block:: pycon`` run in order,
  per page, in one ``manage.py shell`` process, after makemigrations and migrate (outputs
  are not compared as text; one that Python reads back, a dict, a list, a string, must
  have the types and keys of what the statement returns, and a ``True`` or ``False``
  its value);
- in ``.. code-block:: console``, each line ``$ python manage.py ...`` or ``$ python -c ...``
  is run and must exit 0;
- other languages (sql, text, ini, yaml, bash, shell) are not run;
- a block preceded by the comment ``.. not run: <reason>`` is skipped; the reason is
  required.

In the README (Markdown), ```` ```python ````/```` ```pycon ```` blocks outside the Quick
start run as a page of their own, ```` ```console ```` lines as above, and
``<!-- not run: <reason> -->`` skips the next block.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import ROOT

# The examples share one project (the module-scoped fixture): one worker runs them all.
pytestmark = pytest.mark.xdist_group("docs-project")

DOCS = ROOT / "docs"
README = ROOT / "README.md"
RUN_LANGUAGES = {"python", "pycon", "console"}
QUIET_LANGUAGES = {"text", "sql", "ini", "yaml", "bash", "shell", "toml", "markdown", "json"}
DIRECTIVE = re.compile(r"^(?P<indent>\s*)\.\. code-block:: (?P<language>\S+)\s*$")
NOT_RUN = re.compile(r"^\s*\.\. not run:(?P<reason>.*)$")
QUICKSTART_RST = re.compile(r"^\s*\.\. quickstart: (?P<action>\w+) ?(?P<name>\S*)\s*$")
MANAGE = "$ python manage.py "
PYTHON_C = "$ python -c "


@dataclass
class Block:
    page: str
    line: int
    language: str
    text: str
    caption: str = ""
    skipped: str = ""  # the reason of a ``not run`` comment
    quickstart: tuple[str, str] | None = None

    @property
    def label(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Page:
    name: str
    blocks: list[Block] = field(default_factory=list)

    def run(self, kinds: set[str]) -> list[Block]:
        return [
            b
            for b in self.blocks
            if b.language in kinds and not b.skipped and b.quickstart is None and not b.caption
        ]


def parse_rst(path: Path) -> Page:
    """The code blocks of one reST page, with their captions and markers."""
    name = str(path.relative_to(ROOT))
    lines = path.read_text().splitlines()
    page = Page(name)
    skip, quickstart = "", None
    i = 0
    while i < len(lines):
        line = lines[i]
        if marker := NOT_RUN.match(line):
            skip = marker["reason"].strip()
            assert skip, f"{name}:{i + 1}: '.. not run:' needs a reason"
            i += 1
            continue
        if marker := QUICKSTART_RST.match(line):
            quickstart = (marker["action"], marker["name"])
            i += 1
            continue
        directive = DIRECTIVE.match(line)
        if not directive:
            i += 1
            continue
        start, indent = i + 1, len(directive["indent"])
        i += 1
        caption = ""
        while i < len(lines) and lines[i].strip().startswith(":"):
            option = lines[i].strip()
            if option.startswith(":caption:"):
                caption = option.removeprefix(":caption:").strip()
            i += 1
        body: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent
        ):
            body.append(lines[i])
            i += 1
        content = [b for b in body if b.strip()]
        cut = min(len(b) - len(b.lstrip()) for b in content) if content else 0
        text = "\n".join(b[cut:] for b in body).strip("\n") + "\n"
        page.blocks.append(
            Block(name, start, directive["language"], text, caption, skip, quickstart)
        )
        skip, quickstart = "", None
    return page


README_BLOCK = re.compile(
    r"(?:<!-- (?P<marker>quickstart|not run): ?(?P<args>[^>]*?) ?-->\n)?"
    r"^```(?P<language>\w*)\n(?P<text>.*?)^```",
    re.DOTALL | re.MULTILINE,
)


def parse_readme() -> Page:
    text = README.read_text()
    page = Page("README.md")
    for match in README_BLOCK.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        block = Block(page.name, line, match["language"] or "text", match["text"])
        if match["marker"] == "quickstart":
            action, _, name = match["args"].partition(" ")
            block.quickstart = (action, name)
        elif match["marker"] == "not run":
            block.skipped = match["args"].strip()
            assert block.skipped, f"README.md:{line}: 'not run' needs a reason"
        page.blocks.append(block)
    return page


def doc_pages() -> list[Page]:
    paths = sorted(p for p in DOCS.rglob("*.rst") if "_build" not in p.parts)
    return [parse_rst(path) for path in paths]


def all_pages() -> list[Page]:
    return [parse_readme(), *doc_pages()]


def pycon_chunks(text: str) -> list[tuple[str, str | None]]:
    """An interactive session as (statement, the output shown after it, or None)."""
    chunks: list[tuple[list[str], list[str]]] = []
    for line in text.splitlines():
        if line.startswith(">>> ") or line == ">>>":
            chunks.append(([line[4:]], []))
        elif (line.startswith("... ") or line == "...") and chunks and not chunks[-1][1]:
            chunks[-1][0].append(line[4:])
        elif chunks and line.strip():
            chunks[-1][1].append(line)
    return [
        ("\n".join(source) + "\n", "\n".join(output) if output else None)
        for source, output in chunks
    ]


# ----------------------------------------------------------------- quick checks
def test_the_blocks_are_of_known_languages_and_captions_name_project_files():
    for page in all_pages():
        for block in page.blocks:
            assert block.language in RUN_LANGUAGES | QUIET_LANGUAGES, block.label
            if block.caption:
                assert block.language == "python", block.label
                assert not block.caption.startswith("/") and ".." not in block.caption
                assert block.caption.endswith(".py"), block.label


def test_the_docs_quick_start_is_the_readme_s():
    readme = [b for b in parse_readme().blocks if b.quickstart]
    (quickstart,) = [p for p in doc_pages() if p.name == "docs/quickstart.rst"]
    docs = [b for b in quickstart.blocks if b.quickstart]
    assert [b.quickstart for b in docs] == [b.quickstart for b in readme]
    assert [b.text for b in docs] == [b.text for b in readme]


def test_every_page_runs_examples_or_says_why_not():
    """A page's python blocks are run, or skipped with a reason (never silently)."""
    for page in all_pages():
        for block in page.blocks:
            if block.language in RUN_LANGUAGES and block.skipped:
                assert len(block.skipped) > 10, block.label


# ------------------------------------------------------------------- the project
def run(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(ROOT)  # the django_snowid under test, not another install
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        **kwargs,
    )


def ok(done: subprocess.CompletedProcess[str], what: str) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, f"{what}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The Quick start's project, with every page's captioned blocks appended."""
    import redis
    from django.conf import settings

    where = tmp_path_factory.mktemp("docs-project")
    ok(run(["-m", "django", "startproject", "mysite", "."], where), "startproject")
    ok(run(["manage.py", "startapp", "shop"], where), "startapp")
    for block in parse_readme().blocks:
        if block.quickstart is None:
            continue
        action, name = block.quickstart
        if action == "append":
            with open(where / name, "a") as out:
                out.write("\n" + block.text)
        elif action == "write":
            (where / name).write_text(block.text)
    for page in doc_pages():
        for block in page.blocks:
            if block.caption and not block.skipped and block.quickstart is None:
                target = where / block.caption
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "a") as out:
                    out.write(f"\n\n# --- {block.label}\n{block.text}")
    prefix = f"snowid-docs-{uuid.uuid4().hex[:8]}"
    with open(where / "mysite/settings.py", "a") as out:
        # Only for the test: the suite's Redis, under keys of its own.
        out.write(
            f'\nCACHES["snowid"]["LOCATION"] = {settings.REDIS_URL!r}\n'
            f"SNOWID_REDIS_KEY_PREFIX = {prefix!r}\n"
        )
    ok(run(["manage.py", "makemigrations"], where), "makemigrations")
    ok(run(["manage.py", "migrate", "-v", "0"], where), "migrate")
    ok(run(["manage.py", "check", "--fail-level", "ERROR"], where), "check")
    try:
        yield where
    finally:
        client = redis.Redis.from_url(settings.REDIS_URL)
        for key in client.scan_iter(match=f"*{prefix}*"):
            client.delete(key)


# Outputs are not compared as text (ids and times differ at every run), but an output
# that Python can read back (a dict, a list, a string, a number) must have the shape of
# what the statement returns: the same types, the same keys, the same booleans.
RUNNER = """
import ast, sys, traceback
namespace = {"__name__": "__docs__"}


def shape(value):
    if isinstance(value, bool):  # a yes or no does not change between runs: compared
        return value
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), shape(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple, set, frozenset)):
        return (type(value).__name__, frozenset(shape(v) for v in value))
    return type(value).__name__


def shown(output):
    try:
        return ast.literal_eval(output)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return NotImplemented  # a repr Python cannot read back: not compared


for label, chunks in BLOCKS:
    for code, output in chunks:
        try:
            tree = ast.parse(code)
            expected = NotImplemented if output is None else shown(output)
            if expected is not NotImplemented and len(tree.body) == 1 and isinstance(
                tree.body[0], ast.Expr
            ):
                got = eval(compile(ast.Expression(tree.body[0].value), label, "eval"), namespace)
                if shape(got) != shape(expected):
                    raise AssertionError(
                        f"{code.strip()}: the page shows {output}, the code returns {got!r}"
                    )
            else:
                exec(compile(code, label, "exec"), namespace)
        except BaseException:
            print(f"EXAMPLE FAILED: {label}", file=sys.stderr)
            traceback.print_exc()
            sys.exit(1)
"""


def page_names() -> list[str]:
    return [
        page.name
        for page in all_pages()
        if page.run({"python", "pycon"})
        or any(MANAGE in b.text or PYTHON_C in b.text for b in page.run({"console"}))
    ]


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.parametrize("name", page_names())
def test_the_examples_of_a_page_run(project, name):
    """Every example of a page runs in the Quick start's project, console ones as commands.

    Slow: a page of commands (the commands reference) starts each in a process of its own."""
    (page,) = [p for p in all_pages() if p.name == name]
    blocks = [
        (b.label, [(b.text, None)] if b.language == "python" else pycon_chunks(b.text))
        for b in page.run({"python", "pycon"})
    ]
    if blocks:
        script = f"BLOCKS = {blocks!r}\n{RUNNER}"
        ok(run(["manage.py", "shell", "-c", script], project), f"the examples of {name}")
    for block in page.run({"console"}):
        for line in block.text.splitlines():
            if line.startswith(MANAGE):
                args = ["manage.py", *shlex.split(line.removeprefix(MANAGE))]
                ok(run(args, project), f"{block.label}: {line}")
            elif line.startswith(PYTHON_C):
                ok(run(shlex.split(line.removeprefix("$ python ")), project), block.label)


def test_links_into_the_docs_name_pages_that_exist():
    """The README's links to the docs' sources and the code's mentions of them
    (``docs/workers.rst``) name pages that exist; no text of the code sends a person to
    a site that is not published."""
    texts = [p.read_text() for p in (ROOT / "django_snowid").rglob("*.py")]
    assert not [t for t in texts if "readthedocs.io" in t]
    pages = {page for text in texts for page in re.findall(r"\bdocs/([\w/-]+)\.rst", text)}
    assert {"workers", "orders"} <= pages
    readme = set(re.findall(r"\]\(docs/([\w/-]+)\.rst\)", README.read_text()))
    assert {"workers", "reference/checks", "orders"} <= readme
    pages |= readme
    for page in pages:
        assert (DOCS / f"{page}.rst").exists(), page
