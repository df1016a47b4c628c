"""The project's settings plus one trivial JSON view: the yardstick of the throughput figures."""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
