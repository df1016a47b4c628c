"""Standard Webhooks signatures (https://www.standardwebhooks.com): what a receiver verifies."""

import base64
import hashlib
import hmac

from .keys import signing_key


def signature(*, secrets: list[str], message_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` for each
    secret, space-separated (two while a rotated secret still signs)."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return " ".join(
        "v1," + base64.b64encode(hmac.new(signing_key(secret), signed, hashlib.sha256).digest()).decode()
        for secret in secrets)


def headers(*, secrets: list[str], message_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secrets=secrets, message_id=message_id, timestamp=timestamp, body=body),
    }
