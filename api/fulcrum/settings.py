"""Fulcrum API settings. Everything deployment-specific comes from the environment.

FULCRUM_SECRET_KEY     required outside DEBUG; in DEBUG a random one is made per process, which
                       only suits a single process (sessions from one worker fail on another)
DATABASE_URL           PostgreSQL; default: the private dev cluster under .state/pg
FULCRUM_DEBUG          "1" for development
FULCRUM_ALLOWED_HOSTS  comma-separated, default "*" in DEBUG, "localhost" otherwise
FULCRUM_CONSOLE_DIR    the built console (webui/dist) served at /
"""

import os
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
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "services",
    "cluster",
    "revisions",
    "certificates",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: its WWW-Authenticate header makes refusals 401, as scripts expect.
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "fulcrum.errors.exception_handler",
    "DEFAULT_THROTTLE_RATES": {"login": "10/min"},
}
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

SPECTACULAR_SETTINGS = {
    "TITLE": "Fulcrum API",
    "DESCRIPTION": "Operator intent for the Fulcrum load-balancer appliance: virtual services, "
    "pools, members, health checks, nodes and revisions.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {"VrrpStateEnum": "cluster.models.VrrpState"},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("FULCRUM_LOG_LEVEL", "INFO")},
}
