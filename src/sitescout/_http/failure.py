"""A failed connection or transfer, in plain words.

`connect_failure` says why no connection could be made (what a user reads), `describe` names any
transport error, and `refused` tells a host where nothing listens, which asking again cannot help.
"""

from __future__ import annotations

import errno
import socket
import ssl
from collections.abc import Iterator

import httpcore
import httpx

# What an `OSError` of a connection attempt says, in plain words.
_CONNECT_ERRNOS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ETIMEDOUT: "connection timed out",
}
_MAX_CAUSES = 32  # exceptions looked at behind one error: chains and groups are short


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what caused it, breadth first, exception groups opened; at most `_MAX_CAUSES`."""
    todo = [exc]
    seen: set[int] = set()
    while todo and len(seen) < _MAX_CAUSES:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            todo.extend(current.exceptions)
        todo.extend(e for e in (current.__cause__, current.__context__) if e is not None)


def connect_failure(exc: BaseException, host: str = "") -> str:
    """Why a connection could not be made, in a few plain words: `connection refused`,
    `cannot resolve example.com`, `network unreachable`, `host unreachable`, `connection timed
    out`, `TLS handshake failed (...)`; the error's own text when none of them is behind it."""
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve {host}" if host else "cannot resolve the host name"
        if isinstance(cause, ssl.SSLError):
            detail = (
                getattr(cause, "verify_message", None) or getattr(cause, "reason", None) or cause
            )
            return f"TLS handshake failed ({detail})"
        if isinstance(cause, OSError) and cause.errno in _CONNECT_ERRNOS:
            return _CONNECT_ERRNOS[cause.errno]
        if isinstance(cause, httpx.ConnectTimeout | httpcore.ConnectTimeout):
            return "connection timed out"
    return str(exc) or type(exc).__name__


def refused(exc: BaseException) -> bool:
    """Whether the host answered the connection with a refusal: nothing listens on the port."""
    return any(
        isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED for cause in _causes(exc)
    )


_TIMEOUT_KINDS: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
    (httpx.ConnectTimeout, "connect"),
    (httpx.ReadTimeout, "read"),
    (httpx.WriteTimeout, "write"),
    (httpx.PoolTimeout, "pool"),
)


def describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.TimeoutException):
        kind = next((k for cls, k in _TIMEOUT_KINDS if isinstance(exc, cls)), "network")
        return f"{kind} timeout: {exc}" if str(exc) else f"{kind} timeout"
    name = type(exc).__name__
    text = str(exc)
    return f"{name}: {text}" if text else name
