"""Snowflake ids made by the database, for the rows Django does not insert (``COPY``,
``INSERT ... SELECT``, other services): a column default that calls a function of ours,
issuing ids of the field's layout from node values reserved for the database.

PostgreSQL only (``database_ids=True`` on a field); see ``postgresql.py`` for the SQL and
``docs/database-ids.rst`` for why MariaDB and SQLite stay Python-only.
"""
