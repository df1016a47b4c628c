"""Trello's board JSON ("Export as JSON"): `lists`, `labels`, `members`, `cards`, `checklists`, `actions`.

Lists become statuses in `pos` order (a list named like a default column is that column), cards tickets (in
`pos` order in their list, `idShort` their number in a new project), labels tags, checklists' items the
checklist, `commentCard` actions comments, and a card's `createCard` action names its creator. Cards that are closed, or on a closed list, come archived;
attachments are links appended to the description, never fetched.

The file is read in several passes, one part at a time: what a card refers to (lists, labels, members) is
read before the cards, and only their ids and names are held.
"""

from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from ..errors import TransferFailed
from ..progress import Progress
from ..rows import ChecklistRow, CommentRow, Person, StatusRow, TagRow, TicketRow
from ..writer import Writer
from . import Passes, json_items, mapping, parse_day, parse_time, text_of

LABEL = "Trello"
PASSES = 8
# A list named like a default column is that column (decisions.md), by its name ignoring case.
DEFAULT_COLUMNS = {
    "backlog": ("backlog", "backlog"), "to do": ("todo", "todo"), "todo": ("todo", "todo"),
    "doing": ("in_progress", "active"), "in progress": ("in_progress", "active"), "review": ("review", "review"),
    "done": ("done", "done"),
}
# Trello's label colors, as its boards show them.
COLORS = {
    "green": "#61bd4f", "yellow": "#f2d600", "orange": "#ff9f1a", "red": "#eb5a46", "purple": "#c377e0",
    "blue": "#0079bf", "sky": "#00c2e0", "lime": "#51e898", "pink": "#ff78cb", "black": "#344563",
}
# Card positions are floats: kept in this many steps per unit, so that close ones stay in order.
POSITION_SCALE = 100
POSITION_MAX = 2**53


def read(path: Path, writer: Writer, progress: Progress) -> None:
    passes = Passes(path, progress, PASSES)
    writer.exact_columns = True
    closed_lists = _lists(passes, writer)
    labels = _labels(passes, writer)
    members = _members(passes)
    creators = _creators(passes)
    _cards(passes, writer, closed_lists=closed_lists, labels=labels, members=members, creators=creators)
    _checklists(passes, writer)
    _comments(passes, writer)


def _lists(passes: Passes, writer: Writer) -> set[str]:
    """Every list as a status, in `pos` order; the ids of the closed ones."""
    lists = []
    with passes.next() as stream:
        for index, item in enumerate(json_items(stream, "lists.item", "lists")):
            where = f"lists[{index}]"
            item = mapping(item, where)
            lists.append((_position(item.get("pos"), where), index, text_of(item.get("id"), where=f"{where}.id"),
                          text_of(item.get("name"), where=f"{where}.name").strip() or "List", bool(item.get("closed"))))
    for _, _, list_id, name, _ in sorted(lists):
        slug, category = DEFAULT_COLUMNS.get(name.lower(), ("", "todo"))
        writer.status(StatusRow(key=list_id, label=name, slug=slug, category=category))
    return {list_id for *_, list_id, _, closed in lists if closed}


def _labels(passes: Passes, writer: Writer) -> dict[str, str]:
    """Tag names by label id: a label's name, or its color when it has none."""
    names = {}
    with passes.next() as stream:
        for index, item in enumerate(json_items(stream, "labels.item", "labels")):
            where = f"labels[{index}]"
            item = mapping(item, where)
            color = text_of(item.get("color"), where=f"{where}.color")
            name = text_of(item.get("name"), where=f"{where}.name").strip() or color
            tag = writer.tag(TagRow(name=name, color=COLORS.get(color, "")))
            if tag is not None:
                names[text_of(item.get("id"), where=f"{where}.id")] = tag.name
    return names


def _members(passes: Passes) -> dict[str, Person]:
    people = {}
    with passes.next() as stream:
        for index, item in enumerate(json_items(stream, "members.item", "members")):
            where = f"members[{index}]"
            item = mapping(item, where)
            people[text_of(item.get("id"), where=f"{where}.id")] = Person(
                username=text_of(item.get("username"), where=f"{where}.username"),
                name=text_of(item.get("fullName"), where=f"{where}.fullName"))
    return people


def _creators(passes: Passes) -> dict[str, Person]:
    """Who created each card, by card id, from its `createCard` action (a board's export may have left it out:
    that card's creator is then the importer)."""
    creators = {}
    for where, action in _actions(passes, "createCard"):
        card = mapping(mapping(action.get("data") or {}, f"{where}.data").get("card") or {}, f"{where}.data.card")
        creators[str(card.get("id"))] = _member_creator(action, where)
    return creators


def _cards(passes: Passes, writer: Writer, *, closed_lists: set[str], labels: dict[str, str],
           members: dict[str, Person], creators: dict[str, Person]) -> None:
    report = writer.report
    with passes.next() as stream:
        for index, card in enumerate(json_items(stream, "cards.item", "cards")):
            where = f"cards[{index}]"
            card = mapping(card, where)
            card_id = text_of(card.get("id"), where=f"{where}.id")
            list_id = text_of(card.get("idList"), where=f"{where}.idList")
            if list_id not in writer.status_of:
                raise TransferFailed(f"{where}.idList: no such list")
            tags = []
            for label_id in card.get("idLabels") or []:
                if label_id in labels:
                    tags.append(labels[label_id])
                else:
                    report.skip(f"{where}.idLabels", f"no such label: {label_id}")
            updated_at = parse_time(card.get("dateLastActivity"), where=f"{where}.dateLastActivity", report=report)
            archived = bool(card.get("closed")) or list_id in closed_lists
            writer.ticket(TicketRow(
                key=card_id, where=where, status=list_id,
                title=text_of(card.get("name"), where=f"{where}.name"),
                description=_with_links(text_of(card.get("desc"), where=f"{where}.desc"), card.get("attachments")),
                number=card.get("idShort") if isinstance(card.get("idShort"), int) else None,
                deadline=parse_day(card.get("due"), where=f"{where}.due", report=report),
                position=_position(card.get("pos"), where), created_at=_created_at(card_id), updated_at=updated_at,
                archived_at=(updated_at or datetime.now(UTC)) if archived else None, creator=creators.get(card_id),
                assignees=[members.get(member_id, Person(name=str(member_id)))
                           for member_id in card.get("idMembers") or []],
                tags=tags))


def _checklists(passes: Passes, writer: Writer) -> None:
    """Each card's checklist: the items of its checklists, checklist after checklist in `pos` order, each
    one's items in `pos` order. A first pass reads only where each checklist stands and how many items it has."""
    places = defaultdict(list)  # card id → [(pos, checklist id, item count)]
    for _, checklist in _each_checklist(passes):
        places[str(checklist.get("idCard"))].append(
            (_position(checklist.get("pos"), "checklist"), str(checklist.get("id")), len(checklist.get("checkItems") or [])))
    offsets = {}
    for card_lists in places.values():
        start = 0
        for _, checklist_id, count in sorted(card_lists):
            offsets[checklist_id] = start
            start += count
    for where, checklist in _each_checklist(passes):
        items = [mapping(item, f"{where}.checkItems") for item in checklist.get("checkItems") or []]
        ordered = sorted(enumerate(items), key=lambda pair: (_position(pair[1].get("pos"), where), pair[0]))
        for rank, (index, item) in enumerate(ordered):
            item_where = f"{where}.checkItems[{index}]"
            writer.checklist_item(ChecklistRow(
                key=text_of(item.get("id"), where=f"{item_where}.id"), ticket=str(checklist.get("idCard")),
                where=item_where, text=text_of(item.get("name"), where=f"{item_where}.name"),
                done=item.get("state") == "complete", position=offsets[str(checklist.get("id"))] + rank))


def _each_checklist(passes: Passes):
    with passes.next() as stream:
        for index, checklist in enumerate(json_items(stream, "checklists.item", "checklists")):
            yield f"checklists[{index}]", mapping(checklist, f"checklists[{index}]")


def _comments(passes: Passes, writer: Writer) -> None:
    for where, action in _actions(passes, "commentCard"):
        data = mapping(action.get("data") or {}, f"{where}.data")
        card = mapping(data.get("card") or {}, f"{where}.data.card")
        writer.comment(CommentRow(
            key=text_of(action.get("id"), where=f"{where}.id"), ticket=str(card.get("id")), where=where,
            text=text_of(data.get("text"), where=f"{where}.data.text"), author=_member_creator(action, where),
            created_at=parse_time(action.get("date"), where=f"{where}.date", report=writer.report)))


def _actions(passes: Passes, kind: str):
    """The board's actions of one type, with where each one stands."""
    with passes.next() as stream:
        for index, action in enumerate(json_items(stream, "actions.item", "actions")):
            where = f"actions[{index}]"
            action = mapping(action, where)
            if action.get("type") == kind:
                yield where, action


def _member_creator(action: dict, where: str) -> Person:
    creator = mapping(action.get("memberCreator") or {}, f"{where}.memberCreator")
    return Person(username=text_of(creator.get("username"), where=f"{where}.memberCreator.username"),
                  name=text_of(creator.get("fullName"), where=f"{where}.memberCreator.fullName"))


def _position(value, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TransferFailed(f"{where}.pos: a number expected")
    return int(min(max(value, 0), POSITION_MAX) * POSITION_SCALE)


def _created_at(card_id: str) -> datetime | None:
    """Trello ids are MongoDB ObjectIds, whose first 8 hex digits are the second the card was created."""
    try:
        return datetime.fromtimestamp(int(card_id[:8], 16), UTC)
    except (ValueError, OverflowError):
        return None


def _with_links(description: str, attachments) -> str:
    """The card's attachments as links below its description (never fetched)."""
    links = [f"- [{attachment.get('name') or attachment.get('url')}]({attachment.get('url')})"
             for attachment in attachments or [] if isinstance(attachment, dict) and attachment.get("url")]
    if not links:
        return description
    return "\n\n".join(filter(None, [description, "Attachments:\n" + "\n".join(links)]))
