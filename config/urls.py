from django.contrib import admin
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

import core.api.fields  # noqa: F401  (registers the <id:...> converter)
from accounts.forms import AdminLoginForm
from accounts.lockout import rate_limited_login
from accounts.views import closing_session_sockets
from core import health
from core.api import views as api_errors
from core.api.markdown import MarkdownViewSet

api_v1 = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file, so pages need no inline script (CSP).
    path("schema/swagger-ui/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    path("schema/redoc/", SpectacularRedocView.as_view(url_name="schema", template_name="api/redoc.html"), name="redoc"),
    path("markdown", MarkdownViewSet.as_view({"post": "render"}), name="markdown-render"),
    path("", include("projects.urls")),
    path("", include("tickets.urls")),
    path("", include("timetracking.urls")),
    path("", include("notifications.urls")),
    path("", include("docs_area.urls")),
    path("", include("events.urls")),
    path("", include("webhooks.urls")),
    path("", include("transfers.urls")),
]

admin.site.login_form = AdminLoginForm  # the admin's login is locked out like the site's

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("api/v1/", include(api_v1)),
    # Unknown API paths answer JSON 404 even with DEBUG on (Django's debug 404 page skips handler404),
    # whatever the method: a POST must not meet the CSRF check of session pages first (an HTML 403).
    re_path(r"^api/", csrf_exempt(api_errors.not_found)),
    # The admin's own login and logout routes, as the site's (rate limited; closing the session's sockets),
    # matched before the admin's URLs.
    path("admin/login/", rate_limited_login(admin.site.login)),
    path("admin/logout/", closing_session_sockets(admin.site.logout)),
    path("admin/", admin.site.urls),
    path("", include("tickets.page_urls")),
    path("", include("projects.page_urls")),
    path("", include("docs_area.page_urls")),
    path("", include("notifications.page_urls")),
    path("", include("accounts.urls")),
]

handler400 = api_errors.bad_request
handler403 = api_errors.permission_denied
handler404 = api_errors.not_found
handler500 = api_errors.server_error
