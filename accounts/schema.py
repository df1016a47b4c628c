from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A personal API token: 64 hexadecimal characters, from /profile/api-access/.",
        }


class SameOriginSessionScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.SameOriginSessionAuthentication"
    name = "sessionAuth"

    def get_security_definition(self, auto_schema):
        from django.conf import settings

        return {
            "type": "apiKey",
            "in": "cookie",
            "name": settings.SESSION_COOKIE_NAME,
            "description": "The session of a browser logged in on this service's own pages, from its own origin "
                           "only; writes also need the CSRF token in `X-CSRFToken`.",
        }
