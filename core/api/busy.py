"""The API's 503, whichever layer answers it (the DRF handler, the rate-limit middleware, a websocket handshake):
no database connection within the pool's timeout, or Redis's counters out of reach. Nothing was done, and the
client may retry shortly. Free of DRF, which the rate-limit middleware must not import before its settings."""

BUSY = "the service is busy, try again shortly"
RETRY_SOON = {"Retry-After": "1"}
