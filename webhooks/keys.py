"""Webhook secrets: made in the Standard Webhooks form, stored sealed.

The database holds each secret encrypted (Fernet) with a key derived from DJANGO_SECRET_KEY, so a dump
of the database alone cannot sign a message. Keys derived from SECRET_KEY_FALLBACKS still open what
was sealed before the secret key was rotated.
"""

import base64
import secrets
from functools import cache, lru_cache

from cryptography.fernet import Fernet, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

PREFIX = "whsec_"
SECRET_BYTES = 32


def new_secret() -> str:
    """`whsec_` and the base64 of 32 random bytes."""
    return PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def signing_key(secret: str) -> bytes:
    """The HMAC key a `whsec_` secret stands for."""
    return base64.b64decode(secret.removeprefix(PREFIX))


def seal(secret: str) -> str:
    return _box(settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS)).encrypt(secret.encode()).decode()


def unseal(sealed: str) -> str:
    return _unsealed(sealed, settings.SECRET_KEY, tuple(settings.SECRET_KEY_FALLBACKS))


@lru_cache(maxsize=4096)
def _unsealed(sealed: str, secret_key: str, fallbacks: tuple[str, ...]) -> str:
    """Each endpoint's secret is opened once, not at every attempt (a tenth of a delivery's CPU, bench/CHANGES.md);
    a rotation seals a new one, which is opened anew."""
    return _box(secret_key, fallbacks).decrypt(sealed.encode()).decode()


@cache
def _box(secret_key: str, fallbacks: tuple[str, ...]) -> MultiFernet:
    return MultiFernet([Fernet(_derived_key(key)) for key in (secret_key, *fallbacks)])


def _derived_key(secret_key: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"tracker.webhooks", info=b"webhook signing secrets")
    return base64.urlsafe_b64encode(hkdf.derive(secret_key.encode()))
