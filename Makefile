# The two commands a newcomer runs: `make demo` and `make test`. `make bench` measures.
.DEFAULT_GOAL := help
SHELL := /bin/bash

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# MariaDB tests need mysqlclient, which compiles against the MariaDB client headers
# (Debian: libmariadb-dev). Without them the MariaDB tests are skipped, loudly (failed in CI).
MYSQL_EXTRA := $(shell pkg-config --exists libmariadb 2>/dev/null || pkg-config --exists mysqlclient 2>/dev/null && echo ,mysql)
# A Python 3.12 interpreter, if this machine has one, runs the suite on Django 6.x too.
# Looked for once: the sub-makes of `make test` inherit it.
ifeq ($(origin PY312),undefined)
PY312 := $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do "$$p" -c '' 2>/dev/null && { echo "$$p"; break; }; done)
endif
export PY312
PYTEST_FLAGS ?= -q

.PHONY: help demo screenshots test test-stages test-lane-main test-lane-other-djangos typecheck test-sqlite test-postgresql test-mariadb test-isolation test-django42 \
        test-django6 bench lint clean docs package

help:
	@echo "make demo   install the app and Django only (.venv-demo), migrate the example shop"
	@echo "            (SQLite), create rows, and print how to start its server and log in"
	@echo "make test   set up and run the whole test suite (SQLite, PostgreSQL, MariaDB), build"
	@echo "            the docs and the package"
	@echo "make docs   build the documentation site (docs/_build/html), strictly"
	@echo "make bench  run the benchmarks"
	@echo "make screenshots  the docs' admin screenshots (docs/_static/screenshots), headless Chromium"
	@echo "make lint   ruff and mypy (make typecheck: mypy alone)"

# ------------------------------------------------------------------ setup
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e ".[test,bench,dev$(MYSQL_EXTRA)]"
	touch $@

# ------------------------------------------------------------------- demo
# The demo needs the app and its dependencies (Django, django-redis), nothing of the
# test, benchmark or lint extras: a virtualenv of its own.
DEMO_VENV ?= .venv-demo
$(DEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q -e .
	touch $@
demo: $(DEMO_VENV)/.installed
	cd example_project && ../$(DEMO_VENV)/bin/python manage.py migrate --noinput -v 0
	cd example_project && ../$(DEMO_VENV)/bin/python manage.py shop_demo

# The documentation's admin screenshots, from the example shop in a fresh database, taken
# with the headless Chromium the browser tests use (SNOWID_CHROMIUM, or chromium on PATH).
SCREENSHOTS_DIR ?= docs/_static/screenshots
screenshots: $(BIN)/.installed
	$(BIN)/python example_project/screenshots.py $(SCREENSHOTS_DIR)

# ------------------------------------------------------------------ tests
# Tests run side by side (pytest-xdist): the quick ones on XDIST workers, then the load
# tests (marked slow: several processes, real servers stopped and started, mostly waiting)
# on LOAD_XDIST workers. Tests that share something server-wide or a module's costly
# fixture share an xdist_group and run on one worker. `XDIST= LOAD_XDIST=` runs each
# stage in one process.
XDIST ?= -n 4 --dist loadgroup
LOAD_XDIST ?= -n 4 --dist loadgroup
# The other Django versions' lane fills the CPU the main lane leaves: fewer workers.
OTHER_XDIST ?= -n 3 --dist loadgroup
# The 20 slowest tests of each run; tests/conftest.py names those over 20 s whose
# docstring does not say why ("Slow: ...").
DURATIONS ?= --durations=20
# Each stage's time, printed at the end of `make test`, failed or not (scripts/stage).
export STAGE_TIMES ?= $(CURDIR)/.stage-times
STAGE := scripts/stage
# With this set, Python keeps no bytecode and every pytest worker compiles and rewrites
# every test module again.
unexport PYTHONDONTWRITEBYTECODE
# $(call suite,VENV BIN,STAGE NAME,ENVIRONMENT,MARKS,XDIST): one pytest run, timed.
suite = $(STAGE) "Django $$($(1)/python -m django --version), $(2)" env $(3) \
    $(1)/pytest $(PYTEST_FLAGS) -p no:cacheprovider $(5) $(DURATIONS) -m "$(4)"

test:
	@rm -f $(STAGE_TIMES)
	@$(MAKE) --no-print-directory test-stages; status=$$?; $(STAGE) --summary; \
	    if [ $$status -eq 0 ]; then echo "make test: every run passed"; fi; exit $$status

# Two lanes side by side, each a stage at a time: the main Django (.venv) with the load
# tests, and the other Django versions. The second runs at a lower priority (nice), so that it
# takes the CPU the first leaves idle while its load tests wait, and never the CPU they
# measure with. Each lane has test databases of its own.
test-stages:
	STAGE_BUFFER=1 $(MAKE) --no-print-directory -j2 test-lane-main test-lane-other-djangos
test-lane-main:
	$(STAGE) "install .venv" $(MAKE) --no-print-directory $(BIN)/.installed
	$(STAGE) "mypy" $(MAKE) --no-print-directory typecheck
	$(STAGE) "docs and package" $(MAKE) --no-print-directory docs package DOCS_VENV=$(VENV)
	$(MAKE) --no-print-directory -j1 test-sqlite test-postgresql test-mariadb test-isolation
test-lane-other-djangos:
	nice -n 10 $(MAKE) --no-print-directory -j1 test-django42 test-django6

# The whole suite on SQLite; then the database tests on the two servers.
test-sqlite: $(BIN)/.installed
	$(call suite,$(BIN),SQLite: quick tests,,not slow,$(XDIST))
	$(call suite,$(BIN),SQLite: load tests,,slow,$(LOAD_XDIST))
test-postgresql: $(BIN)/.installed
	$(call suite,$(BIN),PostgreSQL: quick tests,SNOWID_TEST_DB=postgresql,django_db and not slow,$(XDIST))
	$(call suite,$(BIN),PostgreSQL: load tests,SNOWID_TEST_DB=postgresql,django_db and slow,$(LOAD_XDIST))
test-mariadb: $(BIN)/.installed
	$(call suite,$(BIN),MariaDB: quick tests,SNOWID_TEST_DB=mariadb,django_db and not slow,$(XDIST))
	$(call suite,$(BIN),MariaDB: load tests,SNOWID_TEST_DB=mariadb,django_db and slow,$(LOAD_XDIST))

# The order-number tests again at stricter isolation levels: MariaDB at REPEATABLE READ
# (its server default), PostgreSQL at SERIALIZABLE. The quick ones only, to keep CI short.
ORDER_TESTS := tests/orders/test_order_numbers.py tests/orders/test_order_databases.py \
               tests/orders/test_order_concurrency.py tests/management/test_recover_command.py \
               tests/orders/stores/test_database.py
test-isolation: $(BIN)/.installed
	$(call suite,$(BIN),MariaDB REPEATABLE READ: order-number tests,SNOWID_TEST_DB=mariadb \
	    SNOWID_TEST_ISOLATION="repeatable read",django_db and not slow,$(XDIST) $(ORDER_TESTS))
	$(call suite,$(BIN),PostgreSQL SERIALIZABLE: order-number tests,SNOWID_TEST_DB=postgresql \
	    SNOWID_TEST_ISOLATION=serializable,django_db and not slow,$(XDIST) $(ORDER_TESTS))

# The other Django versions run everything but the multi-process load tests (marked slow),
# which exercise this app's own algorithms and run above on every database.
OTHER_DJANGO_MARK := not slow
# Their test databases are not the main lane's: the two lanes run side by side.
OTHER_DB := SNOWID_TEST_DB_NAME=$(or $(SNOWID_TEST_DB_NAME),snowid)_others

# The oldest supported Django, on SQLite.
$(VENV)-django42/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)-django42
	$(VENV)-django42/bin/python -m pip install -q -e ".[test]" "django>=4.2,<5.0"
	touch $@
test-django42:
	$(STAGE) "install Django 4.2" $(MAKE) --no-print-directory $(VENV)-django42/.installed
	$(call suite,$(VENV)-django42/bin,SQLite: all but the load tests,$(OTHER_DB),$(OTHER_DJANGO_MARK),$(OTHER_XDIST))

# Django 6.x needs Python 3.12+: run where such an interpreter exists.
$(VENV)-django6/.installed: pyproject.toml
	$(PY312) -m venv $(VENV)-django6
	$(VENV)-django6/bin/python -m pip install -q -e ".[test$(MYSQL_EXTRA)]" "django>=6.0,<7.0"
	touch $@
ifeq ($(PY312),)
test-django6:
	@echo "=== Django 6.x: SKIPPED, no Python 3.12 interpreter on this machine"
	@if [ "$$CI" = "true" ]; then echo "CI=true: Django 6.x must be tested"; exit 1; fi
else
D6 := $(VENV)-django6/bin
test-django6:
	$(STAGE) "install Django 6 (Python 3.12)" $(MAKE) --no-print-directory $(VENV)-django6/.installed
	$(call suite,$(D6),SQLite: all but the load tests,$(OTHER_DB),$(OTHER_DJANGO_MARK),$(OTHER_XDIST))
	$(call suite,$(D6),PostgreSQL: all but the load tests,$(OTHER_DB) SNOWID_TEST_DB=postgresql,django_db and $(OTHER_DJANGO_MARK),$(OTHER_XDIST))
	$(call suite,$(D6),MariaDB: all but the load tests,$(OTHER_DB) SNOWID_TEST_DB=mariadb,django_db and $(OTHER_DJANGO_MARK),$(OTHER_XDIST))
endif

# -------------------------------------------------------------- benchmarks
# Each script's output is kept with its run in benchmarks/results/ (benchmarks/record.py);
# docs/performance.rst quotes its figures from there, and the last line rewrites them.
RECORD = $(BIN)/python -m benchmarks.record
bench: $(BIN)/.installed
	$(RECORD) benchmarks/bench_ids.py
	$(RECORD) benchmarks/bench_time_travel.py
	$(RECORD) benchmarks/bench_orm.py
	$(RECORD) benchmarks/bench_orders.py
	$(RECORD) benchmarks/bench_conceal.py
	$(RECORD) benchmarks/bench_leases.py
	$(RECORD) benchmarks/bench_sequences.py
	$(RECORD) benchmarks/bench_sequences_compat.py
	$(RECORD) benchmarks/bench_redis_capacity.py
	$(RECORD) benchmarks/bench_scripts.py
	$(RECORD) benchmarks/bench_remote.py
	$(RECORD) benchmarks/bench_drf.py
	$(RECORD) benchmarks/bench_graphql.py
	$(RECORD) benchmarks/bench_audit.py
	$(RECORD) benchmarks/bench_database_ids.py
	$(RECORD) benchmarks/bench_metrics.py
	$(RECORD) benchmarks/bench_adopt.py
	$(RECORD) benchmarks/bench_pages.py
	$(RECORD) benchmarks/bench_feed_load.py
	$(BIN)/python docs/_ext/snowid_generated.py

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(MAKE) --no-print-directory typecheck

# mypy with the django-stubs plugin, on django_snowid/ ([tool.mypy] in pyproject.toml).
typecheck: $(BIN)/.installed
	$(BIN)/mypy

clean:
	rm -rf $(VENV) $(VENV)-django42 $(VENV)-django6 $(DEMO_VENV) $(DOCS_VENV) \
	    example_project/db.sqlite3 .pytest_cache docs/_build dist .stage-times

# ------------------------------------------------------------------- docs
# The documentation site (Sphinx, docs/): strict, a warning fails the build. A virtualenv
# of its own with the app and the docs extra, as Read the Docs installs it; make test
# builds it with .venv (DOCS_VENV=$(VENV)), which holds Sphinx and Furo already.
DOCS_VENV ?= .venv-docs
$(DOCS_VENV)/bin/.docs-installed: pyproject.toml
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install -q -e ".[docs]"
	touch $@
docs: $(DOCS_VENV)/bin/.docs-installed
	$(DOCS_VENV)/bin/sphinx-build -W --keep-going -n -q -b html docs docs/_build/html
	@echo "make docs: docs/_build/html/index.html"

# --------------------------------------------------------------- packaging
# The sdist and the wheel, checked by twine and by what they hold (scripts/check_dist.py).
package: $(BIN)/.installed
	rm -rf dist
	$(BIN)/python -m build --outdir dist . > /dev/null
	$(BIN)/twine check --strict dist/*
	$(BIN)/python scripts/check_dist.py dist
