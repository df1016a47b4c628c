"""gunicorn's settings for the Procfile's `web:` line (`--config config/gunicorn.py`): the metrics'
shared directory, and gunicorn's own log lines in the application's format.

Metrics (core/metrics.py): prometheus_client's multiprocess mode keeps each worker's samples in files
of PROMETHEUS_MULTIPROC_DIR, which must be empty when the server starts and must outlive the workers
(a scrape sums them all). The master prepares it before it starts any worker, a new temporary one when
the operator named none; a worker that exits has its gauges dropped (its counters stay: a restarted
worker must not make a counter go back).
"""

import os
import shutil
import tempfile
from pathlib import Path

from core.request_id import LOG_FILTERS, LOG_FORMATTERS

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"
TEMPORARY_DIR = "TRACKER_METRICS_TEMPORARY_DIR"


def on_starting(server):
    named = os.environ.get(MULTIPROC_DIR)
    if named:
        directory = Path(named)
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):  # the samples of a previous run would be added to this one's
            stale.unlink()
    else:
        directory = Path(tempfile.mkdtemp(prefix="tracker-metrics-"))
        os.environ[TEMPORARY_DIR] = str(directory)  # removed on exit
        os.environ[MULTIPROC_DIR] = str(directory)


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    temporary = os.environ.get(TEMPORARY_DIR)
    if temporary:
        shutil.rmtree(temporary, ignore_errors=True)


def json_log_config() -> dict:
    """gunicorn's default logging (gunicorn.glogging.CONFIG_DEFAULTS) with LOG_FORMAT=json's formatter."""
    handler = {"class": "logging.StreamHandler", "formatter": "json", "filters": ["request_id"]}
    logger = {"level": "INFO", "propagate": False}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": LOG_FILTERS,
        "formatters": LOG_FORMATTERS,
        "handlers": {"console": {**handler, "stream": "ext://sys.stdout"},
                     "error_console": {**handler, "stream": "ext://sys.stderr"}},
        "loggers": {"gunicorn.error": {**logger, "handlers": ["error_console"]},
                    "gunicorn.access": {**logger, "handlers": ["console"]}},
        "root": {"level": "INFO", "handlers": ["console"]},
    }


if os.environ.get("LOG_FORMAT", "").strip().lower() == "json":
    logconfig_dict = json_log_config()
