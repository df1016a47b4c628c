"""The domain's own error: raised by services and selectors, rendered as 422 by the API's handler."""


class RuleViolation(Exception):
    """A domain rule refused the request: a message, the field at fault and extras (e.g. running_ticket_id)."""

    def __init__(self, message: str, field: str | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra
