"""Who is told of a ticket write, and in what words: called by the ticket services inside their transaction
(the tickets app builds on this one: a `ticket` here is whatever Ticket the service holds).

Who may hear of a ticket comes from what the writing service holds (its creator and assignees, read once
with the ticket); `notify` then reads which of them are members, with their unread counts and what
their e-mail needs, and writes one row each in one INSERT, so they commit or roll back with the write; their
live delivery is registered for after commit, their e-mails are sent later (notifications/emails.py). Nobody
is told of their own action, and only current members of the ticket's project are told anything. `notify` is
the one place that writes notification rows.
"""

import re

from accounts.models import User

from . import broadcast, emails, selectors
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


def comment_added(*, ticket, followers: set[int], message: str, actor: User) -> None:
    """The ticket's followers (its creator and assignees) hear of the comment; a member it mentions gets a
    mention instead."""
    notify(ticket, actor, told=dict.fromkeys(followers, NotificationType.REACTION),
           mentioned=mentioned_usernames(message), quote=message)


def comment_edited(*, ticket, old_message: str, new_message: str, actor: User) -> None:
    """Only the members the edit newly mentions: the comment itself was announced when it was added."""
    notify(ticket, actor, mentioned=mentioned_usernames(new_message) - mentioned_usernames(old_message),
           quote=new_message)


def ticket_moved(*, ticket, followers: set[int], actor: User) -> None:
    notify(ticket, actor, told=dict.fromkeys(followers, NotificationType.STATUS_CHANGE))


def user_assigned(*, ticket, user_id: int, actor: User) -> None:
    notify(ticket, actor, told={user_id: NotificationType.ASSIGNMENT})


def message_for(type: NotificationType, *, ticket, actor: User) -> str:
    who, ref = actor.display_name, ticket.prefix_ref
    return {
        NotificationType.REACTION: f"{who} commented on {ref}",
        NotificationType.MENTION: f"{who} mentioned you on {ref}",
        NotificationType.ASSIGNMENT: f"{who} assigned you to {ref}",
        NotificationType.STATUS_CHANGE: f"{who} moved {ref} to {ticket.status.label}",
    }[type]


def notify(ticket, actor: User, *, told: dict[int, NotificationType] | None = None,
           mentioned: set[str] = frozenset(), quote: str = "") -> list[Notification]:
    """Write one row per current member among `told` (user id: type) and the members `mentioned` by
    username (a mention replaces any other type for that user), except the actor; then deliver them, and queue
    their e-mails (`quote`: the comment's text they cite). The rows written."""
    told = {user_id: type for user_id, type in (told or {}).items() if user_id != actor.pk}
    if not told and not mentioned:
        return []
    members = {member.user_id: member for member in selectors.members_with_unread_counts(
        project_id=ticket.project_id, user_ids=set(told), usernames=mentioned)}
    recipients = {user_id: type for user_id, type in told.items() if user_id in members}
    recipients.update({user_id: NotificationType.MENTION for user_id, member in members.items()
                       if member.username in mentioned})
    recipients.pop(actor.pk, None)
    if not recipients:
        return []
    notifications = Notification.objects.bulk_create(
        Notification(user_id=user_id, project_id=ticket.project_id, ticket=ticket, actor=actor, type=type,
                     message=message_for(type, ticket=ticket, actor=actor),
                     **emails.email_fields(members[user_id], type, quote=quote))
        for user_id, type in sorted(recipients.items())
    )
    # Each recipient has one more unread notification than the count read with them.
    broadcast.deliver_after_commit(notifications, unread_counts={
        user_id: members[user_id].unread + 1 for user_id in recipients})
    return notifications
