"""Serve JavaScript that ships inside installed Python packages as ordinary static files.

Plotly's bundle lives in the plotly package; this finder maps it to `vendor/plotly.min.js`, so
WhiteNoise and collectstatic serve it from our own origin, never from a CDN.
"""

from pathlib import Path

import plotly
from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

PACKAGED_FILES = {
    "vendor/plotly.min.js": Path(plotly.__file__).parent / "package_data" / "plotly.min.js",
}


class PackagedFilesFinder(BaseFinder):
    def check(self, **kwargs):
        return (
            []
            if all(path.is_file() for path in PACKAGED_FILES.values())
            else ["A packaged static file is missing: reinstall the plotly package."]
        )

    def find(self, path, find_all=False, **kwargs):
        source = PACKAGED_FILES.get(path)
        if source is None:
            return [] if find_all else None
        return [str(source)] if find_all else str(source)

    def list(self, ignore_patterns):
        for name, source in PACKAGED_FILES.items():
            storage = FileSystemStorage(location=str(source.parent))
            storage.prefix = str(Path(name).parent)
            yield source.name, storage
