"""Start-up: what `import sitescout` and `sitescout --version` load, not how long they take.

Each check runs in a fresh interpreter and reads its `sys.modules`: a module imported at the
top of the wrong file fails here, on any machine. The seconds are measured by
`benchmarks/startup.py`.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import sitescout
import sitescout.cli
from sitescout.cli import app

# What `import sitescout` does not load: the HTTP client and its event loop, the Rust core, the
# parsers, the cluster, the extras, the browser, the CLI. Each comes with the first name or
# command that needs it.
NOT_ON_IMPORT = (
    "asyncio",
    "httpx",
    "httpcore",
    "lxml",
    "protego",
    "jsonschema_rs",
    "dask",
    "distributed",
    "pyarrow",
    "pandas",
    "playwright",
    "typer",
    "click",
    "rich",
    "sitescout._core",
    "sitescout._models",
    "sitescout._api",
    "sitescout.cli",
)
# What `sitescout --version` does not load besides: no command, nor the app that holds them.
NOT_ON_VERSION = (*NOT_ON_IMPORT[:-1], "sitescout.cli._app", "sitescout.cli._flags")

SITESCOUT = Path(sys.executable).with_name("sitescout")


def ran(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`argv` run to its end (a minute at most), its output kept."""
    return subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False
    )


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (its stdout is not read)."""
    dump = "import json, sys; print(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    proc = ran([sys.executable, "-c", f"{code}\n{dump}"])
    assert proc.returncode == 0, proc.stderr
    names: list[str] = json.loads(proc.stderr.splitlines()[-1])
    return set(names)


def run_main(*args: str) -> str:
    """`sitescout ARGS` through the program's entry point, in code for `loaded_after`."""
    return (
        "import sys\n"
        f"sys.argv = ['sitescout', *{list(args)!r}]\n"
        "from sitescout.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as end:\n"
        "    assert end.code in (0, None), end.code\n"
    )


def test_import_sitescout_loads_none_of_the_heavy_modules() -> None:
    loaded = loaded_after("import sitescout")
    assert sorted(loaded & set(NOT_ON_IMPORT)) == []


def test_a_public_name_loads_its_module_on_first_use() -> None:
    loaded = loaded_after("import sitescout\nsitescout.Entry")
    assert "sitescout._models" in loaded
    assert "httpx" not in loaded  # and only what that module needs


def test_version_loads_no_command() -> None:
    loaded = loaded_after(run_main("--version"))
    assert sorted(loaded & set(NOT_ON_VERSION)) == []


def test_version_prints_what_the_app_prints() -> None:
    proc = ran([str(SITESCOUT), "--version"])
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0,
        f"sitescout {sitescout.__version__}\n",
        "",
    )
    via_app = CliRunner().invoke(app, ["--version"])
    assert (via_app.exit_code, via_app.stdout) == (0, proc.stdout)


def test_a_command_loads_its_own_module_only() -> None:
    loaded = loaded_after(run_main("diff", "--help"))
    commands = {f"sitescout.cli.{name}" for name in sitescout.cli.COMMANDS}
    assert sorted(loaded & commands) == ["sitescout.cli.diff"]
    # `diff` reads saved files: neither the walk nor the HTTP client comes with it.
    assert sorted(loaded & {"httpx", "sitescout._http", "sitescout._walk"}) == []


def test_a_walk_loads_neither_the_extraction_nor_the_crawl(tmp_path: Path) -> None:
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/a</loc></url></urlset>"
    )
    out = tmp_path / "out.txt"
    loaded = loaded_after(run_main("urls", str(sitemap), "-q", "-f", "txt", "-o", str(out)))
    assert "sitescout._walk" in loaded  # it walked
    assert out.read_text() == "https://example.com/a\n"
    # They load with the first extraction, and with a link crawl when a site has no sitemap.
    # So does the comparison with a saved inventory, with `--changes-only`.
    unwanted = {
        "sitescout._extract",
        "sitescout._select",
        "sitescout._crawl",
        "lxml.html",
        "sitescout._diff",
    }
    assert sorted(loaded & unwanted) == []
    # httpx's own command line, and what it loads whenever click is installed.
    assert "httpx" in loaded
    assert sorted(loaded & {"click", "pygments"}) == []
    # A quiet walk that goes well prints nothing on stderr: rich's console is not loaded.
    assert sorted(name for name in loaded if name.partition(".")[0] == "rich") == []


def test_a_walk_reads_its_options_without_pydantic(tmp_path: Path) -> None:
    """Plain values of every kind a command takes (a string, a choice, a path, whole numbers and
    decimals in range, a repeated option) are read without typer's pydantic step, which was
    about a quarter of a small run's CPU; a value it has to judge still goes to it (below)."""
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/a</loc></url>"
        "<url><loc>https://example.com/b</loc></url></urlset>"
    )
    out = tmp_path / "out.txt"
    options = ["-f", "txt", "-o", str(out), "--concurrency", "3", "--timeout", "20.5"]
    options += ["--max-urls", "1", "--exclude", "/b$", "--user-agent", "probe/1", "-q"]
    loaded = loaded_after(run_main("urls", str(sitemap), *options))
    assert out.read_text() == "https://example.com/a\n"
    assert sorted(name for name in loaded if name.partition(".")[0] == "pydantic") == []
    refused = ran([str(SITESCOUT), "urls", str(sitemap), "--concurrency", "65"])
    assert refused.returncode == 2
    assert "less than or equal to 64" in " ".join(refused.stderr.split())


def test_a_quiet_walk_still_says_what_went_wrong(tmp_path: Path) -> None:
    """The stderr console is made on first use: an error still reaches stderr."""
    proc = ran([str(SITESCOUT), "urls", str(tmp_path / "missing.xml"), "-q"])
    assert proc.returncode == 2, proc.stderr
    assert "error: no such file" in proc.stderr


def test_the_program_freezes_what_its_imports_built(tmp_path: Path) -> None:
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/a</loc></url></urlset>"
    )
    code = run_main("urls", str(sitemap), "-q", "-o", str(tmp_path / "out.txt"))
    check = (
        "import gc\nassert gc.get_freeze_count() > 10_000, gc.get_freeze_count()\n"
        "assert gc.isenabled()  # off while the imports ran, on again for the run\n"
        "# What the run built is frozen as it ends: the exit's collection has nothing to walk.\n"
        "assert len(gc.get_objects(generation=2)) < 500, len(gc.get_objects(generation=2))\n"
    )
    loaded = loaded_after(code + check)
    assert "sitescout._walk" in loaded


def test_a_walk_of_files_loads_no_tls_certificates(tmp_path: Path) -> None:
    """The CA bundle (about 30 ms) is loaded at the first https request, not with the client."""
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_text(
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        "<url><loc>https://example.com/a</loc></url></urlset>"
    )
    code = run_main("urls", str(sitemap), "-q", "-f", "txt", "-o", str(tmp_path / "out.txt"))
    check = (
        "from sitescout._http.config import shared_ssl_context\n"
        "assert shared_ssl_context.cache_info().currsize == 0\n"
    )
    assert "sitescout._http" in loaded_after(code + check)
    assert (tmp_path / "out.txt").read_text() == "https://example.com/a\n"


def test_httpx_own_command_line_still_runs_in_the_program() -> None:
    """The program keeps httpx's command line from loading, not from working."""
    pytest.importorskip("click")  # httpx's command line needs it
    code = (
        "import sys\n"
        "from sitescout.cli import _defer_httpx_cli\n"
        "_defer_httpx_cli()\n"
        "import httpx\n"
        "assert 'pygments' not in sys.modules\n"
        "sys.argv = ['httpx', '--help']\n"
        "try:\n"
        "    httpx.main()\n"
        "except SystemExit as end:\n"
        "    assert end.code in (0, None), end.code\n"
    )
    loaded = loaded_after(code)
    assert "pygments" in loaded  # the real one ran


def test_help_loads_every_command() -> None:
    loaded = loaded_after(run_main("--help"))
    assert {f"sitescout.cli.{name}" for name in sitescout.cli.COMMANDS} <= loaded


def test_the_command_modules_are_the_commands() -> None:
    """`main` finds a command's module by its name: each module registers the command named so."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    assert sorted(group.commands) == sorted(sitescout.cli.COMMANDS)
    for name, command in group.commands.items():
        assert command.callback is not None
        assert command.callback.__module__ == f"sitescout.cli.{name}"


def test_the_root_takes_no_option_with_a_value() -> None:
    """What `main` relies on to find the command: the first argument that is not an option."""
    group = typer.main.get_command(app)
    params = group.get_params(typer.Context(group))
    assert sorted(opt for param in params for opt in param.opts) == ["--help", "--version"]
    assert all(getattr(param, "is_flag", False) for param in params)


@pytest.mark.parametrize("name", sitescout.__all__)
def test_every_public_name_resolves_and_is_listed(name: str) -> None:
    value = getattr(sitescout, name)
    assert name in dir(sitescout)
    if not isinstance(value, (str, types.ModuleType)):  # `__version__`
        assert getattr(sys.modules[value.__module__], name) is value


@pytest.mark.parametrize("name", sitescout.cli.COMMANDS)
def test_a_command_alone_says_what_it_says_among_all(name: str) -> None:
    """A command's help with only its module loaded (the program) is its help in the full app."""
    env = {**os.environ, "COLUMNS": "120", "TERMINAL_WIDTH": "120"}
    alone = subprocess.run(
        [SITESCOUT, name, "--help"], capture_output=True, text=True, env=env, timeout=60
    )
    among_all = CliRunner().invoke(app, [name, "--help"], env=env, prog_name="sitescout")
    assert alone.returncode == among_all.exit_code == 0, alone.stderr
    assert alone.stdout == among_all.stdout


def test_the_lazy_table_mirrors_what_type_checkers_see() -> None:
    """`_LAZY_BY_MODULE` (run time) and the `TYPE_CHECKING` imports (mypy, IDEs) name the same
    names from the same modules; with the eager ones, they are `__all__`."""
    tree = ast.parse(Path(sitescout.__file__).read_text(encoding="utf-8"))
    guarded = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING"
    )
    seen: dict[str, tuple[str, ...]] = {}
    for node in guarded.body:
        assert isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        seen[node.module] = tuple(alias.name for alias in node.names)
    assert seen == sitescout._LAZY_BY_MODULE
    eager = {name for name in vars(sitescout) if name in sitescout.__all__} - set(sitescout._LAZY)
    assert sorted(eager | set(sitescout._LAZY)) == sitescout.__all__
