"""The live board: one websocket per viewer, relaying the project's board frames (see broadcast.py)."""

from channels.db import database_sync_to_async

from accounts.consumers import AuthenticatedSocketConsumer, member_group
from core.lookups import any_of
from events.replay import FrameCursor, InvalidSince, since_of
from projects.models import Membership

from .broadcast import board_group


@database_sync_to_async
def is_member(project_id: int, user_id: int) -> bool:
    return Membership.objects.filter(project_id=project_id, user_id=user_id).exists()


class BoardConsumer(AuthenticatedSocketConsumer):
    """Behind accounts.websocket's middleware: `scope["user"]` is authenticated."""

    kind = "board"

    def access_groups(self) -> list[str]:
        return [*super().access_groups(), member_group(self.project_id, self.user.pk)]

    @classmethod
    def without_access(cls, sockets: list["BoardConsumer"]) -> list["BoardConsumer"]:
        """Also the viewers who are no longer members of their board's project."""
        members = set(Membership.objects.filter(any_of("project_id", {socket.project_id for socket in sockets}),
                                                any_of("user_id", {socket.user.pk for socket in sockets}))
                      .values_list("project_id", "user_id"))
        ended = set(super().without_access(sockets))
        return [socket for socket in sockets if socket in ended or (socket.project_id, socket.user.pk) not in members]

    async def connect(self):
        self.project_id = self.scope["url_route"]["kwargs"]["project_id"]
        try:
            since = since_of(self.scope["query_string"])
        except InvalidSince:
            await self.close()  # a page only ever sends a seq it was given: refused like any bad handshake
            return
        if not await is_member(self.project_id, self.user.pk):
            await self.close()  # before accept: the handshake is refused (HTTP 403)
            return
        self.cursor = FrameCursor(self.project_id)
        # Joined before the log is read: what commits meanwhile waits in this channel, and `follow`
        # drops what the replay already sent (events/replay.py).
        self.groups.append(board_group(self.project_id))  # left again on disconnect
        await self.channel_layer.group_add(board_group(self.project_id), self.channel_name)
        await self.accept()
        if since is not None:
            for frame in await self.cursor.resume(since):
                await self.send_json(frame)

    async def board_frames(self, message):
        if self.allowed:
            for frame in await self.cursor.follow(message["frames"]):
                await self.send_json(frame)
