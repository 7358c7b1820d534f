"""Settings, all from the environment (see .env.example).

With nothing set this is the embedded mode: SQLite in the project folder, Celery tasks run
eagerly, a local-memory cache. DATABASE_URL switches to PostgreSQL and REDIS_URL to Redis as
Celery broker and cache.
"""

import os
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
# The fallback key only suits a local, non-public instance; docker-compose and deployments set one.
SECRET_KEY = env.str("SECRET_KEY", default="insecure-local-only-key-set-SECRET_KEY-in-production")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "runs",
    "curves",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Chart pages carry their points as JSON and tables; compressed they are a tenth the size.
    # (BREACH: CSRF tokens are masked per response, and chart pages hold no other secret.)
    # After WhiteNoise, which answers static files itself (precompressed once collected).
    "django.middleware.gzip.GZipMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "infx_site.urls"
WSGI_APPLICATION = "infx_site.wsgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let the dev server read while an eager ingest writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;"}
    )
    # A file, not memory, so a Celery worker started by the tests can share the test database;
    # one per test process, so two test runs never share one.
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "infx_site.staticfinders.PackagedFilesFinder",
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve static files straight from the apps and packages (Plotly, htmx), collected or not.
WHITENOISE_USE_FINDERS = True
# A plain login page: approvers need not be staff to use /bypasses/.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"

# Celery: eager in the embedded mode, Redis-backed workers otherwise.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=not REDIS_URL)
# A failed eager task is recorded on its job, as on a worker, instead of raising in the view.
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=15 * 60)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=20 * 60)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 60 * 60}
CELERY_BEAT_SCHEDULE_FILENAME = env.str(
    "CELERY_BEAT_SCHEDULE_FILENAME", default=str(BASE_DIR / ".celerybeat-schedule")
)
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULE = {
    "poll-sweep-runs": {
        "task": "runs.tasks.sweep_runs_poll",
        "schedule": env.int("SWEEP_POLL_SECONDS", default=15 * 60),
    },
}

# GitHub access (the ingestion issue); every call, downloads included, goes through GITHUB_API_URL.
GITHUB_API_URL = env.str("GITHUB_API_URL", default="https://api.github.com")
GITHUB_TOKEN = env.str("GITHUB_TOKEN", default="")
GITHUB_REPOSITORY = env.str("GITHUB_REPOSITORY", default="SemiAnalysisAI/InferenceX")
GITHUB_WEBHOOK_SECRET = env.str("GITHUB_WEBHOOK_SECRET", default="")
GITHUB_SWEEP_WORKFLOW = env.str("GITHUB_SWEEP_WORKFLOW", default="run-sweep.yml")
# Artifact downloads under way at once per job; small, to stay clear of secondary rate limits.
GITHUB_DOWNLOAD_CONCURRENCY = env.int("GITHUB_DOWNLOAD_CONCURRENCY", default=4)

# Artifact safety limits (bytes): a download and what a zip may expand to.
MAX_ARTIFACT_BYTES = env.int("MAX_ARTIFACT_BYTES", default=512 * 1024 * 1024)
MAX_UNZIPPED_BYTES = env.int("MAX_UNZIPPED_BYTES", default=1024 * 1024 * 1024)
MAX_ZIP_MEMBERS = env.int("MAX_ZIP_MEMBERS", default=10_000)

# The REST API: reads are public unless API_READ_REQUIRES_AUTH; writes need a token.
API_READ_REQUIRES_AUTH = env.bool("API_READ_REQUIRES_AUTH", default=False)
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "runs.api.ApiSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_PERMISSION_CLASSES": ["runs.permissions.PublicReadOrAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="120/min"),
        "user": env.str("API_THROTTLE_USER", default="1200/min"),
    },
    # Proxies in front of the service; None trusts X-Forwarded-For as is (DRF's default).
    "NUM_PROXIES": env.int("API_NUM_PROXIES", default=None),
    "EXCEPTION_HANDLER": "runs.api.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "InferenceX dashboard API",
    "DESCRIPTION": "Runs, cells, evals, Pareto curves and coverage of the InferenceX benchmark.",
    "VERSION": "1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No validator badge: Swagger UI would send the schema URL to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    # runs.api_urls' id converter: digits that fit a BIGINT.
    "PATH_CONVERTER_OVERRIDES": {
        "db_id": {"type": "integer", "format": "int64", "minimum": 0, "maximum": 10**18 - 1}
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}
