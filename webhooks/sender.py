"""The process's webhook sender: one asyncio event loop, on a thread of its own, holding every exchange in flight.

Sending is waiting: an attempt costs a socket and a coroutine while its endpoint takes its time, never a thread,
so a process holds thousands at once and an endpoint that hangs delays no other. It runs wherever background
work runs (core/background.py, BACKGROUND_SERVICES): in the Celery worker of the Procfile's `worker:` line, or in
the web process without a broker. The `deliver` task (webhooks/tasks.py) hands it delivery ids; the rows say the
rest.

What it does with them:
- queues each behind its endpoint; an endpoint holds at most WEBHOOK_ENDPOINT_CONCURRENCY attempts that have
  taken over a second (all its attempts count once its last one failed), and at most ENDPOINT_CEILING at all: a
  healthy endpoint is sent a burst as fast as it answers, one that hangs holds a few sockets; the rest of its
  messages wait here (their hand-out renewed, so the sweep does not take them for lost);
- takes the next attempt in turn from each project that has one, then from each of its endpoints, so that one
  project's backlog or hung endpoints never delay another's deliveries (at most WEBHOOK_MAX_IN_FLIGHT attempts at
  once per process);
- claims what it sends before sending (webhooks/attempts.py), a batch at a time, and records the outcomes a batch
  at a time: the database work runs on two threads of its own, off the loop;
- sends each within one deadline, to an address it checked (webhooks/delivery.py).
"""

import asyncio
import logging
import resource
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import uvloop
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import close_old_connections, connections
from django.utils import timezone

from . import attempts
from .delivery import Exchange, Failure, post, unsent
from .models import Delivery

logger = logging.getLogger(__name__)

# Threads for host lookups (getaddrinfo cannot wait asynchronously): one stuck on a silent name server is given
# back at the system resolver's timeout; the attempt itself ends at its deadline.
RESOLVER_THREADS = 32
# Attempts one healthy endpoint may hold at once, however fast it answers: what an endpoint that starts hanging in
# the middle of a burst holds until its deadline.
ENDPOINT_CEILING = 32
SLOW_SECONDS = 1.0


@dataclass(eq=False)
class Project:
    project_id: int
    endpoints: int = 0  # those known here
    ready: deque = field(default_factory=deque)  # its endpoints that can send, in turn


@dataclass(eq=False)
class Endpoint:
    webhook_id: int
    project: Project
    waiting: deque = field(default_factory=deque)  # delivery ids, oldest first
    started: dict = field(default_factory=dict)  # delivery id → when its attempt began (monotonic), in flight
    failing: bool = False  # its last attempt failed
    in_turn: bool = False  # in its project's `ready`

    @property
    def in_flight(self) -> int:
        return len(self.started)

    def can_send(self) -> bool:
        if not self.waiting or self.in_flight >= ENDPOINT_CEILING:
            return False
        if self.failing:
            return self.in_flight < settings.WEBHOOK_ENDPOINT_CONCURRENCY
        slow_since = time.monotonic() - SLOW_SECONDS
        slow = sum(1 for started in self.started.values() if started < slow_since)
        return slow < settings.WEBHOOK_ENDPOINT_CONCURRENCY


class Sender:
    def __init__(self):
        # uvloop (already the web server's): opening, writing and closing a connection cost the loop about half
        # the CPU of asyncio's own (bench/RESULTS.md, "webhooks").
        self.loop = uvloop.new_event_loop()
        self.database = ThreadPoolExecutor(max_workers=2, thread_name_prefix="webhook-database")
        self.resolver = ThreadPoolExecutor(max_workers=RESOLVER_THREADS, thread_name_prefix="webhook-resolve")
        self.held: set[int] = set()  # the delivery ids queued here or in flight
        self.endpoints: dict[int, Endpoint] = {}
        self.projects: dict[int, Project] = {}
        self.ready: deque[Project] = deque()  # projects with an endpoint that can send, in turn
        self.incoming: list[int] = []
        self.results: list[tuple[Delivery, Exchange]] = []
        self.in_flight = 0
        self.stopping = False
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._run, name="webhook-sender", daemon=True)
        self.thread.start()
        self.started.wait()

    # ---- from any thread ------------------------------------------------------------------------------------

    def submit(self, delivery_ids: list[int]) -> None:
        self.loop.call_soon_threadsafe(self._take, delivery_ids)

    def stop(self, timeout: float) -> None:
        """Take nothing more; the attempts in flight end (within their deadline, at most `timeout`) and are
        recorded. What waits here is left to the sweep of a process that runs on (its hand-out is not renewed)."""
        future = asyncio.run_coroutine_threadsafe(self._drain(), self.loop)
        try:
            future.result(timeout)
        except TimeoutError:
            logger.warning("webhook sender stopped with %d attempts still in flight", self.in_flight)
        asyncio.run_coroutine_threadsafe(self._cancel_all(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.loop.close()
        self.database.shutdown(wait=True)
        self.resolver.shutdown(wait=False, cancel_futures=True)

    # ---- on the loop ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.work = asyncio.Event()
        self.recorded = asyncio.Event()
        self.tasks = {self.loop.create_task(loop()) for loop in (self._claim_loop, self._record_loop,
                                                                    self._renew_loop)}
        self.loop.call_soon(self.started.set)
        self.loop.run_forever()

    def _take(self, delivery_ids: list[int]) -> None:
        if not self.stopping:
            self.incoming.extend(delivery_ids)
            self.work.set()

    async def _in_database(self, function, *args, **kwargs):
        return await self.loop.run_in_executor(self.database, _with_connections, function, args, kwargs)

    async def _claim_loop(self) -> None:
        """Queue what came in behind its endpoint, then claim and start what may be sent now. While one round
        waits for the database, what comes in meanwhile gathers for the next: batches grow with the load."""
        while True:
            await self.work.wait()
            self.work.clear()
            try:
                await self._queue_incoming()
                admitted = self._admit()
                if admitted:
                    await self._start(admitted)
            except Exception:
                logger.exception("webhook sender: a round failed; its deliveries are left to the sweep")

    async def _queue_incoming(self) -> None:
        new = [delivery_id for delivery_id in dict.fromkeys(self.incoming) if delivery_id not in self.held]
        self.incoming = []
        if not new:
            return
        self.held.update(new)
        try:
            found = await self._in_database(attempts.queued, new)
        finally:
            self.held.difference_update(new)
        for queued in found:
            self.held.add(queued.delivery_id)
            endpoint = self._endpoint(queued.webhook_id, queued.project_id)
            endpoint.waiting.append(queued.delivery_id)
            self._take_turn_if_ready(endpoint)

    def _endpoint(self, webhook_id: int, project_id: int) -> Endpoint:
        endpoint = self.endpoints.get(webhook_id)
        if endpoint is None:
            project = self.projects.get(project_id)
            if project is None:
                project = self.projects[project_id] = Project(project_id)
            project.endpoints += 1
            endpoint = self.endpoints[webhook_id] = Endpoint(webhook_id, project)
        return endpoint

    def _take_turn_if_ready(self, endpoint: Endpoint) -> None:
        if endpoint.in_turn or not endpoint.can_send():
            return
        project = endpoint.project
        if not project.ready:
            self.ready.append(project)
        project.ready.append(endpoint)
        endpoint.in_turn = True

    def _admit(self) -> list[tuple[int, Endpoint]]:
        """The next attempts to send: one from each project in turn, and within a project one from each of its
        endpoints in turn, while the process has room."""
        admitted = []
        while self.ready and self.in_flight < settings.WEBHOOK_MAX_IN_FLIGHT:
            project = self.ready.popleft()
            endpoint = project.ready.popleft()
            endpoint.in_turn = False
            if endpoint.can_send():  # its attempts may have grown slow since it took its turn
                delivery_id = endpoint.waiting.popleft()
                endpoint.started[delivery_id] = time.monotonic()
                self.in_flight += 1
                admitted.append((delivery_id, endpoint))
                if endpoint.can_send():
                    project.ready.append(endpoint)
                    endpoint.in_turn = True
            if project.ready:
                self.ready.append(project)
        return admitted

    async def _start(self, admitted: list[tuple[int, Endpoint]]) -> None:
        endpoint_of = {delivery_id: endpoint for delivery_id, endpoint in admitted}
        now = timezone.now()
        try:
            claimed = await self._in_database(attempts.claim, list(endpoint_of), now=now)
            inactive = [delivery for delivery in claimed if not delivery.webhook.active]
            if inactive:
                await self._in_database(attempts.fail_inactive, inactive)
        except Exception:
            claimed = []  # none is sent: the sweep hands them out again
            logger.exception("webhook sender: %d deliveries not claimed", len(endpoint_of))
        sending = {delivery.pk for delivery in claimed if delivery.webhook.active}
        for delivery_id in set(endpoint_of) - sending:  # done, not due, held by another sender, or switched off
            self._finished(delivery_id, endpoint_of[delivery_id])
        for delivery in claimed:
            if delivery.pk in sending:
                endpoint = endpoint_of[delivery.pk]
                endpoint.failing = endpoint.failing or delivery.webhook.failing_since is not None
                self.loop.create_task(self._attempt(delivery, endpoint, now))

    async def _attempt(self, delivery: Delivery, endpoint: Endpoint, now) -> None:
        try:
            try:
                body, headers = attempts.message(delivery, now)
            except InvalidToken:  # sealed under another DJANGO_SECRET_KEY (a restored dump): a new secret is needed
                exchange = unsent(Failure.SECRET, attempts.UNREADABLE_SECRET)
            else:
                exchange = await post(delivery.webhook.url, body=body, headers=headers,
                                      timeout=settings.WEBHOOK_TIMEOUT_SECONDS, resolver=self.resolver)
            self.results.append((delivery, exchange))
            self.recorded.set()
            endpoint.failing = attempts.outcome_of(exchange) is not attempts.Outcome.DELIVERED
        finally:
            self._finished(delivery.pk, endpoint)

    def _finished(self, delivery_id: int, endpoint: Endpoint) -> None:
        del endpoint.started[delivery_id]
        self.in_flight -= 1
        self.held.discard(delivery_id)
        self._take_turn_if_ready(endpoint)
        if not endpoint.waiting and not endpoint.in_flight:  # forgotten until it gets a message again
            del self.endpoints[endpoint.webhook_id]
            endpoint.project.endpoints -= 1
            if not endpoint.project.endpoints:
                del self.projects[endpoint.project.project_id]
        self.work.set()

    async def _record_loop(self) -> None:
        while True:
            await self.recorded.wait()
            self.recorded.clear()
            batch, self.results = self.results, []
            if batch:
                try:
                    await self._in_database(attempts.record, batch)
                except Exception:
                    logger.exception("webhook sender: %d outcomes were not recorded (sent again later)", len(batch))

    async def _renew_loop(self) -> None:
        """Every third of WEBHOOK_LOST_AFTER_SECONDS, the deliveries waiting here for their endpoint are marked
        as still in hand."""
        while True:
            await asyncio.sleep(settings.WEBHOOK_LOST_AFTER_SECONDS / 3)
            waiting = [delivery_id for endpoint in self.endpoints.values() for delivery_id in endpoint.waiting]
            try:
                for start in range(0, len(waiting), 1000):
                    await self._in_database(attempts.renew_hand_outs, waiting[start:start + 1000],
                                            now=timezone.now())
            except Exception:
                logger.exception("webhook sender: hand-outs not renewed")

    async def _cancel_all(self) -> None:
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _drain(self) -> None:
        self.stopping = True
        for endpoint in self.endpoints.values():
            endpoint.waiting.clear()
        self.ready.clear()
        while self.in_flight or self.results:
            self.recorded.set()
            await asyncio.sleep(0.05)


def _with_connections(function, args, kwargs):
    """A database call on one of the sender's threads, its connection given back to the pool after."""
    close_old_connections()
    try:
        return function(*args, **kwargs)
    finally:
        connections.close_all()


_sender: Sender | None = None
_lock = threading.Lock()


def sender() -> Sender:
    """This process's sender, started at its first use."""
    global _sender
    with _lock:
        if _sender is None:
            _raise_open_files_limit()
            _sender = Sender()
        return _sender


def submit(delivery_ids: list[int]) -> None:
    sender().submit(delivery_ids)


def start() -> None:
    """BACKGROUND_SERVICES: started with the process that does background work."""
    sender()


def stop() -> None:
    """Stop this process's sender, if it runs: its attempts in flight end first (their deadline at most)."""
    global _sender
    with _lock:
        if _sender is not None:
            _sender.stop(timeout=settings.WEBHOOK_TIMEOUT_SECONDS + 5)
            _sender = None


def _raise_open_files_limit() -> None:
    """Each attempt in flight holds a socket: the soft limit of open files goes up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
