"""The README's command-line reference held to the real commands, and its examples to the demo site.

**Flag tables.** Each command's options are read from its click command object
(`typer.main.get_command`: every option's `opts`, `secondary_opts`, `default`, `hidden`), never
from rendered help, and compared both ways with the README table under `<!-- flags: NAME -->`:

    <!-- flags: urls -->
    | flag | default | meaning |
    |---|---|---|
    | `--output FILE`, `-o FILE` | | write here instead of stdout |
    | `--concurrency N` | `8` | documents in flight per host |
    | the walk flags | | `--timeout`, `--user-agent` and the budgets |

- First cell: all of one option's names, each in backticks, each followed by one placeholder word
  when the option takes a value (`--cap N`) and by none when it is a flag; or `the NAME flags`,
  which stands for the rows of the table `<!-- flags: NAME -->` (a group several commands share).
- Default cell: a value in backticks is the option's default and must equal it (`<version>` is
  the package's version); any other text says what happens when the option is not given and is
  allowed only for an option without a default; blank means no default (a flag that is off, an
  option that is unset).
- `NAME` is a command, `sitescout` (the program's own options, under `## Command line`), or a
  shared group. A command's table sits under a heading that names that command and no other, and
  the table under `<!-- commands -->` lists exactly the commands there are.

**Examples.** Each console block under `<!-- example: demo -->` is run against the bundled sample
site by `docs/examples.py`, and compared with the README after masking ports, timings and sizes.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer
from typer.core import TyperGroup, TyperOption

from sitescout import __version__
from sitescout.cli import app

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PROGRAM = "sitescout"  # the table of the program's own options
PROGRAM_HEADING = "## Command line"
HEADER = "| flag | default | meaning |"
SEPARATOR = "|---|---|---|"
COMMANDS_MARKER = "<!-- commands -->"

_MARKER = re.compile(r"^<!-- flags: (\S+) -->$")
_INCLUDE = re.compile(r"^the (\w+) flags$")
_SPAN = re.compile(r"`([^`]*)`")
_LITERAL = re.compile(r"^`([^`]+)`$")
_CELL_BAR = re.compile(r"(?<!\\)\|")


# -- the README's tables ------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    line: int
    names: dict[str, tuple[str, ...]]  # each option name and the placeholder words after it
    default: str | None = None  # the default written in backticks
    described: str | None = None  # the default described in words
    include: str | None = None  # NAME of a `the NAME flags` row

    def shown(self) -> str:
        return ", ".join(self.names) or f"the {self.include} flags"


@dataclass
class FlagTable:
    name: str
    line: int
    heading: str
    rows: list[Row]


@dataclass
class Readme:
    tables: dict[str, FlagTable] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)  # the `<!-- commands -->` table's
    problems: list[str] = field(default_factory=list)  # the format not followed


def cells(line: str) -> list[str]:
    inner = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    return [cell.replace("\\|", "|").strip() for cell in _CELL_BAR.split(inner)]


def parse_row(line: str, number: int) -> Row:
    """One row of a flag table; ValueError when it does not follow the format."""
    parts = cells(line)
    if len(parts) != 3:
        raise ValueError(f"README line {number}: a flag row has 3 cells, not {len(parts)}")
    first, default, _meaning = parts
    spans = _SPAN.findall(first)
    if not spans:
        match = _INCLUDE.match(first)
        if match is None or default:
            raise ValueError(
                f"README line {number}: the first cell names options in backticks"
                " or is `the NAME flags` (with a blank default)"
            )
        return Row(number, {}, include=match.group(1))
    if _SPAN.sub("", first).strip(" ,"):
        raise ValueError(f"README line {number}: only backticked option names in the first cell")
    names: dict[str, tuple[str, ...]] = {}
    for span in spans:
        words = span.split()
        if not words or not words[0].startswith("-") or any(w.startswith("-") for w in words[1:]):
            raise ValueError(f"README line {number}: `{span}` is not one option name")
        names[words[0]] = tuple(words[1:])
    literal = _LITERAL.match(default)
    if literal is not None:
        return Row(number, names, default=literal.group(1))
    return Row(number, names, described=default or None)


def parse_readme(text: str) -> Readme:
    """The flag tables and the command list of `text`, and every departure from the format."""
    readme = Readme()
    lines = text.split("\n")
    heading = ""
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        i += 1
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        if line.startswith("#"):
            heading = line
            continue
        if line == COMMANDS_MARKER:
            i = _parse_commands(lines, i, readme)
            continue
        if line == HEADER:
            readme.problems.append(f"README line {i}: a flag table without `<!-- flags: NAME -->`")
            continue
        marker = _MARKER.match(line)
        if marker is None:
            continue
        name = marker.group(1)
        if [x.rstrip() for x in lines[i : i + 2]] != [HEADER, SEPARATOR]:
            readme.problems.append(f"README line {i}: {line} must be followed by {HEADER}")
            continue
        table = FlagTable(name, i, heading, [])
        i += 2
        while i < len(lines) and lines[i].startswith("|"):
            try:
                table.rows.append(parse_row(lines[i], i + 1))
            except ValueError as exc:
                readme.problems.append(str(exc))
            i += 1
        if name in readme.tables:
            readme.problems.append(f"README line {table.line}: a second table for {name}")
        readme.tables[name] = table
    return readme


def _parse_commands(lines: list[str], i: int, readme: Readme) -> int:
    if [x.rstrip() for x in lines[i : i + 2]] != ["| command | does |", "|---|---|"]:
        readme.problems.append(f"README line {i}: {COMMANDS_MARKER} must be followed by its table")
        return i
    i += 2
    while i < len(lines) and lines[i].startswith("|"):
        words = _SPAN.findall(cells(lines[i])[0])[:1]
        match = re.match(r"^sitescout (\S+)", words[0]) if words else None
        if match is None:
            readme.problems.append(f"README line {i + 1}: a command row starts `sitescout NAME`")
        else:
            readme.commands.append(match.group(1))
        i += 1
    return i


def rows_of(readme: Readme, name: str) -> list[Row]:
    """The rows of `name`'s table with every `the NAME flags` row replaced by that table's."""
    out: list[Row] = []
    pending: list[tuple[Row, tuple[str, ...]]] = [
        (row, (name,)) for row in reversed(readme.tables[name].rows)
    ]
    while pending:  # bounded: each table is expanded at most once along any path
        row, path = pending.pop()
        if row.include is None:
            out.append(row)
        elif row.include in path or row.include not in readme.tables:
            raise ValueError(f"README line {row.line}: no table `the {row.include} flags` can use")
        else:
            shared = readme.tables[row.include].rows
            pending.extend((inner, (*path, row.include)) for inner in reversed(shared))
    return out


# -- the real commands --------------------------------------------------------------------------


@functools.cache
def program() -> TyperGroup:
    group = typer.main.get_command(app)
    assert isinstance(group, TyperGroup)
    return group


def command_names() -> list[str]:
    return sorted(program().commands)


def options_of(name: str) -> list[TyperOption]:
    command = program() if name == PROGRAM else program().commands[name]
    return [p for p in command.params if isinstance(p, TyperOption) and not p.hidden]


def takes_value(option: TyperOption) -> bool:
    return not option.is_flag and not option.count


def default_of(option: TyperOption) -> str | None:
    """The option's default as the README writes it; None when it has none to state."""
    value: Any = option.default
    if value is None or "click" in type(value).__module__:  # click's UNSET sentinel
        return None
    if option.is_flag or option.count:
        if not value:
            return None  # a flag that is off, a count at zero
        if option.is_flag and option.secondary_opts:
            return option.opts[0]
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, list | tuple):
        return ",".join(map(str, value)) or None
    return str(value)


def compare(readme: Readme, name: str) -> list[str]:
    """How the README's table for `name` and the real options differ, both ways."""
    where = PROGRAM if name == PROGRAM else f"{PROGRAM} {name}"
    if name not in readme.tables:
        return [f"`{where}` has no README table (`<!-- flags: {name} -->`)"]
    options = options_of(name)
    owner = {alias: option for option in options for alias in option.opts + option.secondary_opts}
    try:
        rows = rows_of(readme, name)
    except ValueError as exc:
        return [str(exc)]
    problems: list[str] = []
    documented: dict[str, int] = {}
    for row in rows:
        at = f"README line {row.line} ({row.shown()})"
        unknown = [alias for alias in row.names if alias not in owner]
        if unknown:
            problems.append(f"{at}: `{where}` has no option {', '.join(unknown)}")
        found = {owner[alias].name: owner[alias] for alias in row.names if alias in owner}
        if len(found) > 1:
            problems.append(f"{at}: one row for several options ({', '.join(map(str, found))})")
            continue
        for option in found.values():
            aliases = option.opts + option.secondary_opts
            missing = [alias for alias in aliases if alias not in row.names]
            if missing:
                problems.append(f"{at}: alias {', '.join(missing)} missing")
            assert option.name is not None
            if option.name in documented:
                problems.append(f"{at}: {aliases[0]} is also on line {documented[option.name]}")
            documented[option.name] = row.line
            problems.extend(_check_value(at, option, row))
    for option in options:
        if option.name not in documented:
            names = ", ".join(option.opts + option.secondary_opts)
            problems.append(f"`{where}` option {names} is missing from the README's table")
    return problems


def _check_value(at: str, option: TyperOption, row: Row) -> list[str]:
    problems: list[str] = []
    placeholders = list(row.names.values())
    if takes_value(option) and any(len(words) != 1 for words in placeholders):
        problems.append(f"{at}: takes a value: write one placeholder after each name (`--x N`)")
    if not takes_value(option) and any(placeholders):
        problems.append(f"{at}: a flag takes no value: no placeholder after its names")
    real = default_of(option)
    if row.default is not None:
        written = row.default.replace("<version>", __version__)
        if written != real:
            actual = "no default" if real is None else f"default `{real}`"
            problems.append(f"{at}: README says default `{row.default}`, the option has {actual}")
    elif real is not None:
        problems.append(f"{at}: the default `{real}` is not stated (`{real}` in backticks)")
    return problems


def placement(readme: Readme) -> list[str]:
    """Each table under the right heading; every shared table used; the command list whole."""
    commands = command_names()
    named = re.compile(rf"`(?:{PROGRAM} )?({'|'.join(map(re.escape, commands))})\b[^`]*`")
    used = {row.include for table in readme.tables.values() for row in table.rows}
    problems: list[str] = []
    for name, table in readme.tables.items():
        at = f"README line {table.line} (flags: {name})"
        if name == PROGRAM:
            if table.heading != PROGRAM_HEADING:
                problems.append(f"{at}: belongs under {PROGRAM_HEADING!r}, not {table.heading!r}")
        elif name in commands:
            in_heading = set(named.findall(table.heading))
            if in_heading != {name}:
                problems.append(
                    f"{at}: under {table.heading!r}, which does not name `{name}` alone"
                )
        elif name not in used:
            problems.append(f"{at}: neither a command nor used by a `the {name} flags` row")
    if sorted(readme.commands) != commands:
        problems.append(f"the command list has {sorted(readme.commands)}, the program {commands}")
    return problems


def all_problems(text: str) -> list[str]:
    readme = parse_readme(text)
    problems = readme.problems + placement(readme)
    for name in [PROGRAM, *command_names()]:
        problems.extend(compare(readme, name))
    return problems


# -- flag tables: the tests ---------------------------------------------------------------------


def readme_text() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_follows_the_table_format() -> None:
    readme = parse_readme(readme_text())
    assert readme.problems == []
    assert set(readme.tables) >= {PROGRAM, *command_names()}


def test_every_flag_table_sits_under_its_command() -> None:
    assert placement(parse_readme(readme_text())) == []


@pytest.mark.parametrize("name", [PROGRAM, *command_names()])
def test_the_flag_table_matches_the_command(name: str) -> None:
    problems = compare(parse_readme(readme_text()), name)
    assert problems == [], "\n".join(problems)


def test_the_options_are_read_from_the_real_commands() -> None:
    """The introspection itself: known options, aliases and defaults come out as written."""
    urls = {option.name: option for option in options_of("urls")}
    assert urls["output"].opts == ["--output", "-o"] and takes_value(urls["output"])
    assert default_of(urls["format"]) == "jsonl" and default_of(urls["timeout"]) == "30"
    assert default_of(urls["crawl"]) is None and not takes_value(urls["crawl"])
    assert (
        default_of(urls["user_agent"])
        == f"sitescout/{__version__} (+https://pypi.org/project/sitescout/)"
    )
    assert [o.opts for o in options_of(PROGRAM)] == [["--version"]]


# Each mutation of the README must add a problem naming what it broke: the check can fail.


def _table_line(text: str, name: str, alias: str) -> int:
    """The 0-based index of the line of `name`'s own table that documents `alias`."""
    table = parse_readme(text).tables[name]
    return next(row.line for row in table.rows if alias in row.names) - 1


def _mutated(text: str, index: int, new: str | None) -> str:
    lines = text.split("\n")
    if new is None:
        del lines[index]
    else:
        lines[index] = new
    mutated = "\n".join(lines)
    assert mutated != text
    return mutated


def _added(text: str, mutated: str) -> list[str]:
    before = set(all_problems(text))
    return [p for p in all_problems(mutated) if p not in before]


def _row_for(text: str, name: str, alias: str) -> tuple[int, list[str]]:
    index = _table_line(text, name, alias)
    return index, cells(text.split("\n")[index])


def test_a_removed_row_is_caught() -> None:
    text = readme_text()
    added = _added(text, _mutated(text, _table_line(text, "urls", "--format"), None))
    assert any("--format" in p and "missing from the README" in p for p in added), added


def test_a_row_removed_from_a_shared_table_is_caught_for_every_command_using_it() -> None:
    text = readme_text()
    added = _added(text, _mutated(text, _table_line(text, "walk", "--max-urls"), None))
    missing = {p.split("`")[1] for p in added if "--max-urls" in p and "missing" in p}
    assert missing >= {"sitescout urls", "sitescout groups", "sitescout report"}, added


def test_a_changed_default_is_caught() -> None:
    text = readme_text()
    index, (first, _default, meaning) = _row_for(text, "urls", "--concurrency")
    added = _added(text, _mutated(text, index, f"| {first} | `9` | {meaning} |"))
    assert any("--concurrency" in p and "`9`" in p for p in added), added


def test_an_unstated_default_is_caught() -> None:
    text = readme_text()
    index, (first, _default, meaning) = _row_for(text, "scope", "--timeout")
    added = _added(text, _mutated(text, index, f"| {first} | | {meaning} |"))
    assert any("--timeout" in p and "not stated" in p for p in added), added


def test_an_option_the_command_lacks_is_caught() -> None:
    text = readme_text()
    index = _table_line(text, "groups", "--depth")
    lines = text.split("\n")
    mutated = "\n".join([*lines[:index], "| `--no-such-flag` | | nothing |", *lines[index:]])
    added = _added(text, mutated)
    assert any("has no option --no-such-flag" in p for p in added), added


def test_a_missing_alias_and_a_missing_placeholder_are_caught() -> None:
    text = readme_text()
    index, (_first, default, meaning) = _row_for(text, "report", "--output")
    added = _added(text, _mutated(text, index, f"| `--output` | {default} | {meaning} |"))
    assert any("alias -o missing" in p for p in added), added
    assert any("takes a value" in p for p in added), added


def test_a_table_under_another_commands_marker_is_caught() -> None:
    text = readme_text()
    swapped = (
        text.replace("<!-- flags: scope -->", "<!-- flags: TMP -->")
        .replace("<!-- flags: groups -->", "<!-- flags: scope -->")
        .replace("<!-- flags: TMP -->", "<!-- flags: groups -->")
    )
    assert swapped != text
    added = _added(text, swapped)
    assert any("`sitescout scope` has no option --depth" in p for p in added), added
    assert any("does not name `groups` alone" in p for p in added), added


def test_a_table_without_its_marker_is_caught() -> None:
    text = readme_text()
    marker = text.split("\n").index("<!-- flags: batch -->")
    added = _added(text, _mutated(text, marker, None))
    assert any("has no README table" in p for p in added), added
    assert any("without `<!-- flags: NAME -->`" in p for p in added), added


# -- examples on the demo site --------------------------------------------------------------------


def _load_examples() -> ModuleType:
    path = ROOT / "docs" / "examples.py"
    spec = importlib.util.spec_from_file_location("sitescout_docs_examples", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


examples = _load_examples()
BLOCKS = examples.parse_blocks(readme_text())


def test_the_examples_cover_the_demo_site_commands() -> None:
    shown = {command.subcommand for block in BLOCKS for command in block.commands}
    assert shown >= {"scope", "groups", "report", "extract"}


@pytest.mark.parametrize(
    "block", BLOCKS, ids=[f"{b.commands[0].subcommand}-line{b.start}" for b in BLOCKS]
)
def test_the_readme_example_matches_the_demo_site(block: Any) -> None:
    with examples.demo_site() as base:
        problems = examples.check_block(block, base)
    assert problems == [], (
        "\n\n".join(problems) + "\n\nrun `.venv/bin/python docs/examples.py` to regenerate"
    )


def test_masking_hides_ports_timings_and_widths_but_not_counts() -> None:
    readme = [
        "  /blog/*     41     72%   ████   /blog/",
        "57 URLs via robots.txt http://127.0.0.1:8765/robots.txt; 0.05 s",
        "report: 57 URLs → report.html (11 KiB)",
    ]
    real = [
        "",
        "  /blog/*      41      72%   ████    /blog/   ",
        "57 URLs via robots.txt http://127.0.0.1:41234/robots.txt; 1.20 s",
        "report: 57 URLs → report.html (12 KiB)",
    ]
    assert examples.comparable(readme) == examples.comparable(real)
    drifted = [line.replace("41", "42", 1) for line in real]
    assert examples.comparable(readme) != examples.comparable(drifted)


def test_progress_lines_compare_in_any_order_but_other_lines_do_not() -> None:
    a = ["Selecting:", "  ok   home", "  ok   about", "Extracted 2 pages."]
    b = ["Selecting:", "  ok   about", "  ok   home", "Extracted 2 pages."]
    assert examples.comparable(a) == examples.comparable(b)
    assert examples.comparable(a) != examples.comparable(a[::-1])


@pytest.mark.parametrize(
    "line",
    [
        "sitescout groups http://127.0.0.1:8765/ | grep x",
        "sitescout groups http://127.0.0.1:8765/ > out.txt",
        "rm -rf / ; sitescout groups",
    ],
)
def test_example_commands_are_sitescout_and_at_most_a_tail(line: str) -> None:
    with pytest.raises(ValueError):
        examples.argv(examples.Command(line), "http://127.0.0.1:1")


def test_regenerating_rewrites_a_drifted_block_and_keeps_a_matching_one() -> None:
    stale = "  /blog/*     40     72%   ████████████████████   /blog/"
    text = "\n".join(
        [
            "# x",
            "<!-- example: demo -->",
            "```console",
            "$ sitescout groups http://127.0.0.1:8765/ -q",
            stale,
            "```",
        ]
    )
    with examples.demo_site() as base:
        (block,) = examples.parse_blocks(text)
        assert examples.check_block(block, base) != []
        new, changed = examples.regenerate(text, base)
        assert changed == ["$ sitescout groups http://127.0.0.1:8765/ -q"]
        assert stale not in new and "/blog/*" in new and base not in new
        (fresh,) = examples.parse_blocks(new)
        assert examples.check_block(fresh, base) == []
        again, changed = examples.regenerate(new, base)
    assert again == new and changed == []
