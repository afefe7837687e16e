"""The command line: a thin layer over the library.

Exit codes (§13): 0 ok, 1 partial result (a budget bound or documents failed), 2 usage error,
3 nothing found or fatal. Each command lives in its own module and registers itself on `app`;
the root help lists the commands in the order they register.

The program (`main`) loads what its arguments need: `--version` alone loads no command (nor
typer), a command loads its own module, anything else (`--help`, no arguments, a misspelt
command) loads them all. `app` (and each command module) loads on first use, with every
command registered.
"""

from __future__ import annotations

import gc
import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from ..__about__ import __version__

if TYPE_CHECKING:
    from . import batch, demo, diff, extract, groups, report, scope, urls
    from ._app import app

# The command modules, each registering the command of its name, in the order they load (the
# root help lists the commands as they register: `demo` loads `extract`, which comes first;
# `groups` after `scope`, as when one module held both; `diff` after the commands that write
# the inventories it compares).
COMMANDS = ("batch", "demo", "extract", "report", "scope", "groups", "urls", "diff")

__all__ = ["app", "batch", "demo", "diff", "extract", "groups", "main", "report", "scope", "urls"]


def _load(commands: tuple[str, ...]) -> Any:
    """Import the command modules `commands` (registering their commands); the typer app."""
    for name in commands:
        importlib.import_module(f"{__name__}.{name}")
    return importlib.import_module(f"{__name__}._app").app


def _invoked(args: list[str]) -> tuple[str, ...]:
    """The command modules a run with `args` needs: the named command's, or all of them.

    The command is the first argument that is not an option: the root takes no option with a
    value (`--version` and `--help` only, a test holds it), so nothing else can stand there.
    """
    name = next((arg for arg in args if not arg.startswith("-")), None)
    return (name,) if name in COMMANDS else COMMANDS


def _defer_httpx_cli() -> None:
    """Keep httpx's own command line (`httpx._main`) from loading with httpx in this process.

    httpx imports it whenever click is installed (Dask brings it), and with it click, pygments
    and rich's console: about 0.07 s of every command. The stand-in loads the real one if
    anything calls it."""
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main")

    def main(*args: Any, **kwargs: Any) -> Any:
        del sys.modules["httpx._main"]
        real = importlib.import_module("httpx._main")
        return real.main(*args, **kwargs)

    stand_in.main = main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in


def main() -> None:
    """The `sitescout` program."""
    args = sys.argv[1:]
    if args == ["--version"]:
        print(f"sitescout {__version__}")  # what the app's eager `--version` prints, exit 0
        return
    _defer_httpx_cli()
    # The imports build hundreds of thousands of objects that live until the program exits:
    # the collector, run about a hundred times among them, would find nothing to free (0.02 s).
    gc.disable()
    try:
        app = _load(_invoked(args))
    finally:
        # Frozen, what the imports built is no longer walked at every full collection either
        # (paired, a walk of 240 documents took 0.93x the time).
        gc.freeze()
        gc.enable()
    try:
        app()
    finally:
        # What the run built is frozen too: the interpreter's last collection, as it exits,
        # would walk all of it to free what the exit frees anyway (0.015 s of a walk).
        gc.freeze()


def __getattr__(name: str) -> Any:
    # `app` and the command modules (PEP 562): every command registers on first use of either.
    if name == "app":
        globals()["app"] = loaded = _load(COMMANDS)  # bound: the next use is a plain lookup
        return loaded
    if name in COMMANDS:
        _load(COMMANDS)
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
