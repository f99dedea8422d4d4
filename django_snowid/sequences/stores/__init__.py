"""Where named sequences live: the database alone, or Redis under a database mark."""
