"""URL map: the API under /api/v1/, its schema and docs, and the console at /."""

from django.conf import settings
from django.http import FileResponse, Http404
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from fulcrum import schema  # noqa: F401  (registers the schema extension before any schema is made)


def console(request):
    """Serve the console's index.html for every client-side route (assets come from WhiteNoise)."""
    index = settings.CONSOLE_DIR / "index.html"
    if not index.is_file():
        raise Http404("The console is not built: run `make -C webui build`.")
    return FileResponse(index.open("rb"), content_type="text/html")


api_v1 = [
    path("", include("accounts.api.urls")),
    path("", include("services.api.urls")),
    path("", include("cluster.api.urls")),
    path("", include("revisions.api.urls")),
    path("", include("certificates.api.urls")),
    path("", include("telemetry.api.urls")),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
]

handler400 = "fulcrum.errors.bad_request"
handler403 = "fulcrum.errors.permission_denied"
handler404 = "fulcrum.errors.not_found"
handler500 = "fulcrum.errors.server_error"

urlpatterns = [
    path("api/v1/", include(api_v1)),
    re_path(r"^(?!api/|static/).*$", console, name="console"),
]
