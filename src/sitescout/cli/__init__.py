"""The command line: a thin layer over the library.

Exit codes (§13): 0 ok, 1 partial result (a budget bound or documents failed), 2 usage error,
3 nothing found or fatal. Each command lives in its own module and registers itself on `app`;
the root help lists the commands in the order they register.
"""

from . import batch, demo, extract, report, scope

# isort: split
from . import groups, urls  # `groups` lists after `scope`, as when one module held both

# isort: split
from . import diff  # after the commands that write the inventories it compares
from ._app import app, main

__all__ = ["app", "batch", "demo", "diff", "extract", "groups", "main", "report", "scope", "urls"]
