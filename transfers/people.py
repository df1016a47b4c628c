"""The people of a source, matched to users of the service (decisions.md, "Import and export": People)."""

from accounts.models import User
from projects.models import Membership
from projects.roles import Role

from .rows import Person


class People:
    """A person whose username (else e-mail) is that of exactly one active user is that user; a matched user who
    is not a member of the project becomes a viewer when the import commits. Everyone else is unmatched: named
    in the report, their comments credited in the text, their assignments dropped."""

    def __init__(self, *, project_id: int, source_label: str):
        self.project_id, self.source_label = project_id, source_label
        self.members = set(Membership.objects.filter(project_id=project_id).values_list("user_id", flat=True))
        self.found: dict[Person, User | None] = {}
        self.matched: dict[str, None] = {}  # usernames, in the order met
        self.unmatched: dict[str, None] = {}

    def user(self, person: Person | None) -> User | None:
        if person is None:
            return None
        if person not in self.found:
            user = _by(username=person.username) or _by(email=person.email)
            self.found[person] = user
            if user is None:
                self.unmatched[person.label] = None
            else:
                self.matched[user.username] = None
        return self.found[person]

    def credited(self, person: Person | None, text: str) -> str:
        """The text of someone unmatched begins with who wrote it."""
        if person is None or self.user(person) is not None:
            return text
        return f"**{person.label}** (imported from {self.source_label}): {text}"

    def add_viewers(self) -> None:
        """Matched users who are not members of the project join it as viewers."""
        users = {user.pk for user in self.found.values() if user is not None} - self.members
        Membership.objects.bulk_create([Membership(project_id=self.project_id, user_id=user_id, role=Role.VIEWER)
                                        for user_id in sorted(users)], ignore_conflicts=True)
        self.members |= users

    def summary(self) -> dict:
        return {"matched": sorted(self.matched), "unmatched": sorted(self.unmatched)}


def _by(**field: str) -> User | None:
    """The one active user whose field equals the value (exactly, else ignoring case), or None."""
    (name, value), = field.items()
    if not value:
        return None
    users = User.objects.filter(is_active=True)
    exact = list(users.filter(**{name: value})[:2])
    if len(exact) == 1:
        return exact[0]
    loose = list(users.filter(**{f"{name}__iexact": value})[:2])
    return loose[0] if len(loose) == 1 else None
