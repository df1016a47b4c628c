from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from .models import Membership
from .roles import Role, rank_of


class HasProjectRole(BasePermission):
    """The view's `required_roles[action]`; an action left out needs the top role (fail closed)."""

    message = "your role in this project does not allow this"

    def has_permission(self, request, view):
        required = view.required_roles.get(view.action, Role.MANAGER)
        return view.membership.rank >= rank_of(required)


def require_owner_or_role(*, membership: Membership, owner_ids: set[int | None], role: Role) -> None:
    """For rules like "the ticket's creator, otherwise a manager": 403 unless one holds."""
    if membership.user_id not in owner_ids and not membership.has_role(role):
        raise PermissionDenied(HasProjectRole.message)
