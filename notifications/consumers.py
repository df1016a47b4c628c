"""The caller's notification stream: one websocket per open page or client, relaying notification frames."""

import time

from channels.db import database_sync_to_async

from accounts.consumers import ACCESS_LOST, AuthenticatedSocketConsumer
from accounts.models import ApiToken, User
from tickets.consumers import ACCESS_RECHECK_SECONDS

from .broadcast import notification_group


@database_sync_to_async
def still_admitted(user: User, token: ApiToken | None) -> bool:
    """The token is still usable (not revoked or expired, its user active); a session's user still active."""
    if token is not None:
        return ApiToken.objects.usable().filter(pk=token.pk).exists()
    return User.objects.filter(pk=user.pk, is_active=True).exists()


class NotificationConsumer(AuthenticatedSocketConsumer):
    """Behind accounts.websocket's middleware: `scope["user"]` is authenticated. Everyone has a stream
    of their own, so there is nothing more to check at the handshake."""

    async def connect(self):
        self.checked_at = time.monotonic()
        group = notification_group(self.user.pk)
        self.groups.append(group)  # left again on disconnect
        await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()

    async def notification_created(self, message):
        if not self.allowed:
            return
        # The safety net, as on the board: a change that sent no message is seen within a few seconds.
        if time.monotonic() - self.checked_at >= ACCESS_RECHECK_SECONDS:
            if not await still_admitted(self.user, self.token):
                self.allowed = False
                await self.close(code=ACCESS_LOST)
                return
            self.checked_at = time.monotonic()
        await self.send_json(message["frame"])
