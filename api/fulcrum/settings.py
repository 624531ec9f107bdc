"""Fulcrum API settings. Everything deployment-specific comes from the environment.

FULCRUM_SECRET_KEY     required outside DEBUG; in DEBUG a random one is made per process, which
                       only suits a single process (sessions from one worker fail on another)
DATABASE_URL           PostgreSQL; default: the private dev cluster under .state/pg
FULCRUM_DEBUG          "1" for development
FULCRUM_ALLOWED_HOSTS  comma-separated, default "*" in DEBUG, "localhost" otherwise
FULCRUM_CONSOLE_DIR    the built console (webui/dist) served at /
FULCRUM_SECURE_COOKIES "1": session and CSRF cookies only over HTTPS
FULCRUM_SESSION_HOURS  idle hours after which a console session ends (default 12)
FULCRUM_TRUSTED_PROXIES comma-separated addresses/networks of reverse proxies whose
                       X-Forwarded-For is believed (audit log, sign-in throttles), and whose
                       X-Forwarded-Proto tells Django a request came over HTTPS; default none
FULCRUM_LOGIN_RATE     sign-in attempts allowed per client address, as "<n>/<s|min|hour|day>"
                       (default 10/min; each API worker process counts its own)
FULCRUM_LOGIN_FAILURES failed sign-ins that lock a username (default 5) ...
FULCRUM_LOGIN_WINDOW   ... within this many seconds, and for as long (default 900)
FULCRUM_SNAPSHOT_REUSE_S seconds the pending changes and advice may reuse a snapshot (default 30)
FULCRUM_RESTORE_MAX_BYTES the largest backup a restore takes (default 64 MiB; other bodies: 1 MiB)
FULCRUM_VERSION        the package version (default: fulcrum/version.txt, which the package
                       build writes, else "dev"); a joining appliance must run the same
FULCRUM_CONSOLE_CERT   the console's certificate, which a joining appliance pins
                       (default /etc/fulcrum/tls/console.crt, made at first boot)
FULCRUM_JOIN_MAX_SKEW_S how far a joining appliance's clock may be off (default 60 s)
FULCRUM_CLUSTER_ENV    where the first-boot setup records the cluster this appliance joined
                       (default /etc/fulcrum/cluster.env; absent on a new cluster's appliance)
FULCRUM_REPLICATION_SECRET the cluster database's replication password, which a joining
                       appliance gets (default /etc/fulcrum/cluster/replication.secret, made
                       by fulcrum-api-init; absent where the database does not replicate)
FULCRUM_CONSOLE_KEY    the console's private key as the API may read it, which a joining
                       appliance gets to serve the same console at the management VIP (default
                       /etc/fulcrum/cluster/console.key, copied there by fulcrum-api-init)
FULCRUM_MGMT_VIP       the cluster's management VIP (an address), from management.env; empty:
                       none, each appliance is managed at its own address
FULCRUM_MGMT_VRID      its VRRP instance (default 250), which no HA group may take
FULCRUM_MANAGEMENT_SOCKET where the API asks the management VIP's root side for a switchover
                       (default /run/fulcrum-management/request.sock: fulcrum-management-request.socket)
"""

import os
import re
import secrets
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BASE_DIR.parent

DEBUG = os.environ.get("FULCRUM_DEBUG") == "1"
SECRET_KEY = os.environ.get("FULCRUM_SECRET_KEY") or (secrets.token_urlsafe(50) if DEBUG else None)
if not SECRET_KEY:
    raise RuntimeError("FULCRUM_SECRET_KEY must be set when FULCRUM_DEBUG is not 1")
ALLOWED_HOSTS = os.environ.get("FULCRUM_ALLOWED_HOSTS", "*" if DEBUG else "localhost").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("FULCRUM_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "services",
    "cluster",
    "revisions",
    "certificates",
    "telemetry",
    "snapshots",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "fulcrum.limits.RequestLimitsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Before the audit log, which a standby's read-only database could not take.
    "cluster.standby.StandbyMiddleware",
    "accounts.audit.AuditMiddleware",
]

ROOT_URLCONF = "fulcrum.urls"
WSGI_APPLICATION = "fulcrum.wsgi.application"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

_PRIVATE_PG = REPO_DIR / ".state" / "pg" / "run"
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"postgresql://fulcrum@/fulcrum?host={_PRIVATE_PG}"),
        conn_max_age=60,
        # A kept connection is checked before each request reuses it: after PostgreSQL
        # restarted (a switchover, new replication settings) a request reconnects instead of
        # failing with the dead connection. (Not psycopg's pool: after PostgreSQL was down a
        # minute, its reconnection backoff left requests waiting 20 s and failing, run35.)
        # The agents' long-polls close theirs while they wait (cluster.api.views).
        conn_health_checks=True,
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Argon2 for new and changed passwords; older hashes still verify and are upgraded at sign-in.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    "django.contrib.auth.hashers.ScryptPasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = os.environ.get("FULCRUM_STATIC_ROOT")  # collectstatic target for packages
WHITENOISE_USE_FINDERS = True  # serve app static files (API docs) without collectstatic
CONSOLE_DIR = Path(os.environ.get("FULCRUM_CONSOLE_DIR", REPO_DIR / "webui" / "dist"))
# The console's built files (index.html, assets/) are served from the site root.
WHITENOISE_ROOT = CONSOLE_DIR if CONSOLE_DIR.is_dir() else None
WHITENOISE_INDEX_FILE = True

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = os.environ.get("FULCRUM_SECURE_COOKIES") == "1"
# A console session ends after this long without a request (each request restarts the clock).
SESSION_COOKIE_AGE = int(float(os.environ.get("FULCRUM_SESSION_HOURS", "12")) * 3600)
SESSION_SAVE_EVERY_REQUEST = True

FULCRUM_TRUSTED_PROXIES = [p for p in os.environ.get("FULCRUM_TRUSTED_PROXIES", "").split(",") if p.strip()]
if FULCRUM_TRUSTED_PROXIES:
    # Behind a TLS proxy (the appliance's nginx), a request is secure when the proxy says so:
    # CSRF's origin check then compares https:// origins, and request.is_secure() holds.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# The per-address sign-in counts (DRF's throttle history) live in the database, shared by
# every API worker process (a cache per process let each worker allow the whole rate); the
# table is made by the migration accounts 0002. Everything else caches in the process.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # Django culls a third of the rows past MAX_ENTRIES (300 by default), which would forget
    # the counts of addresses still being throttled; expired rows go first.
    "throttle": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "fulcrum_throttle",
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    },
}
FULCRUM_LOGIN_RATE = os.environ.get("FULCRUM_LOGIN_RATE", "10/min")
if not re.fullmatch(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)", FULCRUM_LOGIN_RATE):
    raise RuntimeError(f"FULCRUM_LOGIN_RATE must be like 10/min (n per s, min, hour or day): {FULCRUM_LOGIN_RATE!r}")
FULCRUM_LOGIN_FAILURES = int(os.environ.get("FULCRUM_LOGIN_FAILURES", "5"))
FULCRUM_LOGIN_WINDOW = int(os.environ.get("FULCRUM_LOGIN_WINDOW", "900"))
_VERSION_FILE = BASE_DIR / "fulcrum" / "version.txt"
FULCRUM_VERSION = os.environ.get("FULCRUM_VERSION") or (
    _VERSION_FILE.read_text().strip() if _VERSION_FILE.exists() else "dev"
)
FULCRUM_CONSOLE_CERT = os.environ.get("FULCRUM_CONSOLE_CERT", "/etc/fulcrum/tls/console.crt")
FULCRUM_JOIN_MAX_SKEW_S = int(os.environ.get("FULCRUM_JOIN_MAX_SKEW_S", "60"))
FULCRUM_CLUSTER_ENV = os.environ.get("FULCRUM_CLUSTER_ENV", "/etc/fulcrum/cluster.env")
FULCRUM_REPLICATION_SECRET = os.environ.get("FULCRUM_REPLICATION_SECRET", "/etc/fulcrum/cluster/replication.secret")
FULCRUM_CONSOLE_KEY = os.environ.get("FULCRUM_CONSOLE_KEY", "/etc/fulcrum/cluster/console.key")
FULCRUM_MGMT_VIP = os.environ.get("FULCRUM_MGMT_VIP", "")
if FULCRUM_MGMT_VIP and not re.fullmatch(r"[0-9A-Fa-f.:]{2,45}", FULCRUM_MGMT_VIP):
    raise RuntimeError(f"FULCRUM_MGMT_VIP must be an address: {FULCRUM_MGMT_VIP!r}")
FULCRUM_MGMT_VRID = int(os.environ.get("FULCRUM_MGMT_VRID", "250"))  # as fulcrum-management's default
FULCRUM_MANAGEMENT_SOCKET = os.environ.get("FULCRUM_MANAGEMENT_SOCKET", "/run/fulcrum-management/request.sock")
# How long a list's advice and the pending changes may reuse the current snapshot when the API
# recorded no write (snapshots.freeze.current): the bound on lateness for changes made outside it.
FULCRUM_SNAPSHOT_REUSE_S = float(os.environ.get("FULCRUM_SNAPSHOT_REUSE_S", "30"))

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Bearer first: its WWW-Authenticate header makes refusals 401, as scripts expect.
        "accounts.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # The role contract: see accounts/permissions.py.
    "DEFAULT_PERMISSION_CLASSES": ["accounts.permissions.RolePermission"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "fulcrum.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_PARSER_CLASSES": ["fulcrum.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "fulcrum.errors.exception_handler",
    # Joining an appliance guesses no password either: the same rate per address.
    "DEFAULT_THROTTLE_RATES": {"login": FULCRUM_LOGIN_RATE, "join": FULCRUM_LOGIN_RATE},
}
# The largest request body (JSON); larger ones get 413 (fulcrum.limits), chunked ones too.
BODY_LIMIT = 1024 * 1024
# Paths that take more: a backup restore carries every certificate, a telemetry report every member.
BODY_LIMITS = {
    "/api/v1/backup/restore/": int(os.environ.get("FULCRUM_RESTORE_MAX_BYTES", 64 * 1024 * 1024)),
    # An agent's traffic and health report: up to 10,000 services and 10,000 members.
    "/api/v1/agent/telemetry/": 16 * 1024 * 1024,
}
# Django's own limit (it answers with a bare 400) only backs up fulcrum.limits, which checks first.
DATA_UPLOAD_MAX_MEMORY_SIZE = max(BODY_LIMIT, *BODY_LIMITS.values())

SPECTACULAR_SETTINGS = {
    "TITLE": "Fulcrum API",
    "DESCRIPTION": "Operator intent for the Fulcrum load-balancer appliance: virtual services, "
    "pools, members, health checks, nodes and revisions.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "VrrpStateEnum": "cluster.models.VrrpState",
        "JoinCodeStateEnum": "cluster.models.JoinCodeState",
        "StatusEnum": "fulcrum.schema.error_page_statuses",
        "HealthStatusEnum": "telemetry.choices.HealthStatus",
        "ServiceStateEnum": "telemetry.choices.ServiceState",
        "NodeStateEnum": "telemetry.choices.NodeState",
        "RoleEnum": "accounts.choices.Role",
        "ReplicationRoleEnum": "cluster.replication.ROLES",
        "ReplicationStateEnum": "cluster.replication.STATES",
        "ApplyRefusalEnum": "revisions.choices.ApplyRefusal",
        "MemberStateEnum": "services.choices.MemberState",
        "MemberForwardingEnum": "services.choices.MEMBER_FORWARDING",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "fulcrum.schema.declare_error_responses",
        "fulcrum.schema.declare_catalog",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("FULCRUM_LOG_LEVEL", "INFO")},
}
