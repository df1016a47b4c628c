"""The one format of a `ts` value in the interface: `YYYY-MM-DD HH:MM:SS`, in UTC."""

from datetime import datetime
from datetime import timezone as dt_timezone

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


def timestamp(value: datetime | None) -> str | None:
    return value.astimezone(dt_timezone.utc).strftime(TIMESTAMP_FORMAT) if value is not None else None
