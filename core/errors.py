"""The domain's own errors: raised by services and selectors, rendered by the API's handler (core/api)."""


class RuleViolation(Exception):
    """A domain rule refused the request: a message, the field at fault and extras (e.g. running_ticket_id)."""

    def __init__(self, message: str, field: str | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra


class Unavailable(Exception):
    """A service the request needs is out of reach (the file bucket refused, or did not answer in time):
    answered 503 with Retry-After; what the request began is rolled back."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
