"""Snowflake ids: the fields (``fields``), this process's layouts and generators
(``issuer``), the lookups by creation time (``lookups``) and public ids (``publicids``)."""
