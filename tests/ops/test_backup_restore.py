"""Issue 15, item 11: nothing lost. `backup DIR` of a seeded database and its media, `restore DIR` into a
fresh SQLite database and an empty media folder in another process, and every ticket, comment,
attachment (its bytes), time entry, docs article and notification is found again there."""

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest
from django.core.management import call_command
from django.core.serializers.jsonl import Serializer as JSONLSerializer
from django.db import connection, connections

from docs_area.models import Article, ArticleAttachment
from notifications.models import Notification
from projects.management.commands.backup import one_moment
from projects.models import Status
from tests.factories import (
    ArticleAttachmentFactory,
    ArticleFactory,
    AttachmentFactory,
    CommentFactory,
    NotificationFactory,
    StatusFactory,
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


def restore_in_new_process(backup, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "restore", str(backup)], cwd=ROOT, env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="one moment's reads: PostgreSQL's REPEATABLE READ")
@pytest.mark.django_db(transaction=True)
def test_a_backup_taken_while_the_service_writes_restores_one_moment_s_data(project, manager, tmp_path, monkeypatch):
    kept = TicketFactory(project=project, title="Before the backup")
    before = {"tickets": set(Ticket.objects.values_list("id", "status_id", "title")),
              "statuses": set(Status.objects.values_list("id", "slug"))}

    def write_meanwhile():
        """What the service commits while the backup reads: a column and a ticket in it, an edit, a removal."""
        try:
            Comment.objects.all().delete()
            column = StatusFactory(project=project, slug="added-meanwhile", label="Added meanwhile")
            added = TicketFactory(project=project, status=column, title="In a column the backup has already passed")
            CommentFactory(ticket=added, message="On a ticket the backup has already passed")
            Ticket.objects.filter(pk=kept.pk).update(title="After the backup began")
        finally:
            connections.close_all()

    # Once the statuses and the tickets are read: a backup that reads table after table then finds a comment
    # on a ticket it has not kept, and its restore fails on that reference (issue 26).
    original, written = JSONLSerializer.end_object, []

    def end_object(serializer, obj):
        if isinstance(obj, Ticket) and not written:
            writer = threading.Thread(target=write_meanwhile)
            writer.start()
            writer.join()
            written.append(True)
        original(serializer, obj)

    CommentFactory(ticket=kept)
    before["comments"] = set(Comment.objects.values_list("id", "message"))
    monkeypatch.setattr(JSONLSerializer, "end_object", end_object)
    call_command("backup", str(tmp_path / "backup"), verbosity=0)
    assert written and Ticket.objects.count() == 2  # the writes happened, and committed

    database = tmp_path / "restored.sqlite3"
    restored = restore_in_new_process(tmp_path / "backup", {"DATABASE_URL": f"sqlite:///{database}",
                                                            "MEDIA_ROOT": str(tmp_path / "media"), "REDIS_URL": ""})
    assert restored.returncode == 0, restored.stderr[-3000:]
    assert rows(database, "SELECT id, status_id, title FROM tickets_ticket") == before["tickets"]
    assert rows(database, "SELECT id, slug FROM projects_status") == before["statuses"]
    assert rows(database, "SELECT id, message FROM tickets_comment") == before["comments"]


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's server-side cursors")
def test_a_backup_streams_its_rows_even_where_pgbouncer_turns_server_side_cursors_off(project, monkeypatch):
    monkeypatch.setitem(connection.settings_dict, "DISABLE_SERVER_SIDE_CURSORS", True)
    TicketFactory.create_batch(3, project=project)
    with one_moment():
        tickets = Ticket.objects.iterator(chunk_size=1)
        next(tickets)  # the cursor stays open while `tickets` lives
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_cursors")
            assert cursor.fetchone() == (1,)
    assert connection.settings_dict["DISABLE_SERVER_SIDE_CURSORS"] is True


def test_the_rows_are_written_one_object_per_line_and_restore_counts_what_it_loaded(project, tmp_path):
    TicketFactory.create_batch(3, project=project)
    call_command("backup", str(tmp_path / "backup"), verbosity=0)
    lines = (tmp_path / "backup" / "data.jsonl").read_text().splitlines()
    assert sum(json.loads(line)["model"] == "tickets.ticket" for line in lines) == 3
    restored = restore_in_new_process(tmp_path / "backup", {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'restored.sqlite3'}", "MEDIA_ROOT": str(tmp_path / "media"),
        "REDIS_URL": ""})
    assert restored.returncode == 0, restored.stderr[-3000:]
    assert restored.stdout.splitlines() == [str(len(lines))]


def test_backup_and_restore_carry_the_files_of_a_bucket(project, manager, bucket, s3_server, tmp_path):
    content = bytes(range(256)) * 300
    stored = [AttachmentFactory(ticket=TicketFactory(project=project), file__data=content, filesize=len(content)),
              ArticleAttachmentFactory(article=ArticleFactory(project=project))]
    names = sorted(record.file.name for record in stored)
    assert bucket.keys() == names

    call_command("backup", str(tmp_path / "backup"), verbosity=0)
    assert sorted(path.relative_to(tmp_path / "backup" / "media").as_posix()
                  for path in (tmp_path / "backup" / "media").rglob("*") if path.is_file()) == names

    target = s3_server.new_bucket()
    restored = restore_in_new_process(tmp_path / "backup", {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'restored.sqlite3'}", "MEDIA_ROOT": str(tmp_path / "unused"),
        "REDIS_URL": "", **target.env()})
    assert restored.returncode == 0, restored.stderr[-3000:]
    assert target.keys() == names
    assert [target.read(name) for name in names] == [bucket.read(name) for name in names]
    assert not (tmp_path / "unused").exists()
