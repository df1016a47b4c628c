"""Notification e-mails (decisions.md "E-mail"), through the API's writes and a real SMTP server (tests/mail.py):
who gets one, what it says, how notifications are batched, digested and capped. The sweep runs as its schedule
would (notifications.emails.send_due at a given moment); the outbox sends after it commits."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import EmailNotifications
from core import background, tasks
from core.models import OutboundEmail
from notifications import emails
from notifications.models import Notification
from notifications.unsubscribe import unsubscribe_url
from projects.models import Membership
from tests.factories import TicketFactory
from tests.polling import eventually
from tests.realtime.servers import free_port
from tests.tickets.conftest import ticket_url

from ..mail import html_of, text_of
from .test_rules import assign, comment, move

SITE = "https://tracker.example.org"
BATCH = 60
DIGEST_WAIT = 2 * 3600


@pytest.fixture
def mailing(smtp_server, settings):
    settings.SITE_URL = SITE
    settings.EMAIL_BATCH_SECONDS = BATCH
    return smtp_server


def sweep(after: float = BATCH) -> None:
    """The e-mail sweep, `after` seconds from now."""
    emails.send_due(now=timezone.now() + timedelta(seconds=after))


def received(server, count: int) -> dict[str, list]:
    """The first `count` e-mails, by recipient, once they arrived (an extra one would be caught by the next
    test's count)."""
    by_recipient = {}
    for message in server.wait_for(count):
        by_recipient.setdefault(message["To"], []).append(message)
    return by_recipient


def queued_subjects() -> list[tuple[str, str]]:
    return list(OutboundEmail.objects.order_by("pk").values_list("to", "subject"))


def test_a_comment_is_emailed_with_its_text_the_card_link_and_the_thread_headers(mailing, client_for, ticket,
                                                                                  manager, member):
    ada, cy = member("ada"), member("cy", name="Cy <Script>")
    ticket.assignees.set([ada])
    comment(client_for(cy), ticket, "Looks <b>good</b> & ready\nsecond line")
    sweep()

    by_recipient = received(mailing, 2)
    assert sorted(by_recipient) == sorted([manager.email, "ada@example.com"])
    [message] = by_recipient["ada@example.com"]
    ref, link = f"APL-{ticket.number}", f"{SITE}/projects/{ticket.project_id}/board/?ticket={ticket.number}"
    assert message["Subject"] == f"[{ref}] Fix login"
    thread = f"<ticket-{ticket.pk}@tracker.example.org>"
    assert (message["In-Reply-To"], message["References"]) == (thread, thread)
    assert re.fullmatch(r"<.+@tracker\.example\.org>", message["Message-ID"])
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["List-Unsubscribe"].strip() == f"<{unsubscribe_url(ada)}>"  # folded: it is long
    assert unsubscribe_url(ada).startswith(f"{SITE}/unsubscribe/")
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

    text = text_of(message)
    assert f"Cy <Script> commented on {ref}" in text
    assert "> Looks <b>good</b> & ready\n> second line\n" in text
    assert link in text
    html = html_of(message)
    assert "Cy &lt;Script&gt; commented on" in html and "<Script>" not in html
    assert "Looks &lt;b&gt;good&lt;/b&gt; &amp; ready<br>second line" in html
    assert f'href="{link}"' in html
    assert Notification.objects.exclude(email_status="").count() == 0


def test_every_kind_of_notification_is_emailed(mailing, client_for, project, member):
    ada, cy = member("ada"), member("cy")
    assigned, moved, mentioned = (TicketFactory(project=project, created_by=cy, title=title)
                                  for title in ("Assigned", "Moved", "Mentioned"))
    moved.assignees.set([ada])
    client = client_for(cy)
    assign(client, assigned, ada)
    move(client, moved, "done")
    comment(client, mentioned, "ask @ada.")
    sweep()
    texts = {message["Subject"]: text_of(message) for message in received(mailing, 3)["ada@example.com"]}
    assert texts[f"[APL-{assigned.number}] Assigned"].startswith(f"cy assigned you to APL-{assigned.number} (")
    assert texts[f"[APL-{moved.number}] Moved"].startswith(f"cy moved APL-{moved.number} to Done (")
    assert texts[f"[APL-{mentioned.number}] Mentioned"].startswith(f"cy mentioned you on APL-{mentioned.number} (")
    assert "> ask @ada.\n" in texts[f"[APL-{mentioned.number}] Mentioned"]


def test_one_tickets_notifications_within_the_batch_window_go_as_one_email(mailing, client_for, ticket, member):
    ada, cy = member("ada"), member("cy")
    ticket.assignees.set([ada])
    other = TicketFactory(project=ticket.project, created_by=cy, title="Other", assignees=[ada])
    client = client_for(cy)
    comment(client, ticket, "First")
    move(client, ticket, "done")
    comment(client, other, "Elsewhere")
    sweep(after=BATCH - 5)
    assert queued_subjects() == [], "not before the first is EMAIL_BATCH_SECONDS old"
    sweep()

    messages = received(mailing, 3)["ada@example.com"]
    assert sorted(message["Subject"] for message in messages) == [f"[APL-{ticket.number}] Fix login",
                                                                  f"[APL-{other.number}] Other"]
    [batched] = [message for message in messages if "Fix login" in message["Subject"]]
    text = text_of(batched)
    assert text.index("cy commented on") < text.index("> First") < text.index("cy moved")


def test_a_notification_after_the_window_waits_for_a_batch_of_its_own(mailing, client_for, project, member,
                                                                      settings):
    settings.EMAIL_BATCH_SECONDS = 0.001  # the second write comes later than that
    ada, cy = member("ada"), member("cy")
    ticket = TicketFactory(project=project, created_by=cy, assignees=[ada])
    comment(client_for(cy), ticket, "First")
    comment(client_for(cy), ticket, "Second")
    sweep(after=0)
    quotes = sorted(re.findall(r"^> .*$", text_of(message), re.MULTILINE) for message in mailing.wait_for(2))
    assert quotes == [["> First"], ["> Second"]]


def test_nobody_is_emailed_about_their_own_action_nor_without_an_address_nor_inactive_nor_off(
        mailing, client_for, ticket, manager, member):
    no_address, inactive, off, ada = member("nomail"), member("gone"), member("off"), member("ada")
    no_address.email = ""
    inactive.is_active = False
    off.email_notifications = EmailNotifications.OFF
    for user in (no_address, inactive, off):
        user.save()
    ticket.assignees.set([no_address, inactive, off, ada, manager])
    comment(client_for(manager), ticket, "From the creator")
    sweep()
    assert list(received(mailing, 1)) == ["ada@example.com"]
    assert queued_subjects() == [("ada@example.com", f"[APL-{ticket.number}] Fix login")]


def test_who_turned_emails_off_or_left_meanwhile_gets_nothing(mailing, client_for, ticket, member):
    ada, bob, eve, cy = member("ada"), member("bob"), member("eve"), member("cy")
    ticket.assignees.set([ada, bob, eve])
    comment(client_for(cy), ticket, "Hello")
    assert Notification.objects.exclude(email_status="").count() == 4  # the creator's, ada's, bob's and eve's
    type(ada).objects.filter(pk=ada.pk).update(email_notifications=EmailNotifications.OFF)
    Membership.objects.filter(user=bob).delete()
    sweep()
    assert sorted(to for to, _ in queued_subjects()) == sorted([ticket.created_by.email, "eve@example.com"])
    assert sorted(received(mailing, 2)) == sorted([ticket.created_by.email, "eve@example.com"])
    assert Notification.objects.exclude(email_status="").count() == 0


def test_notifications_of_a_deleted_ticket_are_not_emailed(mailing, client_for, ticket, manager, member):
    ada, cy = member("ada"), member("cy")
    ticket.assignees.set([ada])
    comment(client_for(cy), ticket, "Soon gone")
    assert client_for(manager).post(ticket_url(ticket, "delete")).status_code in (200, 204)
    sweep()
    assert queued_subjects() == []
    assert Notification.objects.exclude(email_status="").count() == 0


def test_a_digest_comes_at_its_hour_with_what_arrived_since_the_last_one(mailing, client_for, ticket, member,
                                                                        settings):
    now = timezone.now()
    # Two full hours on: a sweep `after=0` stays before it even if the clock strikes an hour during the test,
    # and one DIGEST_WAIT later is past it.
    settings.EMAIL_DIGEST_HOUR = (now + timedelta(hours=2)).hour
    settings.EMAIL_BATCH_SECONDS = 0  # sweeps at `now`: before that hour, whatever the minute
    ada, cy = member("ada"), member("cy")
    ada.email_notifications = EmailNotifications.DIGEST
    ada.save()
    other = TicketFactory(project=ticket.project, created_by=cy, title="Other", assignees=[ada])
    ticket.assignees.set([ada])
    comment(client_for(cy), ticket, "One")
    comment(client_for(cy), other, "Two")
    sweep(after=0)
    assert [to for to, _ in queued_subjects()] == [ticket.created_by.email], "ada's wait for the digest hour"

    sweep(after=DIGEST_WAIT)
    [digest] = received(mailing, 2)["ada@example.com"]
    assert digest["Subject"] == "Your daily digest: 2 notifications on 2 tickets"
    assert (digest["In-Reply-To"], digest["List-Unsubscribe-Post"]) == (None, "List-Unsubscribe=One-Click")
    text = text_of(digest)
    assert f"== APL-{ticket.number} Fix login ==" in text and f"== APL-{other.number} Other ==" in text
    assert "> One" in text and "> Two" in text

    comment(client_for(cy), other, "Three")
    sweep(after=0)
    assert len(queued_subjects()) == 2, "the next digest waits for its hour"
    sweep(after=DIGEST_WAIT)
    [_, second] = received(mailing, 3)["ada@example.com"]
    assert second["Subject"] == "Your daily digest: 1 notification on 1 ticket"
    assert "> Three" in text_of(second) and "> One" not in text_of(second)


def test_past_the_hourly_cap_the_rest_wait_for_the_next_hour_as_one_email(mailing, client_for, project, member,
                                                                          settings):
    settings.EMAIL_MAX_PER_USER_PER_HOUR = 2
    settings.EMAIL_BATCH_SECONDS = 0
    ada, cy = member("ada"), member("cy")
    tickets = [TicketFactory(project=project, created_by=cy, title=f"T{n}", assignees=[ada]) for n in range(5)]
    client = client_for(cy)
    for ticket in tickets[:4]:
        comment(client, ticket, f"On {ticket.title}")
    comment(client, tickets[4], "Later")
    # One sweep: two sweeps a moment apart could fall in two clock hours, each with room for two.
    sweep(after=0)
    assert [subject for _, subject in queued_subjects()] == [f"[APL-{tickets[0].number}] T0",
                                                             f"[APL-{tickets[1].number}] T1"]
    next_hour = (timezone.now() + timedelta(hours=1)).replace(minute=0, second=0)
    emails.send_due(now=next_hour)

    # Each hand-out has a connection of its own: the three arrive in any order.
    by_subject = {message["Subject"]: message for message in mailing.wait_for(3)}
    assert sorted(by_subject) == ["3 notifications on 3 tickets", f"[APL-{tickets[0].number}] T0",
                                  f"[APL-{tickets[1].number}] T1"]
    held = by_subject["3 notifications on 3 tickets"]
    assert held["In-Reply-To"] is None
    assert all(f"On {title}" in text_of(held) for title in ("T2", "T3")) and "> Later" in text_of(held)


def test_a_title_cannot_add_headers(mailing, client_for, project, member):
    ada, cy = member("ada"), member("cy")
    ticket = TicketFactory(project=project, created_by=cy, title="Fix\r\nBcc: eve@example.com", assignees=[ada])
    comment(client_for(cy), ticket, "x")
    sweep()
    [message] = mailing.wait_for(1)
    assert (message["Subject"], message["Bcc"]) == (f"[APL-{ticket.number}] Fix Bcc: eve@example.com", None)
    assert mailing.envelopes[0][1] == ["ada@example.com"]


def test_a_notifying_write_succeeds_while_smtp_is_down_and_its_email_goes_later(mailing, client_for, ticket,
                                                                                member, settings):
    settings.EMAIL_PORT = free_port()  # nothing listens
    ada, cy = member("ada"), member("cy")
    assert assign(client_for(cy), ticket, ada).status_code == 201
    sweep()
    assert eventually(lambda: OutboundEmail.objects.filter(attempts=1, claimed_at=None).exists())
    assert OutboundEmail.objects.get().status == OutboundEmail.Status.PENDING

    settings.EMAIL_PORT = mailing.port
    OutboundEmail.objects.update(next_attempt_at=timezone.now())  # the retry's minute has passed
    tasks.sweep_emails()
    assert list(received(mailing, 1)) == ["ada@example.com"]


def test_the_schedule_sends_each_batch_once_it_is_due(mailing, client_for, project, member, settings):
    settings.EMAIL_BATCH_SECONDS = 1
    settings.BACKGROUND_SCHEDULE = {"notifications.tasks.send_emails": 0.05}
    ada, cy = member("ada"), member("cy")
    ticket = TicketFactory(project=project, created_by=cy, assignees=[ada])
    client = client_for(cy)
    assert client.get(ticket_url(ticket)).status_code == 200  # the first answer checked loads the API's schema
    comment(client, ticket, "One")
    comment(client, ticket, "Two")
    background.local_runner()  # as a server without workers starts it
    [message] = mailing.wait_for(1)
    assert re.findall(r"^> .*$", text_of(message), re.MULTILINE) == ["> One", "> Two"]
