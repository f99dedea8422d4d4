"""Order numbers: ``yyMMddHHmmss`` + a per-second sequence + the low bits of a user id.

- :mod:`.fields`: ``OrderNumberField``, the field alone;
- :mod:`.queryset`: ``OrderNumberQuerySet`` and ``assign_order_numbers`` (numbers in blocks);
- :mod:`.retry`: the INSERT retry on a UNIQUE conflict or a deadlock;
- :mod:`.issuer`: one ``StreamIssuer`` per stream, on top of a store;
- :mod:`.recovery`: a stream's state rebuilt from the largest numbers in the database;
- :mod:`.stores`: where a stream's state lives (Redis and its Lua, or a table);
- :mod:`.formats`: the format options and their defaults from the settings;
- :mod:`.checks`: the checks of the ``SNOWID_ORDER_*`` settings;
- :mod:`.status`: what the admin status page shows of each stream.

Nothing here below the field imports the field class: the field registers itself with
:mod:`django_snowid.inventory`, and services are given the fields they work on.
"""
