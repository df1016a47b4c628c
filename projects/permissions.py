"""Who may call what: each view's role table, checked once per request by HasProjectRole.

An entry is a least `Role`, or an `OwnerOr` rule for actions where owning the object counts
("the ticket's creator, otherwise a manager"). The table is the whole truth: no handler checks roles.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rest_framework.permissions import BasePermission

from .models import Membership
from .roles import Role

DENIED = "your role in this project does not allow this"


@dataclass(frozen=True)
class OwnerOr:
    """The object's owners whatever their role, or any member with at least `role` (None: the owners only)."""

    role: Role | None
    owners: Callable[[Any], Iterable[int | None]]  # the user ids that own the object
    message: str = DENIED

    def admits(self, membership: Membership, obj) -> bool:
        return membership.user_id in set(self.owners(obj)) or (
            self.role is not None and membership.has_role(self.role))


Rule = Role | OwnerOr


def admits(rule: Rule, membership: Membership, obj=None) -> bool:
    """Whether a rule of a role table lets this member act on `obj` (for services and pages too)."""
    if isinstance(rule, OwnerOr):
        return rule.admits(membership, obj)
    return membership.has_role(rule)


class HasProjectRole(BasePermission):
    """The view's `required_roles[action]`; an action left out needs the top role (fail closed).

    Reading `view.membership` and `view.object` resolves them first, so a missing object or a
    non-member answers 404 before any role is judged (403), and both before the body (422).
    """

    message = DENIED

    def has_permission(self, request, view):
        membership, obj = view.membership, view.object
        rule = view.required_roles.get(view.action, Role.MANAGER)
        if isinstance(rule, OwnerOr):
            self.message = rule.message
        return admits(rule, membership, obj)
