"""Issue 15, item 11: nothing lost. `backup DIR` of a seeded database and its media, `restore DIR` into a
fresh SQLite database and an empty media folder in another process, and every ticket, comment,
attachment (its bytes), time entry, docs article and notification is found again there."""

import os
import sqlite3
import subprocess
import sys

from django.core.management import call_command

from docs_area.models import Article, ArticleAttachment
from notifications.models import Notification
from tests.factories import (
    ArticleAttachmentFactory,
    ArticleFactory,
    AttachmentFactory,
    CommentFactory,
    NotificationFactory,
    TicketFactory,
    TimeEntryFactory,
)
from tests.realtime.servers import ROOT
from tickets.models import Attachment, Comment, Ticket
from timetracking.models import TimeEntry


def rows(database, sql: str) -> set[tuple]:
    with sqlite3.connect(database) as connection:
        return set(connection.execute(sql).fetchall())


def test_backup_restores_into_a_fresh_sqlite_database_with_every_object_and_file(project, manager, tmp_path):
    tickets = [TicketFactory(project=project, title=f"Keep me {n}") for n in range(3)]
    for ticket in tickets:
        CommentFactory(ticket=ticket, message=f"Remember {ticket.number}")
        TimeEntryFactory(ticket=ticket, user=manager, seconds=600 + ticket.number)
        NotificationFactory(ticket=ticket, user=manager)
    AttachmentFactory(ticket=tickets[0], file__data=bytes(range(256)) * 40, filesize=10240)
    AttachmentFactory(ticket=tickets[1])
    ArticleAttachmentFactory(article=ArticleFactory(project=project, content="# Runbook\n\nRestore it."))

    call_command("backup", str(tmp_path / "backup"), verbosity=0)
    database, media = tmp_path / "restored.sqlite3", tmp_path / "restored-media"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{database}", "MEDIA_ROOT": str(media), "REDIS_URL": ""}
    restored = subprocess.run([sys.executable, "manage.py", "restore", str(tmp_path / "backup")], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=120)
    assert restored.returncode == 0, restored.stderr[-3000:]

    assert rows(database, "SELECT id, project_id, number, title FROM tickets_ticket") == {
        (t.id, t.project_id, t.number, t.title) for t in Ticket.objects.all()}
    assert rows(database, "SELECT id, ticket_id, message FROM tickets_comment") == set(
        Comment.objects.values_list("id", "ticket_id", "message"))
    assert rows(database, "SELECT id, ticket_id, user_id, seconds FROM timetracking_timeentry") == set(
        TimeEntry.objects.values_list("id", "ticket_id", "user_id", "seconds"))
    assert rows(database, "SELECT id, title, content FROM docs_area_article") == set(
        Article.objects.values_list("id", "title", "content"))
    assert rows(database, "SELECT id, user_id, ticket_id, message FROM notifications_notification") == set(
        Notification.objects.values_list("id", "user_id", "ticket_id", "message"))
    files = list(Attachment.objects.all()) + list(ArticleAttachment.objects.all())
    assert rows(database, "SELECT id, file FROM tickets_attachment UNION ALL "
                          "SELECT -id, file FROM docs_area_articleattachment") == {
        (f.id if isinstance(f, Attachment) else -f.id, f.file.name) for f in files}
    for stored in files:
        with stored.file.open("rb") as original:
            assert (media / stored.file.name).read_bytes() == original.read(), stored.file.name
