"""The README's example sessions on the bundled sample site, run for real.

    .venv/bin/python docs/examples.py          # rewrite the example blocks that have drifted
    .venv/bin/python docs/examples.py --check  # exit 1 with a diff when any block has drifted
    .venv/bin/python docs/examples.py --all    # rewrite every block from real output

A console block is an example when the line before its opening fence is `<!-- example: demo -->`.
Its `$ sitescout ...` lines run in order, in one fresh working directory, against the sample site
that `sitescout demo` serves; `http://127.0.0.1:8765` in the README stands for the site's address.
The lines after a command are its output: stdout and stderr as a terminal shows them (a command
piped into `| tail -N` or `| head -N` shows its stderr, then the piped lines).

Output is compared after masking what changes from run to run: loopback ports, timings (`0.05 s`),
sizes (`11 KiB`), column widths (runs of spaces and of `─`), blank lines, and the order of the
per-page `ok`/`skip`/`fail` lines of `extract`, which print as pages finish. A block whose output
still matches is left as it is, so regenerating does not churn the README.

`tests/test_readme.py` runs the check.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
MARKER = "<!-- example: demo -->"
BASE = "http://127.0.0.1:8765"  # the sample site's address as the README writes it
PORT = 8765  # what `sitescout demo --serve` uses; regenerating serves there when it can
COLUMNS = 100  # terminal width the examples are rendered at
COMMAND_TIMEOUT = 120.0  # seconds one example command may take

_PORT = re.compile(r"\b127\.0\.0\.1:\d+")
_SECONDS = re.compile(r"\b\d+\.\d+ s\b")
_SIZE = re.compile(r"\b\d[\d,.]* (?:B|KiB|MiB|GiB|kB|MB|GB)\b")
_RULE = re.compile(r"─+")
_PROGRESS = re.compile(r"^\s*(?:ok|skip|fail)\s")
_PIPE = re.compile(r"^(tail|head) -(\d+)$")
_SHELL = re.compile(r"^(?:\d?[<>].*|&&?|;|\|\|)$")


@dataclass
class Command:
    """One `$ ...` line of a block and the output lines the README shows under it."""

    text: str
    expected: list[str] = field(default_factory=list)

    @property
    def subcommand(self) -> str:
        words = self.text.split()
        return words[1] if len(words) > 1 else ""


@dataclass
class Block:
    """An example block: `start`..`end` are the README lines between its fences."""

    start: int
    end: int
    commands: list[Command]


def parse_blocks(text: str) -> list[Block]:
    """Every example block of `text` (the README), in order."""
    lines = text.split("\n")
    blocks: list[Block] = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        where = f"README line {i + 1}"
        if i + 1 >= len(lines) or lines[i + 1].strip() != "```console":
            raise ValueError(f"{where}: {MARKER} must be followed by a ```console block")
        end = i + 2
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{where}: the example block is never closed")
        commands: list[Command] = []
        for body in lines[i + 2 : end]:
            if body.startswith("$ "):
                commands.append(Command(body[2:]))
            elif commands:
                commands[-1].expected.append(body)
            elif body.strip():
                raise ValueError(f"{where}: output before the first `$ sitescout` line")
        if not commands:
            raise ValueError(f"{where}: an example block without a command")
        blocks.append(Block(i + 2, end, commands))
    return blocks


def argv(command: Command, base: str) -> tuple[list[str], tuple[str, int] | None]:
    """The command's arguments after `sitescout` (the README's address replaced by `base`),
    and its pipe (`tail`/`head`, N) if it has one."""
    words = shlex.split(command.text)
    pipe: tuple[str, int] | None = None
    if "|" in words:
        at = words.index("|")
        match = _PIPE.match(" ".join(words[at + 1 :]))
        if match is None:
            raise ValueError(f"{command.text!r}: only `| tail -N` or `| head -N` can follow")
        pipe = (match.group(1), int(match.group(2)))
        words = words[:at]
    if not words or words[0] != "sitescout":
        raise ValueError(f"{command.text!r}: an example command starts with `sitescout`")
    if any(_SHELL.match(word) for word in words):
        raise ValueError(f"{command.text!r}: no redirections or command lists in an example")
    return [word.replace(BASE, base) for word in words[1:]], pipe


def _environment() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("COLUMNS", "LINES", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
    }
    # Unbuffered, so that stdout and stderr interleave as they would on a terminal.
    env.update(COLUMNS=str(COLUMNS), PYTHONUNBUFFERED="1", NO_COLOR="1")
    return env


def run(command: Command, base: str, cwd: Path) -> list[str]:
    """Run one example command for real; its output lines as the README shows them."""
    args, pipe = argv(command, base)
    both = pipe is None
    proc = subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        cwd=cwd,
        env=_environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if both else subprocess.PIPE,
        text=True,
        timeout=COMMAND_TIMEOUT,
        check=False,
    )
    out = proc.stdout.splitlines()
    if pipe is None:
        return _shown(out, base)
    name, n = pipe
    piped = out[-n:] if name == "tail" else out[:n]
    return _shown(proc.stderr.splitlines() + piped, base)


def _shown(lines: list[str], base: str) -> list[str]:
    """As the README writes it: the README's address, no trailing spaces or outer blank lines,
    progress lines in a fixed order."""
    shown = [line.replace(base, BASE).rstrip() for line in lines]
    while shown and not shown[0]:
        shown.pop(0)
    while shown and not shown[-1]:
        shown.pop()
    return _sorted_progress(shown)


def _sorted_progress(lines: list[str]) -> list[str]:
    out: list[str] = []
    run_: list[str] = []
    for line in [*lines, ""]:
        if _PROGRESS.match(line):
            run_.append(line)
            continue
        out.extend(sorted(run_))
        run_ = []
        out.append(line)
    return out[:-1]


def comparable(lines: list[str]) -> list[str]:
    """`lines` with what changes from run to run masked (see the module's docstring)."""
    out: list[str] = []
    for line in lines:
        line = _PORT.sub("127.0.0.1:PORT", line)
        line = _SECONDS.sub("N s", line)
        line = _SIZE.sub("N B", line)
        line = " ".join(_RULE.sub("─", line).split())
        if line:
            out.append(line)
    return _sorted_progress(out)


@contextmanager
def demo_site(port: int = 0) -> Iterator[str]:
    """Serve the sample site; on `port` when it is free, else on any free port (0: any)."""
    from sitescout._demo.server import serve

    with ExitStack() as stack:
        try:
            base = stack.enter_context(serve(port))
        except OSError:  # the port is taken: any will do, ports are masked when comparing
            base = stack.enter_context(serve())
        yield base


def run_block(block: Block, base: str) -> list[list[str]]:
    """Each command's real output, the commands run in order in one fresh directory."""
    with tempfile.TemporaryDirectory(prefix="sitescout-example-") as cwd:
        return [run(command, base, Path(cwd)) for command in block.commands]


def check_block(block: Block, base: str) -> list[str]:
    """A diff per command whose real output differs from the README's; empty when none does."""
    problems: list[str] = []
    for command, actual in zip(block.commands, run_block(block, base), strict=True):
        if comparable(command.expected) != comparable(actual):
            readme = _shown(command.expected, BASE)
            diff = difflib.unified_diff(readme, actual, "README", "real output", lineterm="", n=1)
            problems.append(f"$ {command.text}\n" + "\n".join(diff))
    return problems


def regenerate(text: str, base: str, *, every: bool = False) -> tuple[str, list[str]]:
    """`text` with each drifted command's output (`every`: each command's) replaced by its real
    output; the commands whose output changed."""
    lines = text.split("\n")
    changed: list[str] = []
    for block in reversed(parse_blocks(text)):
        body: list[str] = []
        actuals = run_block(block, base)
        drifted: list[str] = []
        for i, (command, actual) in enumerate(zip(block.commands, actuals, strict=True)):
            same = comparable(command.expected) == comparable(actual)
            kept = same and not every
            if not same:
                drifted.append(f"$ {command.text}")
            shown = _shown(command.expected, BASE) if kept else actual
            body.append(f"$ {command.text}")
            body.extend(shown)
            if shown and i < len(block.commands) - 1:
                body.append("")
        lines[block.start : block.end] = body
        changed[:0] = drifted
    return "\n".join(lines), changed


def main(argv_: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="report drift; change nothing")
    parser.add_argument("--all", action="store_true", help="rewrite every block, not the drifted")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv_)
    text = args.readme.read_text(encoding="utf-8")
    blocks = parse_blocks(text)
    if args.check:
        with demo_site() as base:
            problems = [p for block in blocks for p in check_block(block, base)]
        for problem in problems:
            print(problem)
        print(f"{len(blocks)} example blocks, {len(problems)} commands drifted", file=sys.stderr)
        return 1 if problems else 0
    with demo_site(PORT) as base:
        if not base.endswith(f":{PORT}"):
            print(
                f"note: port {PORT} unavailable; serving on {base} (column widths of regenerated"
                " tables may differ by the port's length)",
                file=sys.stderr,
            )
        new, changed = regenerate(text, base, every=args.all)
    if new != text:
        args.readme.write_text(new, encoding="utf-8")
    for line in changed:
        print(f"regenerated: {line}", file=sys.stderr)
    print(f"{len(blocks)} example blocks, {len(changed)} commands drifted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
