"""What a server process keeps doing on its own, per event loop, while it has anything to do it for."""

import asyncio
import logging
import weakref

logger = logging.getLogger(__name__)


class Periodic:
    """The items one event loop holds (`items`), and a task that runs `tick()` every `period()` seconds while it
    holds any; a tick that fails is logged, and the next one tries again. Each subclass has one instance per
    loop: `of_this_loop()`."""

    _of_loop: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Periodic]"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._of_loop = weakref.WeakKeyDictionary()

    def __init__(self):
        self.items: set = set()
        self.task: asyncio.Task | None = None

    @classmethod
    def of_this_loop(cls):
        loop = asyncio.get_running_loop()
        instance = cls._of_loop.get(loop)
        if instance is None:
            instance = cls._of_loop[loop] = cls()
        return instance

    def period(self) -> float:
        raise NotImplementedError

    async def tick(self) -> None:
        raise NotImplementedError

    def add(self, item) -> None:
        self.items.add(item)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self.run())

    def discard(self, item) -> None:
        self.items.discard(item)

    async def run(self) -> None:
        while self.items:
            await asyncio.sleep(self.period())
            try:
                await self.tick()
            except Exception:  # a database or Redis hiccup: the next period tries again
                logger.exception("%s failed", type(self).__name__)
