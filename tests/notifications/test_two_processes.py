"""Two server processes on one PostgreSQL database and one Redis: a comment made through one of them
reaches the notification socket of the ticket's creator, connected to the other."""

import asyncio
import os

from accounts.services import issue_token
from tests.factories import TicketFactory
from tests.realtime.servers import DaphneServer
from tests.realtime.test_two_processes import pytestmark as two_processes
from tests.realtime.test_two_processes import served_database_url, watch_move

pytestmark = two_processes


def test_a_comment_through_one_process_reaches_a_socket_on_the_other(project, manager, editor):
    ticket = TicketFactory(project=project, created_by=manager, title="Cross the processes")
    manager_token, editor_token = issue_token(user=manager)[1], issue_token(user=editor)[1]
    env = {"DATABASE_URL": served_database_url(), "REDIS_URL": os.environ["REDIS_URL"]}

    with DaphneServer(env) as server_a, DaphneServer(env) as server_b:
        frame = asyncio.run(watch_move(
            f"{server_b.ws_url}/ws/v1/notifications/", manager_token,
            lambda: server_a.post(f"/api/v1/projects/{project.id}/tickets/{ticket.number}/comments",
                                  {"comment": "From server A"}, editor_token),
        ))

    assert (frame["event"], frame["unread_count"]) == ("notification.created", 1)
    assert {key: frame["notification"][key] for key in ("type", "message", "ticket_id", "project_id")} == {
        "type": "reaction", "message": f"{editor.display_name} commented on APL-{ticket.number}",
        "ticket_id": ticket.id, "project_id": project.id}
