"""Getting hold of one row: found (or 404) for a request, locked again for a write, and the marker of a
field an update leaves as it is."""

from django.db.models import Model, QuerySet
from django.http import Http404


class _Unchanged:
    def __repr__(self) -> str:
        return "UNCHANGED"


# What an update was not given: distinct from None, which clears a field.
UNCHANGED = _Unchanged()


def found(rows: QuerySet, missing: str) -> Model:
    """The first row of `rows`, or a 404 saying `missing` ("ticket not found")."""
    row = rows.first()
    if row is None:
        raise Http404(missing)
    return row


def changed(rows: QuerySet, pk: int, missing: str, changes: dict) -> Model:
    """Row `pk` of `rows` read again under its lock (see locked) with `changes` saved: those fields only."""
    row = locked(rows, pk, missing)
    for field, value in changes.items():
        setattr(row, field, value)
    if changes:
        row.save(update_fields=list(changes))
    return row


def locked(rows: QuerySet, pk: int, missing: str) -> Model:
    """Row `pk` of `rows` read again under a lock of that row alone, so that concurrent writes to it queue
    instead of overwriting each other: the committed row, or a 404 when it is gone meanwhile.

    FOR NO KEY UPDATE: rows that merely point at it (history, links) are not held up. Its own columns only
    (no join): PostgreSQL re-checks a locking query's joins against the row a concurrent writer just
    committed, and a row whose foreign key changed meanwhile would no longer match its old join and vanish.
    """
    return found(rows.select_for_update(no_key=True).filter(pk=pk), missing)
