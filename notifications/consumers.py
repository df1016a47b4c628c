"""The caller's notification stream: one websocket per open page or client, relaying notification frames."""

from accounts.consumers import AuthenticatedSocketConsumer

from .broadcast import notification_group


class NotificationConsumer(AuthenticatedSocketConsumer):
    """Behind accounts.websocket's middleware: `scope["user"]` is authenticated. Everyone has a stream
    of their own, so there is nothing more to check at the handshake."""

    kind = "notifications"

    async def connect(self):
        group = notification_group(self.user.pk)
        self.groups.append(group)  # left again on disconnect
        await self.channel_layer.group_add(group, self.channel_name)
        await self.accept()

    async def notification_created(self, message):
        if self.allowed:
            await self.send_json(message["frame"])
