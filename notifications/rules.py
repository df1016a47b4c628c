"""Who is told of a ticket write, and in what words: called by the ticket services inside their transaction
(the tickets app builds on this one: a `ticket` here is whatever Ticket the service holds).

The rows are written there (one INSERT for all recipients), so they commit or roll back with the write;
their live delivery is registered for after commit. Nobody is told of their own action, and only current
members of the ticket's project are told anything.
"""

import re

from django.db.models import Q

from accounts.models import User
from projects.models import Membership

from . import broadcast
from .models import Notification, NotificationType

# `@name` not glued to a word before it (so an e-mail address is no mention), with the characters
# Django allows in a username.
MENTION = re.compile(r"(?<![\w@.+-])@([\w.@+-]+)")


def mentioned_usernames(text: str) -> set[str]:
    names = set()
    for match in MENTION.finditer(text):
        names.add(match.group(1))
        # "… ask @ada." ends a sentence: the dot may not be part of the name.
        names.add(match.group(1).rstrip("."))
    return names - {""}


def comment_added(*, ticket, message: str, actor: User) -> None:
    """The ticket's creator and assignees hear of the comment; a member it mentions gets a mention instead."""
    told = dict.fromkeys(_creator_and_assignees(ticket), NotificationType.REACTION)
    _notify(ticket, actor, told=told, mentioned=mentioned_usernames(message))


def comment_edited(*, ticket, old_message: str, new_message: str, actor: User) -> None:
    """Only the members the edit newly mentions: the comment itself was announced when it was added."""
    _notify(ticket, actor, mentioned=mentioned_usernames(new_message) - mentioned_usernames(old_message))


def ticket_moved(*, ticket, actor: User) -> None:
    _notify(ticket, actor, told=dict.fromkeys(_creator_and_assignees(ticket), NotificationType.STATUS_CHANGE))


def user_assigned(*, ticket, user_id: int, actor: User) -> None:
    _notify(ticket, actor, told={user_id: NotificationType.ASSIGNMENT})


def message_for(type: NotificationType, *, ticket, actor: User) -> str:
    who, ref = actor.display_name, ticket.prefix_ref
    return {
        NotificationType.REACTION: f"{who} commented on {ref}",
        NotificationType.MENTION: f"{who} mentioned you on {ref}",
        NotificationType.ASSIGNMENT: f"{who} assigned you to {ref}",
        NotificationType.STATUS_CHANGE: f"{who} moved {ref} to {ticket.status.label}",
    }[type]


def _creator_and_assignees(ticket) -> set[int]:
    return {ticket.created_by_id, *ticket.assignees.values_list("pk", flat=True)}


def _notify(ticket, actor: User, *, told: dict[int, NotificationType] | None = None,
            mentioned: set[str] = frozenset()) -> None:
    """Write one row per current member among `told` (user id: type) and the members `mentioned` by
    username (a mention replaces any other type for that user), except the actor; then deliver them."""
    told = told or {}
    if not told and not mentioned:
        return
    members = dict(Membership.objects.filter(project_id=ticket.project_id)
                   .filter(Q(user_id__in=told) | Q(user__username__in=mentioned))
                   .values_list("user_id", "user__username"))
    recipients = {user_id: type for user_id, type in told.items() if user_id in members}
    recipients.update({user_id: NotificationType.MENTION for user_id, name in members.items() if name in mentioned})
    recipients.pop(actor.pk, None)
    if not recipients:
        return
    notifications = Notification.objects.bulk_create(
        Notification(user_id=user_id, project_id=ticket.project_id, ticket=ticket, actor=actor, type=type,
                     message=message_for(type, ticket=ticket, actor=actor))
        for user_id, type in sorted(recipients.items())
    )
    broadcast.deliver_after_commit(notifications)
