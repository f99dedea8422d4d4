"""What the built distributions hold (``make package``): the wheel holds the app (its
templates, static files, migrations and ``py.typed``) and nothing else of the repository
(no tests, benchmarks or example project); the sdist holds the app, the docs' sources, the
tests and the changelog. Usage: ``python scripts/check_dist.py dist``."""

from __future__ import annotations

import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_files() -> set[str]:
    """The files of ``django_snowid`` in the work tree that a wheel must hold."""
    wanted = set()
    for path in (ROOT / "django_snowid").rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            wanted.add(str(path.relative_to(ROOT)))
    return wanted


def check_wheel(wheel: Path, version: str) -> list[str]:
    problems = []
    names = set(zipfile.ZipFile(wheel).namelist())
    ours = {n for n in names if not n.startswith(f"django_snowid-{version}.dist-info/")}
    missing = package_files() - ours
    if missing:
        problems.append(f"{wheel.name} lacks {sorted(missing)}")
    strangers = {n for n in ours if not n.startswith("django_snowid/")}
    if strangers:
        problems.append(f"{wheel.name} holds files outside django_snowid/: {sorted(strangers)}")
    for must in (
        "django_snowid/py.typed",
        "django_snowid/migrations/0001_initial.py",
        "django_snowid/sequences/migrations/0001_initial.py",
        "django_snowid/templates/admin/django_snowid/decode.html",
        "django_snowid/static/django_snowid/decode.css",
    ):
        if must not in names:
            problems.append(f"{wheel.name} lacks {must}")
    metadata = Parser().parsestr(
        zipfile.ZipFile(wheel).read(f"django_snowid-{version}.dist-info/METADATA").decode()
    )
    classifiers = metadata.get_all("Classifier") or []
    for classifier in (
        "Framework :: Django :: 4.2",
        "Framework :: Django :: 5.2",
        "Framework :: Django :: 6.0",
        "Typing :: Typed",
    ):
        if classifier not in classifiers:
            problems.append(f"{wheel.name}: classifier {classifier!r} missing")
    if metadata["Version"] != version:
        problems.append(f"{wheel.name}: version {metadata['Version']} != {version}")
    return problems


def check_sdist(sdist: Path, version: str) -> list[str]:
    top = f"django_snowid-{version}/"
    with tarfile.open(sdist) as archive:
        names = {n.removeprefix(top) for n in archive.getnames()}
    problems = []
    for must in (
        "pyproject.toml",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "docs/conf.py",
        "docs/index.rst",
        "tests/project/test_docs_examples.py",
        "django_snowid/py.typed",
    ):
        if must not in names:
            problems.append(f"{sdist.name} lacks {must}")
    if any(n.startswith("docs/_build") for n in names):
        problems.append(f"{sdist.name} holds the built docs")
    return problems


def main(dist: Path) -> int:
    import django_snowid

    version = django_snowid.__version__
    wheels = list(dist.glob(f"django_snowid-{version}-py3-none-any.whl"))
    sdists = list(dist.glob(f"django_snowid-{version}.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        print(f"expected one wheel and one sdist of {version} in {dist}: {sorted(dist.iterdir())}")
        return 1
    problems = check_wheel(wheels[0], version) + check_sdist(sdists[0], version)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{wheels[0].name} and {sdists[0].name}: hold what they should")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "dist")))
