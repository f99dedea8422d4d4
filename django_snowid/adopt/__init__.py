"""Adopting Snowflake ids where the data already is (``manage.py snowid_adopt``)."""
