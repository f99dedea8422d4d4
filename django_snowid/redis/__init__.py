"""Redis plumbing shared by every feature kept in Redis: the client (``client``) and the
one runner of our Lua scripts (``scripts``). Nothing here imports ``redis`` at import time."""
