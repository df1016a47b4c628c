"""E-mail, for whatever reaches people who are not looking (decisions.md "E-mail"): `queue_email` stores a message
in the outbox (core.models.OutboundEmail) inside the caller's transaction, so that it is sent if and only if the
write that caused it commits, and hands its sending to the background workers after the commit (core/mailer.py
sends; core/tasks.py carries the ids). Nothing here talks to an SMTP server: a server that is down or slow never
fails nor slows the write.

Header injection: the subject's line breaks become spaces, and every other header value is refused here if it
holds one (a caller's mistake, never user text: user text goes into the body, or into a header through Django's
encoding of non-ASCII values).
"""

from email.utils import make_msgid
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail.message import forbid_multi_line_headers
from django.utils import timezone

from core import background

from .models import OutboundEmail
from .tasks import send_emails


def queue_email(*, kind: str, to: str, subject: str, text: str, html: str | None = None,
                headers: dict[str, str] | None = None) -> None:
    """Send this e-mail once the current transaction commits (nothing if it rolls back), off the request path.
    `kind` labels it in tracker_emails_total. A `Message-ID` is added unless `headers` has one."""
    headers = {"Message-ID": make_msgid(domain=site_host()), **(headers or {})}
    for name, value in [("To", to), *headers.items()]:
        forbid_multi_line_headers(name, value, None)
    now = timezone.now()
    email = OutboundEmail.objects.create(kind=kind, to=to, subject=" ".join(subject.split()), text=text,
                                         html=html or "", headers=headers, created_at=now, next_attempt_at=now)
    background.run_after_commit(send_emails, [email.pk])


def site_url(path: str) -> str:
    """The absolute URL of `path` (which starts with /) on SITE_URL."""
    return f"{settings.SITE_URL.rstrip('/')}{path}"


def site_host() -> str:
    """SITE_URL's host name: the right side of the Message-IDs and thread ids of this site's e-mails."""
    return urlsplit(settings.SITE_URL).hostname or "localhost"
