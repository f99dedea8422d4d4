"""Snowflake ids made by PostgreSQL for rows Django does not insert: a column default
calling a function of ours, from node values reserved for the database."""
