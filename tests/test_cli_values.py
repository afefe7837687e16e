"""Option values read without typer's pydantic step (`cli._values`) come out exactly as typer's
own step gives them: the same value of the same type, or the same refusal in the same words.

Every parameter of every command is tried with values of its kind, plain and not (whole
numbers, decimals, bounds, other spellings of a choice, paths, repeated options), each through
the plain reading and through typer's `build_runtime_param`, the step it stands in for.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param
from typer.core import _TyperParameter

import sitescout.cli
from sitescout.cli import _values


def _parameters() -> Iterator[tuple[str, Any, Any]]:
    app = sitescout.cli._load(sitescout.cli.COMMANDS)
    group = typer.main.get_command(app)
    for name, command in sorted(group.commands.items()):  # type: ignore[attr-defined]
        ctx = Context(command)
        for param in command.get_params(ctx):
            if isinstance(param, _TyperParameter) and param.name != "help":
                yield f"{name} {param.name}", param, ctx


PARAMETERS = list(_parameters())


def plain_reading(param: Any) -> Any:
    """`param` given the plain reading afresh; that reading."""
    param._runtime_param = None
    _values.read_plainly([param])
    return param._runtime_param


def read(runtime: Any, param: Any, ctx: Any, value: Any) -> tuple[Any, ...]:
    """What `runtime` makes of `value`: ("value", its type, it) or ("refused", the message)."""
    try:
        got = runtime.coerce(value, param=param, ctx=ctx)
    except BadParameter as exc:
        return ("refused", exc.format_message())
    return ("value", type(got), got)


def outcome(param: Any, ctx: Any, value: Any, *, plain: bool) -> tuple[Any, ...]:
    """What reading `value` gives, plainly or by typer's own step."""
    runtime = plain_reading(param) if plain else build_runtime_param(param.type_descriptor)
    return read(runtime, param, ctx, value)


def concurrency() -> tuple[Any, Any]:
    _, param, ctx = next(p for p in PARAMETERS if p[0] == "urls concurrency")
    return param, ctx


def values_for(annotation: Any) -> st.SearchStrategy[Any]:
    digits = st.text("0123456789", min_size=1, max_size=20)
    texts = st.text(st.sampled_from("0123456789 +-_.eE,x"), max_size=8)
    if annotation is int:
        return st.one_of(digits, texts, st.integers(-5, 10**17), st.floats(allow_nan=False))
    if annotation is float:
        decimals = st.tuples(digits, digits).map(".".join)
        return st.one_of(
            digits, decimals, texts, st.integers(-5, 10**6), st.floats(-1, 1e6), st.booleans()
        )
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        names = [str(member.value) for member in annotation]
        spelt = st.sampled_from(names).flatmap(
            lambda v: st.sampled_from([v, v.upper(), v.title(), f" {v}", f"{v}x"])
        )
        return st.one_of(st.sampled_from(list(annotation)), spelt, st.text(max_size=6))
    if annotation is Path:
        return st.one_of(
            st.text(st.sampled_from("ab/._- ~"), max_size=8), st.just(Path("x")), st.just("-")
        )
    if annotation == list[str]:
        return st.lists(st.text(max_size=5), max_size=3).map(tuple)
    return st.one_of(st.text(max_size=8), st.integers(), st.none())


def test_the_plain_reading_covers_every_kind_the_commands_take() -> None:
    """Each kind of parameter the commands have is read plainly; none falls to typer at once.
    Failing here after a typer upgrade means its parts changed: every value is then read by its
    pydantic step again (correct, and about 0.1 s slower a run), until `_values` follows."""
    assert _values.KNOWN_TYPER, "typer's coercion parts moved: see cli/_values.py"
    kinds = {repr(param.type_descriptor.annotation) for _, param, _ in PARAMETERS}
    assert kinds >= {"<class 'str'>", "<class 'int'>", "<class 'float'>", "list[str]"}
    for label, param, _ in PARAMETERS:
        assert type(plain_reading(param)).__name__ == "_Plain", label


@pytest.mark.parametrize(
    ("label", "param", "ctx"), PARAMETERS, ids=[label for label, _, _ in PARAMETERS]
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_value_reads_as_typer_reads_it(label: str, param: Any, ctx: Any, data: Any) -> None:
    annotation = param.type_descriptor.annotation
    value = data.draw(values_for(annotation), label="value")
    typer_reads = outcome(param, ctx, value, plain=False)
    assert outcome(param, ctx, value, plain=True) == typer_reads, label


@pytest.mark.parametrize(
    ("value", "expected"),
    [("8", 8), ("008", 8), ("64", 64), (8, 8)],
)
def test_whole_numbers_in_range_are_read_plainly(value: Any, expected: int) -> None:
    param, ctx = concurrency()
    plain = plain_reading(param)
    assert plain.coerce(value, param=param, ctx=ctx) == expected
    assert param._runtime_param is plain, "read plainly, typer's step not built"


@pytest.mark.parametrize("value", ["65", "0", " 8", "8.0", "1e1", "+8", "8_0"])
def test_anything_else_goes_to_typers_own_step(value: str) -> None:
    param, ctx = concurrency()
    plain = plain_reading(param)
    typer_reads = outcome(param, ctx, value, plain=False)
    assert read(plain, param, ctx, value) == typer_reads
    assert param._runtime_param is not plain, "typer's own step took over"
