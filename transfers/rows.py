"""What a source reads, whatever its format: the rows the writer (transfers.writer) maps onto a project.

Every row carries `key`, its id in the source (what makes a repeated import find it again), and `where`, the
place in the file it came from ("cards[12]"), which every message about it names.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import BinaryIO


@dataclass(frozen=True)
class Person:
    """Someone of the source: matched to a user of the service by username, else by e-mail."""

    username: str = ""
    email: str = ""
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or self.username or self.email or "someone"


@dataclass
class StatusRow:
    key: str
    label: str
    slug: str = ""  # "" derives it from the label, unless a status of that label exists
    category: str = "todo"
    color: str = ""
    icon: str = ""
    hidden: bool = False


@dataclass
class TicketRow:
    key: str
    where: str
    title: str
    status: str  # the key of a StatusRow given before
    number: int | None = None  # kept in a new project when free
    description: str = ""
    type: str = "feature"
    priority: str | None = None
    deadline: date | None = None
    story_points: int | None = None
    estimated_hours: Decimal | None = None
    position: int = 0  # order within its column, among the tickets of this import
    created_at: datetime | None = None
    updated_at: datetime | None = None
    archived_at: datetime | None = None
    deleted_at: datetime | None = None
    done_at: datetime | None = None
    creator: Person | None = None
    assignees: list[Person] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)  # names of TagRows given before


@dataclass
class TagRow:
    name: str
    color: str = ""


@dataclass
class CommentRow:
    key: str
    ticket: str
    where: str
    text: str
    author: Person | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None


@dataclass
class ChecklistRow:
    key: str
    ticket: str
    where: str
    text: str
    done: bool = False
    position: int = 0


@dataclass
class FileRow:
    """A file carried by the import, opened only when it is stored."""

    key: str
    where: str
    name: str
    size: int
    open: Callable[[], BinaryIO]
    sha256: str = ""
    uploaded_by: Person | None = None
    created_at: datetime | None = None
    ticket: str = ""  # for a ticket's file
    comment: str = ""  # the key of its comment, if it came with one


@dataclass
class TimeRow:
    key: str
    ticket: str
    where: str
    user: Person
    seconds: int
    is_running: int = 0
    started_at: datetime | None = None
    stopped_at: datetime | None = None
    note: str = ""
    created_at: datetime | None = None


@dataclass
class FolderRow:
    key: str
    where: str
    title: str
    parent: str = ""  # key of the parent folder, "" at the root
    slug: str = ""
    sort_order: int = 0
    created_by: Person | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None


@dataclass
class VersionRow:
    title: str
    content: str
    edited_by: Person | None = None
    created_at: datetime | None = None


@dataclass
class ArticleCommentRow:
    key: str
    where: str
    text: str
    author: Person | None = None
    created_at: datetime | None = None
    deleted_at: datetime | None = None


@dataclass
class ArticleRow:
    key: str
    where: str
    title: str
    folder: str = ""
    slug: str = ""
    content: str = ""
    sort_order: int = 0
    created_by: Person | None = None
    updated_by: Person | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None
    versions: list[VersionRow] = field(default_factory=list)
    comments: list[ArticleCommentRow] = field(default_factory=list)
    files: list[FileRow] = field(default_factory=list)
