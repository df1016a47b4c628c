"""The unsubscribe page of notification e-mails (notifications/unsubscribe.py), for people without a login."""

from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from accounts import services as account_services
from accounts.models import EmailNotifications

from .unsubscribe import InvalidLink, user_of


# RFC 8058 one-click: the mail client POSTs `List-Unsubscribe=One-Click` on its own, with no cookie and so no
# CSRF token. The signed token in the path is what authorizes the POST; a forged cross-site POST cannot carry a
# valid one without having the e-mail, and all it can do is turn that user's e-mails off.
@csrf_exempt
@never_cache
@require_http_methods(["GET", "POST"])
def unsubscribe(request, token: str):
    """GET: a page with a button that turns the e-mails off; POST (that button, or a mail client): turns them off."""
    try:
        user = user_of(token)
    except InvalidLink:
        return render(request, "notifications/unsubscribe_invalid.html", status=400)
    if request.method == "POST":
        account_services.update_profile(user=user, email_notifications=EmailNotifications.OFF)
        return render(request, "notifications/unsubscribed.html", {"subscriber": user})
    return render(request, "notifications/unsubscribe.html", {"subscriber": user})
