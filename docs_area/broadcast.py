"""Documentation events, kept in the project's event log and sent to its board viewers (events.publish)."""

from accounts.models import User
from core.events import Event
from events.publish import announce

from .models import Article, Folder
from .serializers import ArticleOutput, DocsFolderOutput


def announce_article(event: Event, *, article: Article, actor: User) -> None:
    announce(project_id=article.project_id, actor=actor,
             frames=[{"event": event, "article": ArticleOutput(article).data}])


def announce_folder(*, folder: Folder, actor: User) -> None:
    """Created, renamed, moved or deleted (`deleted` true: its content moved up to its parent)."""
    announce(project_id=folder.project_id, actor=actor, frames=[{
        "event": Event.DOCS_FOLDER_CHANGED, "folder": DocsFolderOutput(folder).data,
        "deleted": folder.deleted_at is not None}])
