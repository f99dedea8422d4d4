"""Sphinx configuration of the django-snowid documentation (``make docs``).

Sphinx, as Django and django-mysql use: reST, cross-references checked at build time
(``-n``), warnings as errors (``-W``), and reference pages generated from the code by the
parts that ``_ext/snowid_generated.py`` writes into the pages
(the build fails when one is out of date).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "docs" / "_ext")]

_pyproject = (ROOT / "pyproject.toml").read_text()

project = "django-snowid"
author = "django-snowid contributors"
copyright = "django-snowid contributors"
release = re.search(r'^version = "(.+)"$', _pyproject, re.MULTILINE)[1]
version = release

extensions = ["snowid_generated"]
exclude_patterns = ["_build"]
html_theme = "furo"
html_title = f"django-snowid {release}"
html_static_path = ["_static"]
pygments_style = "sphinx"
nitpicky = True
