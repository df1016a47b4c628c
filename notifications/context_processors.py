from django.utils.functional import SimpleLazyObject

from . import selectors


def unread_notifications(request) -> dict:
    """The header badge's first value: one query, and only on pages that show it to a logged-in user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"unread_notification_count": SimpleLazyObject(lambda: selectors.unread_count(user=user))}
