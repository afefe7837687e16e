"""The CLI's shared pieces (`cli/_flags.py`): the walk flags declared once. No network."""

from __future__ import annotations

import inspect

import pytest
import typer
from typer.testing import CliRunner

from sitescout._budget import Budgets
from sitescout.cli._flags import WalkFlags, with_walk_flags

SHARED = [
    "concurrency",
    "timeout",
    "user_agent",
    "max_depth",
    "max_fetches",
    "max_bytes",
    "max_urls",
    "deadline",
    "since",
    "since_strict",
    "include",
    "exclude",
    "sitemap_include",
    "sitemap_exclude",
    "state",
    "trust_lastmod",
    # the fetch control of `FetchFlags`, after the walk's own
    "header",
    "cookie",
    "cookies",
    "auth",
    "proxy",
    "trust_env",
    "ca_bundle",
    "insecure",
    "rate",
]


def flags(**given: int | float) -> WalkFlags:
    return WalkFlags(concurrency=4, timeout=30.0, user_agent="ua", **given)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "preset", "expected"),
    [
        pytest.param({}, Budgets(), Budgets(), id="none-no-preset"),
        pytest.param({}, Budgets.SAMPLER, Budgets.SAMPLER, id="none-keeps-preset"),
        pytest.param(
            {"max_urls": 10},
            Budgets.SAMPLER,
            Budgets(max_depth=3, max_fetches=20, max_bytes=50 * 1024 * 1024, max_urls=10),
            id="one-replaces-its-value",
        ),
        pytest.param(
            {"deadline": 2.5, "max_depth": 1},
            Budgets(),
            Budgets(max_depth=1, deadline=2.5),
            id="over-nothing",
        ),
    ],
)
def test_budgets_over_a_preset(given: dict[str, float], preset: Budgets, expected: Budgets) -> None:
    walk = flags(**given)
    assert walk.budgets_over(preset) == expected
    assert walk.budgets_given == bool(given)


def test_fetch_config_from_the_flags() -> None:
    config = flags().fetch()
    assert (config.user_agent, config.timeout) == ("ua", 30.0)


def test_the_flags_stand_where_the_command_puts_them() -> None:
    seen: list[WalkFlags] = []

    @with_walk_flags(concurrency=3)
    def command(url: str, before: int = 1, *, flags: WalkFlags, after: int = 2) -> None:
        seen.append(flags)

    names = list(inspect.signature(command).parameters)
    assert names == ["url", "before", *SHARED, "after"]
    assert inspect.signature(command).parameters["concurrency"].default == 3
    app = typer.Typer()
    app.command()(command)
    result = CliRunner().invoke(app, ["https://x.com/", "--max-urls", "7", "--timeout", "5"])
    assert result.exit_code == 0, result.output
    (got,) = seen
    assert got == WalkFlags(concurrency=3, timeout=5.0, user_agent=got.user_agent, max_urls=7)
    assert got.user_agent.startswith("sitescout/")
