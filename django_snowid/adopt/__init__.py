"""Adopting Snowflake ids where the data already is: the checks of other apps' generic
relations, ``manage.py snowid_adopt`` (its plan, its executors, its journal), the way back,
and legacy ids."""
