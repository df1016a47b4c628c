"""The live board: one websocket per viewer, relaying the project's board frames (see broadcast.py)."""

import time
from dataclasses import dataclass

from channels.db import database_sync_to_async

from accounts.consumers import ACCESS_LOST, AuthenticatedSocketConsumer, member_group
from accounts.models import ApiToken
from events.replay import FrameCursor, InvalidSince, since_of
from projects.models import Membership

from .broadcast import board_group

# The services close a viewer's socket at once when access ends (accounts/consumers.py). As a safety
# net for changes that send no message, the board's audience is also re-read, before relaying a frame,
# once the last reading is this old.
ACCESS_RECHECK_SECONDS = 5.0


@dataclass(frozen=True)
class BoardAudience:
    """Who may watch one board: the project's active members, and the usable tokens of its members."""

    user_ids: frozenset[int]
    token_ids: frozenset[int]
    read_at: float

    def admits(self, user, token: ApiToken | None) -> bool:
        return user.pk in self.user_ids and (token is None or token.pk in self.token_ids)


# The last audience read for each board, shared by the viewers this process holds: keeping it current
# costs two queries per board and period whatever the number of viewers, not a query per viewer.
audiences: dict[int, BoardAudience] = {}
being_read: set[int] = set()


@database_sync_to_async
def read_audience(project_id: int) -> BoardAudience:
    users = Membership.objects.filter(project_id=project_id, user__is_active=True).values_list("user_id", flat=True)
    tokens = ApiToken.objects.usable().filter(user__memberships__project_id=project_id).values_list("pk", flat=True)
    audiences[project_id] = BoardAudience(frozenset(users), frozenset(tokens), read_at=time.monotonic())
    return audiences[project_id]


async def current_audience(project_id: int) -> BoardAudience:
    audience = audiences[project_id]
    if time.monotonic() - audience.read_at >= ACCESS_RECHECK_SECONDS and project_id not in being_read:
        # One viewer re-reads; the others go on with the previous reading until it is back.
        being_read.add(project_id)
        try:
            audience = await read_audience(project_id)
        finally:
            being_read.discard(project_id)
    return audience


class BoardConsumer(AuthenticatedSocketConsumer):
    """Behind accounts.websocket's middleware: `scope["user"]` is authenticated."""

    def access_groups(self) -> list[str]:
        return [*super().access_groups(), member_group(self.project_id, self.user.pk)]

    async def connect(self):
        self.project_id = self.scope["url_route"]["kwargs"]["project_id"]
        # Read afresh, never from the shared reading: a member added a moment ago is let in at once.
        try:
            since = since_of(self.scope["query_string"])
        except InvalidSince:
            await self.close()  # a page only ever sends a seq it was given: refused like any bad handshake
            return
        if not (await read_audience(self.project_id)).admits(self.user, self.token):
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
        if not self.allowed:
            return
        if (await current_audience(self.project_id)).admits(self.user, self.token):
            for frame in await self.cursor.follow(message["frames"]):
                await self.send_json(frame)
        else:
            self.allowed = False
            await self.close(code=ACCESS_LOST)
