"""Option values read without typer's pydantic step, when a value has one plain reading.

typer checks every option's value through a pydantic `TypeAdapter`, built on first use, and
importing pydantic and building those adapters was about a quarter of a small run's CPU
(`sitescout urls` of a one-URL sitemap: 0.227 s without, 0.307 s with, 21 paired runs) and
9 MiB of its memory. A value a run gets is nearly always plain:
a string, a whole number or a decimal written in digits and within its option's range, an enum
member's exact value, a path. Such a value is read here, to what typer's adapter would give.
Anything else (a bound crossed, another spelling of a choice, an exponent) goes to typer's own
step, which reads it or says what is wrong in its usual words. Where typer's parts are not the
ones this knows, nothing is changed and typer reads every value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

try:  # typer's parts that are not its public interface: where they differ, typer reads all
    from typer._coercion import RuntimeParam, build_runtime_param
    from typer._param_types import coerce_cli_path
    from typer.core import _TyperParameter

    KNOWN_TYPER = True
except ImportError:  # pragma: no cover - another typer
    KNOWN_TYPER = False

__all__ = ["KNOWN_TYPER", "read_plainly"]

_WHOLE = re.compile(r"[0-9]{1,15}")
_DECIMAL = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?")
_UNSURE = object()  # not a plain value: typer's own step reads it


def _number(kind: type[Any], info: Any, value: Any) -> Any:
    if isinstance(value, str):
        if not (_WHOLE if kind is int else _DECIMAL).fullmatch(value):
            return _UNSURE
        number = kind(value)
    elif isinstance(value, bool) or not isinstance(value, int if kind is int else (int, float)):
        return _UNSURE
    else:
        number = kind(value)
    low, high = info.min, info.max
    if info.clamp or (low is not None and number < low) or (high is not None and number > high):
        return _UNSURE
    return number


def _choice(kind: type[Enum], info: Any, value: Any, ctx: Any) -> Any:
    if isinstance(value, kind):
        return value
    # typer compares each member's value as text, after the context's own normalizing and
    # case folding: only the exact value, with neither, is read here.
    if not isinstance(value, str) or not info.case_sensitive:
        return _UNSURE
    if getattr(ctx, "token_normalize_func", None) is not None:
        return _UNSURE
    for member in kind:
        if isinstance(member.value, str) and member.value == value:
            return member
    return _UNSURE


def _plain(annotation: Any, info: Any, value: Any, param: Any, ctx: Any) -> Any:
    if annotation is str:
        return value if isinstance(value, str) else _UNSURE
    if annotation is int or annotation is float:
        return _number(annotation, info, value)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(annotation, info, value, ctx)
    if annotation is Path and info.path_type in (None, Path):
        if isinstance(value, Path):
            plain = value
        elif isinstance(value, str) and value:
            plain = Path(value)
        else:
            return _UNSURE
        # typer's checks of a path (the flags an option asks for) run as they do for any path.
        try:
            return coerce_cli_path(plain, info, path_type=Path, param=param, ctx=ctx)
        except TypeError:  # pragma: no cover - another typer's signature
            return _UNSURE
    listed = get_origin(annotation) is list and get_args(annotation) == (str,)
    if listed and isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    return _UNSURE


if KNOWN_TYPER:

    @dataclass(frozen=True)
    class _Plain(RuntimeParam):
        """A parameter's values read plainly where they can be; typer's own step otherwise."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            got = _plain(self.annotation, self.parameter_info, value, param, ctx)
            if got is not _UNSURE:
                return got
            full = build_runtime_param(param.type_descriptor)
            param._runtime_param = full
            return full._coerce_value(value, param=param, ctx=ctx)


def _eligible(param: Any) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is None or getattr(param, "_runtime_param", False) is not None:
        return False
    info = descriptor.parameter_info
    return descriptor.file_annotation is None and getattr(info, "parser", None) is None


def read_plainly(params: list[Any]) -> list[Any]:
    """Give each typer parameter of `params` (not yet read) the plain reading first."""
    if not KNOWN_TYPER:  # pragma: no cover - another typer
        return params
    for param in params:
        if isinstance(param, _TyperParameter) and _eligible(param):
            descriptor = param.type_descriptor
            try:
                plain = _Plain(
                    parameter_info=descriptor.parameter_info, annotation=descriptor.annotation
                )
            except TypeError:  # pragma: no cover - another typer's fields
                return params
            param._runtime_param = plain
    return params
