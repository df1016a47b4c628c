from tests.factories import TicketFactory, TimeEntryFactory, UserFactory
from timetracking.models import TimerState

LIST = "/admin/timetracking/timeentry/"


def test_lists_ref_user_minutes_and_state(staff, project, ticket):
    TimeEntryFactory(ticket=ticket, user=UserFactory(username="ada"), seconds=45 * 60, note="pairing")
    page = staff.get(LIST).content.decode()
    assert all(text in page for text in (ticket.prefix_ref, "ada", ">45<", "stopped"))


def test_searches_by_ticket_ref_or_note(staff, project, ticket):
    other = TicketFactory(project=project)
    TimeEntryFactory(ticket=ticket, note="wanted entry")
    TimeEntryFactory(ticket=other, note="unrelated entry")
    page = staff.get(f"{LIST}?q=apl-{ticket.number}").content.decode()
    assert "wanted entry" in page and "unrelated entry" not in page
    page = staff.get(f"{LIST}?q=unrelated").content.decode()
    assert "unrelated entry" in page and "wanted entry" not in page


def test_filters_by_project_user_and_state(staff, project, ticket):
    runner = UserFactory()
    TimeEntryFactory(ticket=ticket, user=runner, is_running=TimerState.RUNNING, note="still running")
    TimeEntryFactory(ticket=ticket, note="long stopped")
    page = staff.get(f"{LIST}?is_running__exact=1").content.decode()
    assert "still running" in page and "long stopped" not in page
    page = staff.get(f"{LIST}?user__id__exact={runner.id}&project__id__exact={project.id}").content.decode()
    assert "still running" in page and "long stopped" not in page
