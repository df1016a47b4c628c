"""E-mail through the Procfile's `worker:` line (Celery, on PostgreSQL and Redis): the write hands the e-mail to the
broker, the worker sends it; an SMTP server that is down when it tries gets it from the worker's beat (the sweep)
once it is back."""

import os

from django.db import transaction

from core.mail import queue_email
from core.models import OutboundEmail
from tests.polling import eventually
from tests.realtime.conftest import SEVERAL_PROCESSES
from tests.realtime.servers import free_port, served_database_url
from tests.webhooks.workers import ProcfileWorker

from ..mail import SmtpServer

pytestmark = SEVERAL_PROCESSES


def test_the_worker_sends_and_retries_an_email_the_smtp_server_was_down_for(transactional_db, settings):
    settings.CELERY_BROKER_URL = os.environ["REDIS_URL"]
    port = free_port()
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"], "EMAIL_HOST": "127.0.0.1",
           "EMAIL_PORT": str(port), "EMAIL_RETRY_SCHEDULE": ",".join(["1"] * 20), "EMAIL_SWEEP_SECONDS": "0.5",
           "DATABASE_POOL_MIN_SIZE": "1", "DATABASE_POOL_MAX_SIZE": "4"}
    with ProcfileWorker(env) as worker:
        with transaction.atomic():
            queue_email(kind="test", to="ada@example.com", subject="Through the worker", text="Body")
        assert eventually(lambda: OutboundEmail.objects.filter(attempts__gte=1).exists(), 20), worker.output()[-3000:]
        with SmtpServer(port=port) as server:
            [message] = server.wait_for(1, timeout=20)
            assert eventually(lambda: OutboundEmail.objects.filter(status="sent").exists())
    assert (message["Subject"], message["To"]) == ("Through the worker", "ada@example.com")
    email = OutboundEmail.objects.get()
    assert email.attempts >= 2 and email.error == ""
