"""Where this process's worker id comes from.

``sources``: the settings' fixed id (``static``) or an environment variable (``env``);
``pool``: which node values a process may lease for a layout; ``lease``: holding a
lease (acquire, fence, release, forks); ``heartbeat``: its renewing thread; ``leased``:
a generator on a leased worker id; ``stores``: where leases live (lock files on this
host, Redis, the database); ``checks``: the checks of the ``SNOWID_WORKER_*`` settings;
``status``: the leases the status page and ``snowid_workers`` show.
"""
