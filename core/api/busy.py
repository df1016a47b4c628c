"""The API's refusals that do not wait for Django's error handler: its 503 whichever layer answers it (the DRF
handler, the rate-limit middleware, a websocket handshake, the server's worker): no database connection within
the pool's timeout, Redis's counters out of reach, a worker full; nothing was done, and the client may retry
shortly. And the body of any refusal answered before Django (the server's worker, a websocket handshake), as
the API's JSON: `error` and its `code`. Free of DRF, which the rate-limit middleware must not import before its
settings, and the server's worker before Django is set up."""

import json

BUSY = "the service is busy, try again shortly"
RETRY_SOON = {"Retry-After": "1"}
# decisions.md, "Errors": the `code` of each refusal these layers answer.
CODES = {403: "forbidden", 429: "rate_limited", 503: "unavailable"}


def refusal_json(status: int, message: str) -> bytes:
    """The JSON body of a refusal with this status."""
    return json.dumps({"error": message, "code": CODES[status]}).encode()
