"""Settings, read from the environment (see README "Configuration").

Without any variable set the service runs for local development: SQLite in the
project root and the in-memory channel layer.
"""

import ipaddress
import logging
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.request_id import LOG_FILTERS, LOG_FORMATTERS

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name, "")
    return [item.strip() for item in value.split(",") if item.strip()] or default


DEBUG = env_bool("DJANGO_DEBUG", False)

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    # Only good for a local checkout; `check --deploy` flags it (security.W009).
    SECRET_KEY = "django-insecure-local-development-key-do-not-use-in-production"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "corsheaders",
    "core",
    "accounts",
    "attachments",
    "projects",
    "tickets",
    "timetracking",
    "notifications",
    "docs_area",
    "events",
    "webhooks",
    "transfers",
]

MIDDLEWARE = [
    "core.metrics.RequestMetricsMiddleware",  # outermost: it sees every answer, 429s included
    "django.middleware.security.SecurityMiddleware",
    # Before the rate limiter: a preflight is answered here uncounted, and a 429 still carries CORS headers.
    "corsheaders.middleware.CorsMiddleware",
    "core.csp.ContentSecurityPolicyMiddleware",
    "accounts.ratelimit.ApiRateLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Innermost, and sync only: under ASGI, Django then runs every middleware above in the request's
    # thread. With an async-capable one here, each of their hooks was a hop between the event loop and
    # that thread: a ticket detail cost its server process about 12 ms of CPU instead of 10, a trivial
    # view 1.8 instead of 1.2. It still answers before any view or process_view hook (CSRF's) reads the body.
    "core.body_limit.RefuseOversizedBody",
]

ROOT_URLCONF = "config.urls"
CSRF_FAILURE_VIEW = "core.api.views.csrf_failure"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "notifications.context_processors.unread_notifications",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"


SQLITE_OPTIONS = {
    # Concurrent requests wait for the write lock instead of failing with "database is locked".
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def env_number(name: str, default: float, kind: type = int) -> float:
    value = os.environ.get(name, "").strip()
    return kind(value) if value else default


def database_pool() -> dict:
    """psycopg_pool arguments for one server process. Under ASGI each request runs its database work in a
    thread lent to it alone (config/handler.py), and a burst of requests at once is as many threads, so
    persistent connections (CONN_MAX_AGE) pile up one per thread until PostgreSQL refuses clients; the pool
    caps them at max_size per process, and a request that finds them all busy waits up to `timeout` seconds (then PoolTimeout, answered 503 by the API)."""
    min_size = env_number("DATABASE_POOL_MIN_SIZE", 2)
    max_size = env_number("DATABASE_POOL_MAX_SIZE", 10)
    if not 0 <= min_size <= max_size or max_size < 1:
        raise ImproperlyConfigured("need 0 <= DATABASE_POOL_MIN_SIZE <= DATABASE_POOL_MAX_SIZE, and a max of 1 or more")
    return {"min_size": min_size, "max_size": max_size, "timeout": env_number("DATABASE_POOL_TIMEOUT", 10.0, float)}


ROOT_DIR_DATABASE = BASE_DIR / "db.sqlite3"


def database_config() -> dict:
    url = os.environ.get("DATABASE_URL") or f"sqlite:///{ROOT_DIR_DATABASE}"
    config = dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
    elif config["ENGINE"] == "django.db.backends.postgresql":
        # Django requires CONN_MAX_AGE 0 with a pool: "closing" a connection returns it to the pool, which
        # checks a connection as it hands it out (CONN_HEALTH_CHECKS), so that a dead one (a restarted
        # server) is replaced before a request sees it.
        config["CONN_MAX_AGE"], config["CONN_HEALTH_CHECKS"] = 0, True
        # Statements bound by the server (core.queries: the lookups and reads every request makes) are
        # prepared on a connection from their second run; the ORM's cursors bind on the client and are
        # never prepared. Behind a pooler in transaction mode (PgBouncer before 1.21) a transaction may run
        # on another server connection than the last one: DATABASE_PREPARED_STATEMENTS=0 turns them off,
        # and the server-side cursors Django keeps open across transactions (iterator()) with them.
        prepared = env_bool("DATABASE_PREPARED_STATEMENTS", True)
        config["DISABLE_SERVER_SIDE_CURSORS"] = not prepared
        config["OPTIONS"] = {**config.get("OPTIONS", {}), "pool": database_pool(),
                             "prepare_threshold": 1 if prepared else None}
    return config


DATABASES = {"default": database_config()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")


def channel_layers(redis_url: str) -> dict:
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    # A burst (a column sorted, a bulk tag removal) must fit a viewer's queue: a frame dropped past capacity
    # is still caught by the consumer's gap check, but costs that viewer a resync.
    return {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {
        "hosts": [redis_url], "capacity": int(os.environ.get("CHANNEL_CAPACITY") or 1000), "expiry": 60}}}


CHANNEL_LAYERS = channel_layers(REDIS_URL)

# How long the project event log keeps events (python manage.py pruneevents removes older ones).
EVENT_RETENTION_DAYS = int(os.environ.get("EVENT_RETENTION_DAYS") or 14)


# ---- Background work (core/background.py) and webhooks (README "Webhooks") ------------------------------
# Celery workers (the Procfile's worker: line) when a broker is configured, which REDIS_URL is by default;
# without one, the web process's own threads.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # a worker holds no more tasks than it runs: a killed one loses few
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Every periodic task is safe to run in every worker at once, so each worker's embedded beat (--beat) keeps its
# schedule in memory, not in a file.
CELERY_BEAT_SCHEDULER = "celery.beat:Scheduler"
WEBHOOK_SWEEP_SECONDS = env_number("WEBHOOK_SWEEP_SECONDS", 2.0, float)
# The periodic tasks, by name, every so many seconds; the workers' beat runs them, and without workers the web
# process's runner does.
BACKGROUND_SCHEDULE: dict[str, float] = {
    "webhooks.tasks.sweep": WEBHOOK_SWEEP_SECONDS,  # due retries, lost hand-outs, pruning, the backlog's gauges
    "transfers.tasks.sweep": env_number("TRANSFER_SWEEP_SECONDS", 15.0, float),
    "core.tasks.sweep_emails": env_number("EMAIL_SWEEP_SECONDS", 30.0, float),  # due retries, lost hand-outs
    # notification e-mails whose batch, digest or hour has come (README "E-mail")
    "notifications.tasks.send_emails": env_number("EMAIL_NOTIFICATION_SWEEP_SECONDS", 10.0, float),
}
# Long-lived parts of background work, started with the process that does it (a worker, or the web process
# without workers): modules with start() and stop().
BACKGROUND_SERVICES = ["webhooks.sender"]
BACKGROUND_THREADS = env_number("BACKGROUND_THREADS", 4)  # the web process's, without workers
CELERY_BEAT_SCHEDULE = {name: {"task": name, "schedule": seconds} for name, seconds in BACKGROUND_SCHEDULE.items()}
# Seconds before each retry of a failed delivery; after the last one it is `failed`.
WEBHOOK_RETRY_SCHEDULE = [int(delay) for delay in env_list("WEBHOOK_RETRY_SCHEDULE",
                                                           ["5", "300", "1800", "7200", "18000", "36000", "36000"])]
# Hosts or addresses a webhook may reach although they are loopback, private or otherwise not public.
WEBHOOK_ALLOWED_PRIVATE_HOSTS = env_list("WEBHOOK_ALLOWED_PRIVATE_HOSTS", [])
WEBHOOK_TIMEOUT_SECONDS = env_number("WEBHOOK_TIMEOUT_SECONDS", 10.0, float)  # the whole exchange
# A delivery handed to a worker, or claimed by one, that has not finished after this long is presumed
# lost (the worker died) and handed out again; it must exceed WEBHOOK_TIMEOUT_SECONDS.
WEBHOOK_LOST_AFTER_SECONDS = env_number("WEBHOOK_LOST_AFTER_SECONDS", 60.0, float)
# Attempts in flight at once in each sending process: per endpoint, those that have taken over a second (all of
# them once its last attempt failed), the others of its messages waiting their turn; and in all (each holds a
# socket: the open-files limit must exceed it).
WEBHOOK_ENDPOINT_CONCURRENCY = env_number("WEBHOOK_ENDPOINT_CONCURRENCY", 4)
WEBHOOK_MAX_IN_FLIGHT = env_number("WEBHOOK_MAX_IN_FLIGHT", 10_000)
WEBHOOK_DISABLE_AFTER_DAYS = env_number("WEBHOOK_DISABLE_AFTER_DAYS", 5.0, float)
# Finished deliveries older than this are removed by the sweep.
WEBHOOK_DELIVERY_RETENTION_DAYS = env_number("WEBHOOK_DELIVERY_RETENTION_DAYS", 30.0, float)
if WEBHOOK_LOST_AFTER_SECONDS <= WEBHOOK_TIMEOUT_SECONDS:
    raise ImproperlyConfigured("WEBHOOK_LOST_AFTER_SECONDS must exceed WEBHOOK_TIMEOUT_SECONDS")


# ---- E-mail (core/mail.py, README "E-mail") ---------------------------------------------------------------
# Sent over SMTP to EMAIL_HOST; without one, printed on the console (`make run` shows them).
def email_backend(host: str) -> str:
    return "django.core.mail.backends.smtp.EmailBackend" if host else "django.core.mail.backends.console.EmailBackend"


EMAIL_HOST = os.environ.get("EMAIL_HOST", "")
EMAIL_BACKEND = email_backend(EMAIL_HOST)
EMAIL_PORT = env_number("EMAIL_PORT", 25)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
# Seconds an SMTP server may take to connect or answer before the attempt fails (and is retried).
EMAIL_TIMEOUT = env_number("EMAIL_TIMEOUT", 10.0, float)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "tracker@localhost")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# The absolute base of the links in e-mails (and their Message-ID's host).
SITE_URL = (os.environ.get("SITE_URL")
            or f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}").rstrip("/")
# Notification e-mails (notifications/emails.py): a recipient's notifications about one ticket within
# EMAIL_BATCH_SECONDS of the first go as one e-mail; `digest` recipients get one a day at EMAIL_DIGEST_HOUR (UTC);
# past EMAIL_MAX_PER_USER_PER_HOUR notification e-mails in an hour, the rest wait for the next hour as one.
EMAIL_BATCH_SECONDS = env_number("EMAIL_BATCH_SECONDS", 60.0, float)
EMAIL_DIGEST_HOUR = env_number("EMAIL_DIGEST_HOUR", 7)
EMAIL_MAX_PER_USER_PER_HOUR = env_number("EMAIL_MAX_PER_USER_PER_HOUR", 30)
if not 0 <= EMAIL_DIGEST_HOUR <= 23:
    raise ImproperlyConfigured("EMAIL_DIGEST_HOUR is an hour of the day, 0 to 23 (UTC)")
# Seconds before each retry of an e-mail the SMTP server did not take; after the last one it is given up.
EMAIL_RETRY_SCHEDULE = [int(delay) for delay in env_list("EMAIL_RETRY_SCHEDULE", ["60", "300", "1800"])]
# An e-mail claimed by a process that has not recorded its attempt after this long is presumed lost with it
# (and one queued but not claimed for this long, lost with its hand-out): the sweep hands it out again.
EMAIL_LOST_AFTER_SECONDS = env_number("EMAIL_LOST_AFTER_SECONDS", 120.0, float)
# Sent e-mails are kept this long (then the sweep removes them); failed ones too.
EMAIL_RETENTION_DAYS = env_number("EMAIL_RETENTION_DAYS", 7.0, float)
if EMAIL_LOST_AFTER_SECONDS <= EMAIL_TIMEOUT * 3:
    raise ImproperlyConfigured("EMAIL_LOST_AFTER_SECONDS must exceed three EMAIL_TIMEOUTs (connect, send, quit)")


# ---- Import and export (README "Import and export") ---------------------------------------------
# An upload over IMPORT_MAX_BYTES is refused (413) before it is read; a zip that would unpack past
# IMPORT_MAX_UNPACKED_BYTES, or past IMPORT_MAX_ZIP_RATIO times its size, fails its job.
IMPORT_MAX_BYTES = env_number("IMPORT_MAX_BYTES", 100 * 1024 * 1024)
IMPORT_MAX_UNPACKED_BYTES = env_number("IMPORT_MAX_UNPACKED_BYTES", 1024 * 1024 * 1024)
IMPORT_MAX_ZIP_RATIO = 100
# A running job whose process has given no sign of life for this long died with it: the sweep runs it again
# (up to TRANSFER_MAX_ATTEMPTS runs in all), else fails it. A queued one not started by then is handed out again.
TRANSFER_LOST_AFTER_SECONDS = env_number("TRANSFER_LOST_AFTER_SECONDS", 120.0, float)
TRANSFER_MAX_ATTEMPTS = env_number("TRANSFER_MAX_ATTEMPTS", 2)
# An export's zip stays downloadable this long, then the sweep removes it.
EXPORT_RETENTION_HOURS = env_number("EXPORT_RETENTION_HOURS", 7 * 24.0, float)
TRANSFER_JOB_RETENTION_DAYS = env_number("TRANSFER_JOB_RETENTION_DAYS", 30)


# Seconds the cache's clients wait for Redis to connect or to answer: a Redis that hangs then costs a request
# that long and a 503 (core.cache.CountersUnavailable), instead of holding it and its thread for ever.
REDIS_TIMEOUT = env_number("REDIS_TIMEOUT", 1.0, float)


def cache_config(redis_url: str, timeout: float = REDIS_TIMEOUT) -> dict:
    """The cache holds rate-limit and login-failure counters: shared by every process through Redis
    (django-redis: one connection pool per process), else in the process's memory."""
    if redis_url:
        return {"default": {"BACKEND": "django_redis.cache.RedisCache", "LOCATION": redis_url, "KEY_PREFIX": "tracker",
                            "OPTIONS": {"SOCKET_CONNECT_TIMEOUT": timeout, "SOCKET_TIMEOUT": timeout}}}
    return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


CACHES = cache_config(REDIS_URL)

# CORS (django-cors-headers): browser apps served from these origins may call the API with a bearer token; a
# cookie never counts cross-origin (accounts.authentication), so no credentials are allowed.
CORS_ALLOWED_ORIGINS = env_list("CORS_ALLOWED_ORIGINS", [])
CORS_URLS_REGEX = r"^/api/"
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_METHODS = ["GET", "POST"]
CORS_ALLOW_HEADERS = ["authorization", "content-type", "idempotency-key", "if-match", "if-none-match", "x-request-id"]
CORS_EXPOSE_HEADERS = ["ETag", "Link", "Retry-After", "Idempotent-Replayed", "X-Request-ID",
                       "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]

# Requests per minute (accounts/ratelimit.py): per credential (a token, a session), per user whatever
# credential they use, and per client address without a valid one.
API_RATE_LIMIT_PER_MINUTE = int(os.environ.get("API_RATE_LIMIT_PER_MINUTE") or 1200)
API_USER_RATE_LIMIT_PER_MINUTE = int(os.environ.get("API_USER_RATE_LIMIT_PER_MINUTE") or 2400)
API_ANON_RATE_LIMIT_PER_MINUTE = int(os.environ.get("API_ANON_RATE_LIMIT_PER_MINUTE") or 120)
# Live (neither revoked nor expired) API tokens one user may hold (accounts.services.issue_token).
MAX_TOKENS_PER_USER = int(os.environ.get("MAX_TOKENS_PER_USER") or 20)

AUTH_USER_MODEL = "accounts.User"
# Django's default hashers, PBKDF2 taking turns per process and hashing with no database connection held
# (accounts/hashers.py): at most PASSWORD_CHECKS_PER_PROCESS hashes at once, another waits for its turn up to
# PASSWORD_CHECK_WAIT_SECONDS (then the login page answers 429).
PASSWORD_HASHERS = [
    "accounts.hashers.BoundedPBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.BCryptSHA256PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
PASSWORD_CHECKS_PER_PROCESS = int(os.environ.get("PASSWORD_CHECKS_PER_PROCESS") or 1)
PASSWORD_CHECK_WAIT_SECONDS = env_number("PASSWORD_CHECK_WAIT_SECONDS", 2.0, float)
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# accounts/lockout.py: login POSTs per minute per client address (then 429); this many failed logins per
# username and address lock that pair out for a while, and failures for this many usernames from one
# address (a password spray) lock that address out.
LOGIN_RATE_LIMIT_PER_MINUTE = int(os.environ.get("LOGIN_RATE_LIMIT_PER_MINUTE") or 20)
# Login POSTs per minute naming one username, from whatever addresses (a flood spread over many addresses).
LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE = int(os.environ.get("LOGIN_USERNAME_RATE_LIMIT_PER_MINUTE") or 10)
LOGIN_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT") or 5)
LOGIN_SPRAY_LIMIT = int(os.environ.get("LOGIN_SPRAY_LIMIT") or 10)
LOGIN_LOCKOUT_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_SECONDS") or 15 * 60)
# Password reset e-mails (decisions.md, "E-mail"): at most this many to one address an hour.
PASSWORD_RESET_EMAILS_PER_HOUR = int(os.environ.get("PASSWORD_RESET_EMAILS_PER_HOUR") or 5)
LOGIN_REDIRECT_URL = "project-list-page"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))
MEDIA_URL = "media/"  # never served directly: downloads go through the API's access checks
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Stored files in an S3-compatible bucket (attachments/storage.py), configured by django-storages' usual
# variables; unset, they stay under MEDIA_ROOT. Credentials left unset come from boto3's own chain.
AWS_STORAGE_BUCKET_NAME = os.environ.get("AWS_STORAGE_BUCKET_NAME", "")
if AWS_STORAGE_BUCKET_NAME:
    STORAGES["default"] = {"BACKEND": "attachments.storage.BucketStorage"}
    AWS_S3_ENDPOINT_URL = os.environ.get("AWS_S3_ENDPOINT_URL") or None
    AWS_S3_REGION_NAME = os.environ.get("AWS_S3_REGION_NAME") or None
    AWS_ACCESS_KEY_ID = os.environ.get("AWS_ACCESS_KEY_ID") or None
    AWS_SECRET_ACCESS_KEY = os.environ.get("AWS_SECRET_ACCESS_KEY") or None
    AWS_DEFAULT_ACL = None  # the bucket's own policy; objects are only ever read through the API
    AWS_S3_FILE_OVERWRITE = True  # names are generated and unique: no existence check before each write
# Seconds a call to the bucket waits to connect, and for each read of its answer, before it is tried once more,
# then given up (attachments/storage.py): a bucket out of reach answers 503 with Retry-After.
AWS_S3_CONNECT_TIMEOUT = env_number("AWS_S3_CONNECT_TIMEOUT", 3.0, float)
AWS_S3_READ_TIMEOUT = env_number("AWS_S3_READ_TIMEOUT", 10.0, float)

# Request bodies: 20 files of 10 MB each fit in one upload; every other body fits REQUEST_BODY_MAX_SIZE.
# Larger bodies are refused with 413 before they are read (core/body_limit.py).
REQUEST_BODY_MAX_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = REQUEST_BODY_MAX_SIZE
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FILES = 20
# Documentation (docs_area/services.py): how deep folders nest, and how many files one article holds.
DOCS_MAX_FOLDER_DEPTH = int(os.environ.get("DOCS_MAX_FOLDER_DEPTH") or 32)
DOCS_MAX_ATTACHMENTS_PER_ARTICLE = int(os.environ.get("DOCS_MAX_ATTACHMENTS_PER_ARTICLE") or 50)
# Websocket frames from clients (accounts/consumers.py): the sockets are read-only, so anything larger is
# refused with close code 4413. The server's own cap (uvicorn --ws-max-size) stops larger ones earlier.
WEBSOCKET_MAX_FRAME_BYTES = 4096
# Open websockets (core/sockets.py): per user across every server process (a handshake beyond: 429, or close
# code 4429), and per server process (beyond: 503), counted apart from the HTTP connections.
WS_MAX_PER_USER = int(os.environ.get("WS_MAX_PER_USER") or 20)
WEB_MAX_WEBSOCKETS = int(os.environ.get("WEB_MAX_WEBSOCKETS") or 10_000)

# Production hardening: TLS ends at the proxy, which sets X-Forwarded-Proto.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]  # probes reach the server itself, in plain HTTP
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = 0 if DEBUG else int(os.environ.get("DJANGO_HSTS_SECONDS", 60 * 60 * 24 * 365))
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]

REST_FRAMEWORK = {
    # A bad bearer token is a 401, never retried as a session; the session counts from this origin only.
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.BearerTokenAuthentication",
                                       "accounts.authentication.SameOriginSessionAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["accounts.ratelimit.CredentialThrottle"],
    # JSON everywhere; the upload views alone take multipart/form-data (upload_actions).
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.JSONObjectParser"],
    "DEFAULT_RENDERER_CLASSES": ["core.api.renderers.ORJSONRenderer"],
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.ApiAutoSchema",
    "EXCEPTION_HANDLER": "core.api.exceptions.api_exception_handler",
    "DATETIME_FORMAT": "%Y-%m-%d %H:%M:%S",  # core.time.TIMESTAMP_FORMAT; DRF renders in TIME_ZONE, UTC
    "DATE_FORMAT": "%Y-%m-%d",
    "DATE_INPUT_FORMATS": ["%Y-%m-%d"],
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Tracker API",
    "DESCRIPTION": (Path(BASE_DIR / "docs" / "api.md")).read_text(encoding="utf-8"),
    "VERSION": "1.0.0",
    # 3.1: null is a JSON Schema type, so "an entry or null" reads the same to every validator and generator.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    # Swagger UI and ReDoc from the service's own static files: the reference works offline, with no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "core.api.schema.add_common_errors"],
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}},
    # Two fields named `type` (ticket, notification): each enumeration named for what it types.
    "ENUM_NAME_OVERRIDES": {"TicketTypeEnum": "tickets.models.TicketType",
                            "NotificationTypeEnum": "notifications.models.NotificationType",
                            "DeliveryStatusEnum": "webhooks.models.DeliveryStatus",
                            "ErrorCodeEnum": "core.api.errors.ALL_CODES"},
}

# GET /metrics (core/metrics.py): behind its own bearer token and/or only from these addresses (comma list of
# addresses or networks); with neither set it does not exist. PROMETHEUS_MULTIPROC_DIR (prometheus_client's
# own variable; the Procfile's server sets one up) makes it one view across the worker processes.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
try:
    METRICS_ALLOWED_IPS = [ipaddress.ip_network(item, strict=False) for item in env_list("METRICS_ALLOWED_IPS", [])]
except ValueError as error:
    raise ImproperlyConfigured(f"METRICS_ALLOWED_IPS: {error}") from None
METRICS_ENABLED = bool(METRICS_TOKEN or METRICS_ALLOWED_IPS)
PROMETHEUS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
if PROMETHEUS_MULTIPROC_DIR:  # any process that counts writes there (a management command before the server)
    Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)

# Every line names the request it was written for (core/request_id.py); LOG_FORMAT=json: one JSON object
# per line, for log shippers.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text").strip().lower()
if LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured("LOG_FORMAT is text or json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": LOG_FILTERS,
    "formatters": LOG_FORMATTERS,
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["request_id"], "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "INFO")},
    # Not a line per webhook delivery received and done by a worker: its failures still log.
    "loggers": {"celery.app.trace": {"level": "WARNING"}, "celery.worker.strategy": {"level": "WARNING"}},
}
if LOG_FORMAT == "json":
    logging.captureWarnings(True)  # Python's warnings too, as log lines rather than bare text on stderr
