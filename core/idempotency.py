"""Idempotency-Key on POST (decisions.md, "API conventions for integrators"; Stripe's and the IETF draft's
semantics): a retried request gets the answer of the first one again instead of acting twice.

The base view (core/api/base.py) claims the caller's key once the caller is known, before the handler runs,
and keeps the answer once it is rendered; it replays a kept answer only once the caller's access is checked
again (a caller who has lost it meanwhile is refused as any other). The claim is one INSERT that commits on its own: API views run in
autocommit (the services own their transactions), so a second process serving the same key at once finds
the row of whichever came first, thanks to the unique (caller, key) constraint, and answers 409 while the
first is served, then the kept answer.
"""

import hashlib
import json
import re
from datetime import datetime, timedelta

from django.db import connection
from django.http import HttpResponse
from django.utils import timezone
from rest_framework import exceptions

from .api.errors import IDEMPOTENCY_CONFLICT
from .models import IdempotencyKey

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEY = re.compile(r"[\x20-\x7e]{1,255}")
KEPT_FOR = timedelta(hours=24)
# A claim whose request never answered (its process died while serving it) is given up after this long, far
# beyond what a handler takes (an upload's body is read before its key is claimed): the key runs its request
# again rather than answer 409 for a day.
ABANDONED_AFTER = timedelta(minutes=5)
# The headers that describe a kept body, replayed with it; the others (rate limits, request ids) are the
# retry's own.
KEPT_HEADERS = ("Content-Type", "ETag")
# Uploaded files are hashed in pieces of this size, as they lie on disk or in memory.
CHUNK_SIZE = 64 * 1024


class MalformedKey(exceptions.APIException):
    status_code = 400
    default_detail = f"{HEADER} must be 1 to 255 printable ASCII characters"


class KeyReused(exceptions.APIException):
    status_code = 422
    default_detail = f"this {HEADER} was already used with another request (method, path or body)"


class KeyInFlight(exceptions.APIException):
    status_code = 409
    default_detail = f"a request with this {HEADER} is still being served: retry later"
    error_code = IDEMPOTENCY_CONFLICT
    wait = 1  # Retry-After, set by DRF's exception handler


class Replay(Exception):
    """The kept answer to a retried request, which the base view returns instead of running the handler."""

    def __init__(self, response: HttpResponse):
        super().__init__()
        self.response = response


def claim(request) -> int | None:
    """The id of the caller's claim on the key of this POST, or None when it carries no key (or no caller).

    Raises MalformedKey, KeyReused or KeyInFlight, or Replay with the kept answer of an earlier request.
    """
    key = request.META.get("HTTP_IDEMPOTENCY_KEY")
    if key is None or request.method != "POST" or not request.user.is_authenticated:
        return None
    if not KEY.fullmatch(key):
        raise MalformedKey()
    fingerprint = fingerprint_of(request)
    claimed = _insert_or_take_over(user_id=request.user.pk, key=key, fingerprint=fingerprint, now=timezone.now())
    if claimed is not None:
        return claimed
    kept = (IdempotencyKey.objects.filter(user_id=request.user.pk, key=key)
            .values_list("fingerprint", "status", "body", "headers").first())
    if kept is not None and kept[0] != fingerprint:
        raise KeyReused()
    if kept is None or kept[1] is None:  # served right now (or just given up after a server error: retry)
        raise KeyInFlight()
    _, status, body, headers = kept
    raise Replay(HttpResponse(bytes(body), status=status, headers={**headers, REPLAYED: "true"}))


def keep(claimed: int, response) -> None:
    """Keep the answer of a claimed request for its retries; a server error (5xx) frees the key instead."""
    if response.status_code >= 500:
        IdempotencyKey.objects.filter(pk=claimed).delete()
        return
    if not getattr(response, "is_rendered", True):
        response.render()
    _keep_answer(claimed, status=response.status_code, body=response.content,
                 headers={name: response[name] for name in KEPT_HEADERS if name in response})


def prune(*, batch: int = 1000) -> int:
    """Delete the keys older than 24 hours, in batches of short statements; how many went."""
    cutoff = timezone.now() - KEPT_FOR
    removed = 0
    while True:
        old = IdempotencyKey.objects.filter(created_at__lt=cutoff)
        ids = list(old.order_by("pk").values_list("pk", flat=True)[:batch])
        if not ids:
            return removed
        removed += IdempotencyKey.objects.filter(pk__in=ids, created_at__lt=cutoff).delete()[0]


def fingerprint_of(request) -> str:
    """What makes a retry the same request: its method, path (with the query string) and body. A multipart
    body is read as its fields and the bytes of its files, each file in pieces (spooled to disk when large),
    so the random boundary of each attempt does not count and a 200 MB upload is never held in memory."""
    media_type = request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()
    if media_type == "multipart/form-data":
        content = json.dumps(_multipart_parts(request)).encode()
    else:
        content = request.body  # at most REQUEST_BODY_MAX_SIZE: core.body_limit refused anything larger
    head = [request.method, request.get_full_path(), media_type, hashlib.sha256(content).hexdigest()]
    return hashlib.sha256(json.dumps(head).encode()).hexdigest()


def _multipart_parts(request) -> list:
    """The fields and files as the view's parsers read them (a view that takes no multipart answers 415)."""
    fields = sorted(request.POST.lists())
    files = [[name, [[file.name, _file_digest(file)] for file in uploaded]]
             for name, uploaded in sorted(request.FILES.lists())]
    return [fields, files]


def _file_digest(file) -> str:
    digest = hashlib.sha256()
    for chunk in file.chunks(CHUNK_SIZE):
        digest.update(chunk)
    file.seek(0)  # the handler reads the file next
    return digest.hexdigest()


# ---- the two statements of every keyed request --------------------------------------------------------------
#
# Each is one statement in autocommit (API views run in autocommit: the services own their transactions), which
# PostgreSQL commits without waiting for the disk: a keyed request then costs two round trips more than an
# unkeyed one, and no disk flush (on a busy machine each wait is a turn given up on the CPU). Other sessions
# see the row at once all the same. The claim reaches the disk before the handler's effect does (WAL is flushed
# in order); an answer lost to a database crash in the moment after (wal_writer_delay) leaves its key in
# flight, as a server process dying before keeping it does.
ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) AS commit_without_waiting_for_the_disk"


def _insert_or_take_over(*, user_id: int, key: str, fingerprint: str, now: datetime) -> int | None:
    """Claim the key: a new row, or the row of the same key when it has expired or was abandoned; None when a
    live row holds it. (The ORM's upsert can make neither its update conditional nor its commit asynchronous.)"""
    table, column = _table_and_columns()
    values = f"SELECT %s, %s, %s, %s FROM {ASYNC_COMMIT}" if connection.vendor == "postgresql" else (
        "VALUES (%s, %s, %s, %s)")
    sql = (
        f"INSERT INTO {table} ({column['user']}, {column['key']}, {column['fingerprint']}, {column['created_at']}) "
        f"{values} ON CONFLICT ({column['user']}, {column['key']}) DO UPDATE SET "
        f"{column['fingerprint']} = excluded.{column['fingerprint']}, "
        f"{column['created_at']} = excluded.{column['created_at']}, "
        f"{column['status']} = NULL, {column['body']} = NULL, {column['headers']} = NULL "
        f"WHERE {table}.{column['created_at']} < %s "
        f"OR ({table}.{column['status']} IS NULL AND {table}.{column['created_at']} < %s) "
        f"RETURNING {column['id']}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [user_id, key, fingerprint, _stored("created_at", now),
                             _stored("created_at", now - KEPT_FOR), _stored("created_at", now - ABANDONED_AFTER)])
        row = cursor.fetchone()
    return row[0] if row else None


def _keep_answer(claimed: int, *, status: int, body: bytes, headers: dict[str, str]) -> None:
    table, column = _table_and_columns()
    async_commit = f" FROM {ASYNC_COMMIT}" if connection.vendor == "postgresql" else ""
    sql = (f"UPDATE {table} SET {column['status']} = %s, {column['body']} = %s, {column['headers']} = %s"
           f"{async_commit} WHERE {table}.{column['id']} = %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [status, _stored("body", body), _stored("headers", headers), claimed])


def _table_and_columns() -> tuple[str, dict[str, str]]:
    """The quoted table name, and its quoted columns by field name."""
    meta, quote = IdempotencyKey._meta, connection.ops.quote_name
    return quote(meta.db_table), {field.name: quote(field.column) for field in meta.concrete_fields}


def _stored(field_name: str, value):
    """`value` as the model's field writes it on this database (a timestamp, bytes, JSON)."""
    return IdempotencyKey._meta.get_field(field_name).get_db_prep_save(value, connection)
