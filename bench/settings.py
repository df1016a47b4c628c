"""The project's settings plus one trivial JSON view: the yardstick of the throughput figures."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"

# Each figure mints a token for the bench's owner, into databases kept from one run to the next.
MAX_TOKENS_PER_USER = 10**9
