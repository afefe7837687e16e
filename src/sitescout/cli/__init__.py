"""The command line: a thin layer over the library.

Exit codes (§13): 0 ok, 1 partial result (a budget bound or documents failed), 2 usage error,
3 nothing found or fatal. Each command lives in its own module and registers itself on `app`.
"""

from . import batch, demo, extract, report, scope, urls
from ._app import app, main

__all__ = ["app", "batch", "demo", "extract", "main", "report", "scope", "urls"]
