"""The optional extras, imported on first use.

pyarrow and pandas come with `pip install 'sitescout[tables]'`; without them, what needs them
(Parquet files in or out, Arrow tables, DataFrames) raises a `UsageError` saying what to install,
and the rest of the package works as before. They live down here, below the readers and writers
that need them, so that a module at any floor can ask for them the same way.
"""

from __future__ import annotations

from typing import Any

from ._errors import UsageError

INSTALL_TABLES = "pip install 'sitescout[tables]'"


def require_pyarrow() -> tuple[Any, Any]:
    """The `pyarrow` and `pyarrow.parquet` modules, imported on first use (an optional extra);
    a `UsageError` saying what to install when they are missing."""
    try:
        import pyarrow as pa  # type: ignore[import-not-found, import-untyped, unused-ignore]
        import pyarrow.parquet as pq  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError as exc:
        raise UsageError(f"Parquet and Arrow output need pyarrow: {INSTALL_TABLES}") from exc
    return pa, pq


def require_pandas(what: str) -> Any:
    """The `pandas` module; a `UsageError` naming `what` needs it when it is missing."""
    try:
        import pandas as pd  # type: ignore[import-not-found, import-untyped, unused-ignore]
    except ImportError as exc:
        raise UsageError(f"{what} needs pandas and pyarrow: {INSTALL_TABLES}") from exc
    return pd
