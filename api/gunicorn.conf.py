"""gunicorn's settings for the API, wherever it runs: the appliance (fulcrum-api.service), the
container and the tests' stacks all start ``gunicorn -c gunicorn.conf.py fulcrum.wsgi`` and give
only the address (and, for tests, a shorter graceful stop).

gthread: a request holds a thread. The node agents' long-polls hold one each for up to 55 s
while they wait, but no database connection (revisions/news.py wakes them). So a process
runs many threads: up to
cluster.api.views.LONG_POLL_WAITERS of them wait for agents, and the rest are left for the
operators, the console and the agents' reports.
"""

worker_class = "gthread"
workers = 2
threads = 128
timeout = 90
graceful_timeout = 30
