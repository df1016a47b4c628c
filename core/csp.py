"""Content-Security-Policy on every HTML page: scripts only from this origin's files (no inline script
anywhere: data for scripts travels in `json_script` blocks), sockets only to this origin.

Styles allow 'unsafe-inline': the board colours columns with a `style` custom property, Swagger UI's
page carries a `<style>` block and ReDoc injects its styles at run time; a style cannot run code.
"""

from django.core.exceptions import DisallowedHost

CSP_HEADER = "Content-Security-Policy"


def policy(host: str | None) -> str:
    # 'self' covers ws: and wss: of the same host only in recent browsers (CSP level 3): name them.
    sockets = f" ws://{host} wss://{host}" if host else ""
    directives = {
        "default-src": "'self'",
        "script-src": "'self'",
        "style-src": "'self' 'unsafe-inline'",
        "img-src": "'self' data:",
        "font-src": "'self' data:",
        "connect-src": f"'self'{sockets}",
        "worker-src": "'self' blob:",  # ReDoc runs its search in a worker made from a blob
        "object-src": "'none'",
        "base-uri": "'self'",
        "form-action": "'self'",
        "frame-ancestors": "'none'",
    }
    return "; ".join(f"{name} {value}" for name, value in directives.items())


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html") and CSP_HEADER not in response:
            try:
                host = request.get_host()
            except DisallowedHost:  # the 400 page of a request for another host
                host = None
            response[CSP_HEADER] = policy(host)
        return response
