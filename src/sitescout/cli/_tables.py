"""Tables on stdout, whole at any width: no count or name is cut to fit a narrow terminal."""

from __future__ import annotations

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

_UNBOUNDED = 1 << 20  # columns wide enough for any cell: the table's natural widths


class _StdoutConsole(Console):
    def on_broken_pipe(self) -> None:
        """A closed stdout is the reader's choice (`| head`): the command ends quietly, exit 0
        (see `_Command.invoke`), not with rich's own exit 1."""
        self.quiet = True
        raise BrokenPipeError


def stdout_console() -> Console:
    """Tables on stdout: no highlighting, no wrapping (a pipe gets whole rows), and no emoji
    codes (a path's `:name:` is printed as it is)."""
    return _StdoutConsole(highlight=False, soft_wrap=False, emoji=False)


def print_table(table: Table, *, shrinking: int, least: int) -> None:
    """Print `table` on stdout with every column but `shrinking` at its full width.

    Only column `shrinking` (wrapping or cropping its cells) gives way to a narrow terminal or
    `COLUMNS`, down to `least` cells; when even that does not fit, the table is printed wider
    than the terminal rather than cut: a pipe gets whole rows, and a terminal wraps them.
    The column must be wrapable (`no_wrap=False`, no fixed width): rich narrows those first.
    """
    console = stdout_console()
    column = table.columns[shrinking]
    natural = column.max_width
    column.max_width = least
    try:
        needed = Measurement.get(console, console.options.update_width(_UNBOUNDED), table).maximum
    finally:
        column.max_width = natural
    if console.width < needed:
        console.width = needed
    console.print(table)
