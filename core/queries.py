"""Query helpers that every app's selectors use."""

from django.db.models import QuerySet


def unique_row(queryset: QuerySet):
    """The one row of a queryset filtered on a unique key, or None.

    QuerySet.first() would add an ORDER BY on the primary key, which such a query does not need and which
    costs compiling on every request that runs it (token, membership, ticket lookups).
    """
    return next(iter(queryset[:1]), None)
