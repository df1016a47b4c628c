"""The domain's own errors: raised by services and selectors, rendered by the API's handler (a rule refused:
422; a clash with what exists: 409; a service the request needs out of reach: 503); and the instruction a
write gives its caller when it must lock rows in another order."""

from collections.abc import Callable


class RuleViolation(Exception):
    """A domain rule refused the request: a message, the field at fault and extras (e.g. running_ticket_id)."""

    def __init__(self, message: str, field: str | None = None, **extra):
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra


class Conflict(Exception):
    """The request clashes with what is already there (an invitation pending for the same address): 409, with the
    field at fault; nothing is changed."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class LockFirst(Exception):
    """A write given rows its caller locked needs other rows locked before them (rows are locked in one order
    by every write, so that none waits for another in a circle): the caller rolls its transaction back and runs
    the write again in a new one, calling `lock()` first."""

    def __init__(self, lock: Callable[[], object]):
        super().__init__()
        self.lock = lock


class Unavailable(Exception):
    """A service the request needs is out of reach (the file bucket refused, or did not answer in time):
    answered 503 with Retry-After; what the request began is rolled back."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
