"""What a notification e-mail says (decisions.md "E-mail"): built from notifications read with their ticket and
project (notifications/emails.py reads them), with no query of its own.

An e-mail about one ticket: subject `[<PREFIX>-<number>] <title>`, and `In-Reply-To`/`References` naming the
ticket's thread (`<ticket-<id>@<SITE_URL's host>>`), so that a mail client groups one ticket's e-mails. One that
gathers several tickets (a digest, or what waited out the hourly cap) has a subject of its own and no thread.
Both parts name who did what, quote a comment's text and link each ticket's card on its board; the HTML part is
rendered with Django's autoescaping, so user text in it is text.
"""

from dataclasses import dataclass
from itertools import groupby

from django.template.loader import render_to_string

from accounts.models import User
from core.mail import site_host, site_url

from .models import Notification
from .unsubscribe import unsubscribe_url


@dataclass(frozen=True)
class Section:
    """One ticket's notifications in an e-mail, oldest first."""

    ref: str
    title: str
    link: str
    notifications: list[Notification]


@dataclass(frozen=True)
class Email:
    subject: str
    text: str
    html: str
    headers: dict[str, str]


def compose(user: User, notifications: list[Notification], *, digest: bool = False) -> Email:
    """The e-mail to `user` listing `notifications` (one ticket's or several)."""
    sections = sections_of(notifications)
    unsubscribe = unsubscribe_url(user)
    headers = {"Auto-Submitted": "auto-generated", "List-Unsubscribe": f"<{unsubscribe}>",
               "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    if len(sections) == 1 and not digest:
        subject = f"[{sections[0].ref}] {sections[0].title}"
        thread = f"<ticket-{notifications[0].ticket_id}@{site_host()}>"
        headers.update({"In-Reply-To": thread, "References": thread})
    else:
        subject = summary_subject(len(notifications), len(sections), digest=digest)
    context = {"sections": sections, "digest": digest, "unsubscribe": unsubscribe, "subject": subject}
    return Email(subject=subject, text=render_to_string("notifications/email/notifications.txt", context),
                 html=render_to_string("notifications/email/notifications.html", context), headers=headers)


def sections_of(notifications: list[Notification]) -> list[Section]:
    ordered = sorted(notifications, key=lambda notification: (notification.ticket_id, notification.created_at,
                                                             notification.pk))
    sections = []
    for _, ticket_notifications in groupby(ordered, key=lambda notification: notification.ticket_id):
        ticket_notifications = list(ticket_notifications)
        ticket = ticket_notifications[0].ticket
        sections.append(Section(ref=ticket.prefix_ref, title=ticket.title, notifications=ticket_notifications,
                                link=site_url(f"/projects/{ticket.project_id}/board/?ticket={ticket.number}")))
    return sorted(sections, key=lambda section: section.notifications[0].created_at)


def summary_subject(notifications: int, tickets: int, *, digest: bool) -> str:
    counted = (f"{notifications} notification{'s' if notifications != 1 else ''} on {tickets} "
               f"ticket{'s' if tickets != 1 else ''}")
    return f"Your daily digest: {counted}" if digest else counted
