"""Run the reference parser (the oracle) and the native scanner on the same bytes and reduce
both to one comparable `Record`.

Shared by the differential tests (tests/test_core_*.py) and the fuzz harness (fuzz/). The
native side is fed in chunks of a random plan and drained with `take()` at random points, since
the walk feeds network chunks of any size and results must not depend on where they fall.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import os
import random
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.reference.parse import SitemapParser

DOC_URL = "https://x.com/sitemaps/pages.xml"

# A scanner error the glue documents: anything else escaping feed()/close() is a bug.
# (A panic is caught at the boundary and recorded in `.errors`, so none is expected at all.)
DOCUMENTED_ERRORS: tuple[type[BaseException], ...] = (TypeError,)


def core_available() -> bool:
    try:
        core = importlib.import_module("sitescout._core")
    except ImportError:
        return False
    return hasattr(core, "Scanner")


@dataclass(frozen=True)
class Record:
    """Everything a caller can observe of one parsed document."""

    kind: str | None
    entries: tuple[tuple[Any, ...], ...]
    sitemaps: tuple[str, ...]
    malformed: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    damaged: bool

    @property
    def urls(self) -> list[str]:
        return [e[0] for e in self.entries]

    def diff(self, other: Record) -> list[str]:
        """The fields where `other` differs, each with both values (shortened); for entries,
        the first few that differ, field by field."""
        out = []
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if a == b:
                continue
            if f.name != "entries" or len(a) != len(b):
                out.append(f"{f.name}:\n    oracle {_short(a)}\n    core   {_short(b)}")
                continue
            shown = 0
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                if x != y and shown < 3:
                    shown += 1
                    fields = [
                        f"{name}: oracle {_short(u, 300)} core {_short(v, 300)}"
                        for name, u, v in zip(ENTRY_FIELDS, x, y, strict=False)
                        if u != v
                    ]
                    out.append(f"entries[{i}] {x[0]!r}: " + "; ".join(fields))
        return out


ENTRY_FIELDS = (
    "url",
    "lastmod",
    "priority",
    "changefreq",
    "alternates",
    "images",
    "videos",
    "news",
    "sitemap",
    "depth",
)


def _short(value: object, limit: int = 1500) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def entry_tuple(entry: Any) -> tuple[Any, ...]:
    """Every field of an `Entry` (nested alternates/images/videos/news as tuples)."""
    if dataclasses.is_dataclass(entry):
        return dataclasses.astuple(entry)  # type: ignore[arg-type]
    return tuple(entry)


def _malformed_pair(m: Any) -> tuple[str, str]:
    if isinstance(m, tuple):
        return (m[0], m[1])
    return (m.raw, m.reason)


def _batch_entries(batch: Any) -> list[Any]:
    if hasattr(batch, "entries"):
        return list(batch.entries())
    return list(batch)


# --------------------------------------------------------------------------- chunk plans


def chunk_plan(rnd: random.Random, n: int) -> list[int]:
    """Chunk sizes that add up to `n`: whole, 1-byte trickle, or runs of random sizes."""
    mode = rnd.randrange(6)
    if n == 0 or mode == 0:
        return [n] if n else []
    if mode == 1 and n <= 20_000:
        return [1] * n
    top = rnd.choice((2, 7, 64, 1024, max(1, n // 2)))
    sizes: list[int] = []
    left = n
    while left > 0:
        size = min(left, 1 if rnd.random() < 0.1 else rnd.randint(1, top))
        sizes.append(size)
        left -= size
    return sizes


def chunks(data: bytes, plan: Sequence[int]) -> Iterator[bytes]:
    pos = 0
    for size in plan:
        yield data[pos : pos + size]
        pos += size
    assert pos == len(data), "a chunk plan must cover the document"


# --------------------------------------------------------------------------- the two parsers


def run_oracle(
    data: bytes,
    url: str = DOC_URL,
    *,
    depth: int = 1,
    plan: Sequence[int] | None = None,
    truncated: bool = False,
) -> Record:
    p = SitemapParser(url, depth=depth)
    entries: list[Any] = []
    sitemaps: list[str] = []
    malformed: list[Any] = []
    for chunk in chunks(data, plan if plan is not None else [len(data)] if data else []):
        p.feed(chunk)
        e, s, m = p.take()
        entries += e
        sitemaps += s
        malformed += m
    if truncated:
        p.note_truncated()
    p.close()
    e, s, m = p.take()
    return Record(
        p.kind,
        tuple(entry_tuple(x) for x in entries + e),
        tuple(sitemaps + s),
        tuple(_malformed_pair(x) for x in malformed + m),
        tuple(p.notes),
        bool(p.errors),
    )


def run_core(
    data: bytes,
    url: str = DOC_URL,
    *,
    depth: int = 1,
    plan: Sequence[int] | None = None,
    truncated: bool = False,
    drain: random.Random | None = None,
    encoding: str = "",
) -> Record:
    """The native scanner fed chunk by chunk; with `drain`, `take()` runs at random points.

    With `encoding` (a Content-Encoding), `data` is that compressed body: the chunks go through
    the walk's decoder (the core's inflater) and what it gives goes to the scanner."""
    if os.environ.get("SITESCOUT_DIFF_FAKE_CORE") == "1":  # to check the harness itself
        return run_oracle(data, url, depth=depth, plan=plan, truncated=truncated)
    import sitescout._parse  # registers the entry classes `take()` builds  # noqa: F401
    from sitescout._core import Scanner

    s = Scanner(url, depth)
    entries: list[Any] = []
    sitemaps: list[str] = []
    malformed: list[Any] = []

    def take() -> None:
        batch, sm, mf = s.take()
        entries.extend(_batch_entries(batch))
        sitemaps.extend(sm)
        malformed.extend(mf)

    decoder = None
    if encoding:
        from sitescout._http.decode import Decoder

        decoder = Decoder(encoding, 1 << 30)
    for chunk in chunks(data, plan if plan is not None else [len(data)] if data else []):
        for piece in decoder.decode(chunk) if decoder is not None else (chunk,):
            s.feed(piece)
        if drain is not None and drain.random() < 0.3:
            take()
    if decoder is not None:
        for piece in decoder.flush():
            s.feed(piece)
        assert decoder.ended(), "the compressed body was whole"
    if truncated:
        s.note_truncated()
    s.close()
    take()
    return Record(
        s.kind,
        tuple(entry_tuple(x) for x in entries),
        tuple(sitemaps),
        tuple(_malformed_pair(x) for x in malformed),
        tuple(s.notes),
        bool(s.errors),
    )


def save_failure(data: bytes, label: str) -> None:
    """With SITESCOUT_DIFF_SAVE=dir, keep each failing document for minimizing by hand."""
    where = os.environ.get("SITESCOUT_DIFF_SAVE")
    if where:
        path = Path(where)
        path.mkdir(parents=True, exist_ok=True)
        (path / f"{label}-{abs(hash(data)):x}.bin").write_bytes(data)


def assert_same(
    data: bytes,
    url: str = DOC_URL,
    *,
    rnd: random.Random | None = None,
    truncated: bool = False,
    label: str = "doc",
    plan: Sequence[int] | None = None,
    encoding: str = "",
    body: bytes | None = None,
) -> Record:
    """Oracle (whole document) and core (random chunking, or `plan`) must agree on every
    field. With `encoding`, the core reads `body`, `data` compressed so, through the decoder."""
    rnd = rnd or random.Random(len(data))
    fed = data if body is None else body
    plan = chunk_plan(rnd, len(fed)) if plan is None else plan
    want = run_oracle(data, url, truncated=truncated)
    got = run_core(fed, url, plan=plan, truncated=truncated, drain=rnd, encoding=encoding)
    if got != want:
        whole = run_core(fed, url, truncated=truncated, encoding=encoding)
        where = "also when fed whole" if whole != want else "only when chunked (whole agrees)"
        save_failure(data, label)
        raise AssertionError(
            f"{label}: core differs from the oracle ({where}); plan={_short(plan, 300)}\n"
            + "\n".join(want.diff(got))
            + f"\ndocument ({len(data)} bytes): {_short(data, 3000)}"
        )
    return want


_TOKEN = re.compile(rb"<!--.*?-->|<!\\[CDATA\\[.*?\\]\\]>|<[^<>]*>|[^<]+|<", re.S)


def minimize(data: bytes, fails: Callable[[bytes], bool], *, budget: int = 4000) -> bytes:
    """A smaller document for which `fails` still holds: whole markup tokens are dropped
    (delta debugging), then text tokens are shortened a character at a time."""
    tokens = _TOKEN.findall(data)
    calls = 0

    def check(toks: list[bytes]) -> bool:
        nonlocal calls
        calls += 1
        return calls <= budget and fails(b"".join(toks))

    # Whole elements first: dropping a start tag alone makes the document damaged.
    changed = True
    while changed and calls < budget:
        changed = False
        for i in range(len(tokens)):
            end = _element_end(tokens, i)
            if end is not None and check(tokens[:i] + tokens[end + 1 :]):
                tokens = tokens[:i] + tokens[end + 1 :]
                changed = True
                break
    n = 2
    while len(tokens) >= 2 and calls < budget:
        size = max(1, len(tokens) // n)
        for start in range(0, len(tokens), size):
            trial = tokens[:start] + tokens[start + size :]
            if check(trial):
                tokens = trial
                n = max(n - 1, 2)
                break
        else:
            if size == 1:
                break
            n = min(n * 2, len(tokens))
    for i in range(len(tokens)):
        if tokens[i].startswith(b"<"):
            continue
        j = 0
        while j < len(tokens[i]) and calls < budget:
            trial = [*tokens[:i], tokens[i][:j] + tokens[i][j + 1 :], *tokens[i + 1 :]]
            if check(trial):
                tokens = trial
            else:
                j += 1
    return b"".join(tokens)


def _element_end(tokens: list[bytes], i: int) -> int | None:
    """The index of the end tag closing the start tag at `i` (itself if self-closing)."""
    tok = tokens[i]
    if not tok.startswith(b"<") or tok[1:2] in (b"/", b"!", b"?") or not tok.endswith(b">"):
        return None
    if tok.endswith(b"/>"):
        return i
    depth = 0
    for j in range(i, len(tokens)):
        t = tokens[j]
        if not t.startswith(b"<") or t[1:2] in (b"!", b"?") or t.endswith(b"/>"):
            continue
        depth += -1 if t.startswith(b"</") else 1
        if depth == 0:
            return j
    return None


def differs(data: bytes, url: str = DOC_URL, *, trickle: bool = False) -> bool:
    """The oracle reads `data` as well-formed and the core reads it differently."""
    want = run_oracle(data, url)
    if want.damaged:
        return False
    plan = [1] * len(data) if trickle else None
    return run_core(data, url, plan=plan) != want


# --------------------------------------------------------------------------- suite documents

TESTS = Path(__file__).resolve().parents[1]
# The differential tests' own modules are left out: their literals are this harness's inputs.
SUITE_MODULES = tuple(
    p.name for p in sorted(TESTS.glob("test_*.py")) if not p.name.startswith("test_core_")
)
_DOC_START = re.compile(rb"\A(?:\xef\xbb\xbf|\xff\xfe|\xfe\xff)?\s*(?:<|https?://)", re.I)


def suite_documents(modules: Iterable[str] = SUITE_MODULES) -> list[bytes]:
    """Every document-like literal in the suite's tests, found by reading their source.

    Constant expressions are evaluated: literals, `+` and `*` of them, f-strings and
    `.encode()`, and names bound to such expressions at module level (`PAD`, `SM_NS`). Anything
    needing the test's own helpers is not, so documents built at run time are missed (the
    generated documents cover those shapes).
    """
    found: dict[bytes, None] = {}
    for name in modules:
        path = TESTS / name
        if path.is_file():
            found.update(dict.fromkeys(documents_in_source(path.read_text(encoding="utf-8"))))
    return list(found)


def documents_in_source(source: str) -> list[bytes]:
    """The document-like constant expressions of one Python module (see `suite_documents`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    env: dict[str, object] = {}
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            value = _evaluate(stmt.value, env)
            if isinstance(value, str | bytes | int):
                env[stmt.targets[0].id] = value
    found: dict[bytes, None] = {}
    for node in ast.walk(tree):
        value = _evaluate(node, env)
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogatepass")
        if isinstance(value, bytes) and len(value) >= 8 and _DOC_START.match(value):
            found[value] = None
    return list(found)


class _NotConstant(Exception):
    pass


def _evaluate(node: ast.AST, env: dict[str, object]) -> object:
    try:
        return _eval(node, env, 0)
    except (_NotConstant, TypeError, ValueError, OverflowError, MemoryError, RecursionError):
        return None


def _eval(node: ast.AST, env: dict[str, object], depth: int) -> object:
    if depth > 50:
        raise _NotConstant
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
        left, right = _eval(node.left, env, depth + 1), _eval(node.right, env, depth + 1)
        if (
            isinstance(node.op, ast.Add)
            and type(left) is type(right)
            and isinstance(left, str | bytes | int)
        ):
            return left + right  # type: ignore[operator]
        if isinstance(node.op, ast.Mult):
            if isinstance(left, str | bytes) and isinstance(right, int) and right < 100_000:
                return left * right
            if isinstance(right, str | bytes) and isinstance(left, int) and left < 100_000:
                return right * left
        raise _NotConstant
    if isinstance(node, ast.JoinedStr):
        parts = []
        for piece in node.values:
            if isinstance(piece, ast.FormattedValue):
                if piece.format_spec is not None or piece.conversion != -1:
                    raise _NotConstant
                parts.append(str(_eval(piece.value, env, depth + 1)))
            else:
                parts.append(str(_eval(piece, env, depth + 1)))
        return "".join(parts)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "encode"
        and not node.args
        and not node.keywords
    ):
        inner = _eval(node.func.value, env, depth + 1)
        if isinstance(inner, str):
            return inner.encode()
    raise _NotConstant


# --------------------------------------------------------------------------- generated documents
#
# Hypothesis draws each document's structure (kind, prolog, items and their fields, how each
# value is written); a `random.Random` it also draws makes the per-character choices (which
# characters become references, where whitespace goes), which keeps generation fast.

SM_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XHTML_NS = "http://www.w3.org/1999/xhtml"
IMAGE_NS = "http://www.google.com/schemas/sitemap-image/1.1"
VIDEO_NS = "http://www.google.com/schemas/sitemap-video/1.1"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
ATOM_NS = "http://www.w3.org/2005/Atom"


@dataclass(frozen=True)
class Doc:
    """A generated document and where its items are (for damage and intact-item checks)."""

    data: bytes
    family: str  # what the generator meant: urlset, sitemapindex, rss, atom, text, other
    items: tuple[tuple[int, int], ...] = ()  # byte spans of the <url>/<sitemap> elements
    head: bytes = b""  # prolog and root start tag: head + item + tail is a document of one item
    tail: bytes = b""
    body_end: int = 0  # where the root's end tag starts
    url: str = DOC_URL


class Parts:
    """Pieces of text joined into the document, remembering the byte span of each item."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.items: list[tuple[int, int]] = []
        self.size = 0
        self.head_end = 0
        self.body_end = 0

    def add(self, text: str, *, item: bool = False) -> None:
        n = len(text.encode("utf-8", "surrogatepass"))
        if item:
            self.items.append((self.size, self.size + n))
        self.pieces.append(text)
        self.size += n

    def mark_head(self) -> None:
        self.head_end = self.size

    def mark_body_end(self) -> None:
        self.body_end = self.size

    def text(self) -> str:
        return "".join(self.pieces)


# Whitespace Python's str.strip() removes, beyond the ASCII four (XML has no others in markup,
# but text values may carry them).
UNICODE_SPACE = "\u00a0\u2003\u3000\u0085\u2028\u200a\u1680\ufeff"
CONTROL = "".join(chr(c) for c in (*range(1, 9), 0x0B, 0x0C, *range(14, 32)))


def ws(rnd: random.Random, *, allow_none: bool = True) -> str:
    if allow_none and rnd.random() < 0.6:
        return ""
    return "".join(rnd.choice(" \t\n\r\n") for _ in range(rnd.randint(1, 4)))


def escape_text(rnd: random.Random, value: str, style: str) -> str:
    """`value` as XML character data, written so that a parser reads back exactly `value`
    (apart from what XML itself does: CR LF becomes LF)."""
    if style == "cdata" and "]]>" not in value:
        return "<![CDATA[" + value + "]]>"
    out = []
    for i, ch in enumerate(value):
        if ch == "&":
            rest = value[i + 1 : i + 12]
            bare_ok = (
                style == "bare"
                and re.match(r"(?:amp|lt|gt|quot|apos|#[0-9]{1,8}|#x[0-9a-fA-F]{1,8});", rest)
                is None
            )
            if bare_ok and rnd.random() < 0.7:
                out.append("&")
            else:
                out.append(rnd.choice(("&amp;", "&#38;", "&#x26;")))
        elif ch == "<":
            out.append(rnd.choice(("&lt;", "&#60;", "&#x3C;")))
        elif ch == ">":
            out.append(rnd.choice((">", "&gt;")))
        elif ch == "]" and value[i : i + 3] == "]]>":
            out.append("&#93;")
        elif style == "refs" and rnd.random() < 0.2 and (ch >= " " or ch in "\t\n\r"):
            code = ord(ch)
            out.append(rnd.choice((f"&#{code};", f"&#x{code:x};", f"&#X{code:X};"[:-1] + ";")))
        else:
            out.append(ch)
    text = "".join(out)
    if style == "split" and len(text) > 2:
        # A value in several pieces: references, CDATA, comments and PIs in between.
        cut = rnd.randrange(1, len(text))
        while (cut < len(text) and text[cut - 1] == "&") or re.search(r"&[#\w]*$", text[:cut]):
            cut -= 1
            if cut <= 0:
                return text
        between = rnd.choice(("<!-- c -->", "<?pi x?>", "<!---->", "<![CDATA[]]>"))
        return text[:cut] + between + text[cut:]
    return text


def escape_attr(rnd: random.Random, value: str, quote: str) -> str:
    out = []
    for ch in value:
        if ch == "&":
            out.append(rnd.choice(("&amp;", "&#38;")))
        elif ch == "<":
            out.append("&lt;")
        elif ch == quote:
            out.append("&quot;" if quote == '"' else "&apos;")
        elif ch in "\t\n\r":
            out.append(f"&#{ord(ch)};")  # a literal one becomes a space: see attr_value
        else:
            out.append(ch)
    return "".join(out)


def attr_value(rnd: random.Random, value: str) -> str:
    """A quoted attribute value; sometimes with literal tabs/newlines (XML turns them into
    spaces) or a bare `&` (kept literal)."""
    quote = rnd.choice("\"'")
    body = escape_attr(rnd, value, quote)
    if rnd.random() < 0.1 and " " in body:
        body = body.replace(" ", rnd.choice(("\n", "\t", "\r\n")), 1)
    return quote + body + quote


def element(
    rnd: random.Random,
    name: str,
    text: str | None,
    *,
    attrs: Sequence[tuple[str, str]] = (),
    style: str = "plain",
) -> str:
    """`<name attrs>text</name>`; no text gives `<name/>` or `<name></name>`."""
    attr_text = "".join(
        f"{ws(rnd, allow_none=False) if i or rnd.random() < 0.9 else ' '}{k}"
        f"{rnd.choice(('=', ' = ', '='))}{attr_value(rnd, v)}"
        for i, (k, v) in enumerate(attrs)
    )
    if attrs and not attr_text.startswith((" ", "\t", "\n", "\r")):
        attr_text = " " + attr_text
    if text is None:
        if rnd.random() < 0.5:
            return f"<{name}{attr_text}{ws(rnd)}/>"
        return f"<{name}{attr_text}></{name}>"
    return f"<{name}{attr_text}>{escape_text(rnd, text, style)}</{name}{ws(rnd)}>"


TEXT_STYLES = ("plain", "plain", "plain", "refs", "bare", "cdata", "split")


# Values with non-ASCII decimal digits: Python's `\\d` and `float()` read them as digits. Set
# SITESCOUT_DIFF_SKIP=unicode-digits to leave them out while hunting for other differences.
_SKIP = set(os.environ.get("SITESCOUT_DIFF_SKIP", "").split(","))
UNICODE_DIGIT_DATES = (
    ()
    if "unicode-digits" in _SKIP
    else ("\uff12\uff10\uff12\uff14-01-01", "\u0662\u0660\u0662\u0664-01-01T10:00Z")
)
UNICODE_DIGIT_PRIORITIES = () if "unicode-digits" in _SKIP else ("\u0660.\u0665", "\uff10.\uff15")


class G:
    """A generator of values from a `random.Random`: the few combinators of hypothesis's
    strategies that the document generators need, at a fraction of the cost per draw (a
    document takes hundreds of draws, and the long run wants 100,000 documents)."""

    def __init__(self, fn: Callable[[random.Random], Any]) -> None:
        self.fn = fn

    def __call__(self, rnd: random.Random) -> Any:
        return self.fn(rnd)

    def __or__(self, other: G) -> G:
        return one_of(self, other)

    def map(self, f: Callable[[Any], Any]) -> G:
        return G(lambda rnd: f(self.fn(rnd)))


def sampled_from(values: Sequence[Any]) -> G:
    values = list(values)
    return G(lambda rnd: rnd.choice(values))


def integers(lo: int, hi: int) -> G:
    return G(lambda rnd: rnd.randint(lo, hi))


def booleans() -> G:
    return G(lambda rnd: rnd.random() < 0.5)


def none() -> G:
    return G(lambda rnd: None)


def one_of(*gens: G) -> G:
    return G(lambda rnd: rnd.choice(gens)(rnd))


def builds(f: Callable[..., Any], *gens: G) -> G:
    return G(lambda rnd: f(*(g(rnd) for g in gens)))


def lists(g: G, max_size: int) -> G:
    return G(lambda rnd: [g(rnd) for _ in range(rnd.randint(0, max_size))])


def floats(lo: float, hi: float) -> G:
    return G(lambda rnd: rnd.uniform(lo, hi))


# Characters for free text: mostly plain, plus the kinds that break naive code.
_ODD_CHARS = "\x00\t\n\r \x85\xa0\u2028\u3000\ufeff\ufffd\u00e9\u0130\u212a&<>\"';]"


def _char(rnd: random.Random) -> str:
    r = rnd.random()
    if r < 0.6:
        return chr(rnd.randint(0x20, 0x7E))
    if r < 0.75:
        return rnd.choice(_ODD_CHARS)
    if r < 0.85:
        return chr(rnd.randint(0x80, 0x7FF))
    if r < 0.95:
        code = rnd.randint(0x800, 0xFFFD)
        return chr(code) if not 0xD800 <= code < 0xE000 else "x"
    return chr(rnd.randint(0x10000, 0x10FFFF))


def text(max_size: int, alphabet: G | None = None) -> G:
    pick = alphabet if alphabet is not None else _char
    return G(lambda rnd: "".join(pick(rnd) for _ in range(rnd.randint(0, max_size))))


def generated(fn: Callable[..., Any]) -> Callable[..., G]:
    """`fn(draw, ...)` as a generator, like hypothesis's `composite`."""

    def make(*args: Any, **kwargs: Any) -> G:
        return G(lambda rnd: fn(lambda g: g(rnd), *args, **kwargs))

    return make


def strategy(gen: G) -> Any:
    """A hypothesis strategy drawing documents from `gen`: hypothesis picks the seed."""
    from hypothesis import strategies as hs

    return hs.integers(0, 2**64 - 1).map(lambda seed: gen(random.Random(seed)))


_gen = sys.modules[__name__]


@functools.cache
def url_values() -> Any:
    """Raw `<loc>`-like values: clean absolute URLs, ones normalization changes, relative
    references, other schemes, junk, with whitespace around."""
    s = _gen
    scheme = s.sampled_from(["https", "http", "HTTPS", "Http", "ftp", "mailto", "javascript"])
    host = s.sampled_from(
        [
            "x.com",
            "X.Com",
            "www.x.com",
            "x.com:443",
            "x.com:80",
            "x.com:8080",
            "127.0.0.1:8000",
            "[::1]:8443",
            "b\u00fccher.de",
            "xn--bcher-kva.de",
            "x.com.",
            "user:pw@x.com",
            "",
            "x..com",
            "x.com:99999",
            "EXAMPLE.org",
        ]
    )
    segment = s.lists(
        s.sampled_from(
            [
                *"abcXYZ019-._~%!$'()*+,;=:@ \u00e9\u4e2d/\\\"<>^`{|}[]#",
                *("%2F", "%7e", "%41", "%zz", "..", ".", "%C3%A9", "&", "&amp;", "\t"),
            ]
        ),
        12,
    ).map("".join)
    key = s.sampled_from(
        ["a", "q", "utm_source", "UTM_Medium", "fbclid", "gclid", "ref", "page", "id", "x y", ""]
    )
    val = s.text(6, alphabet=s.sampled_from(list("ab1 %&=+/?\u00e9")))
    query = s.lists(s.builds(lambda k, v: (k, v), key, val), 4).map(
        lambda kv: "&".join(f"{k}={v}" if v else k for k, v in kv)
    )
    absolute = s.builds(
        lambda sc, h, path, q, frag: (
            f"{sc}://{h}{path}" + (f"?{q}" if q is not None else "") + (frag or "")
        ),
        scheme,
        host,
        s.lists(segment, 4).map(lambda p: "".join("/" + x for x in p)),
        s.none() | query,
        s.none() | s.sampled_from(["#", "#top", "#a b"]),
    )
    clean = s.builds(
        lambda n, q: f"https://x.com/p/{n}" + (f"?id={q}" if q else ""),
        s.integers(0, 10**6),
        s.none() | s.integers(0, 99),
    )
    relative = s.sampled_from(
        [
            "/a",
            "a/b",
            "../c",
            "./d?x=1",
            "//other.com/e",
            "?q=1",
            "#frag",
            "",
            "/",
            "..",
            "/caf\u00e9 bar",
            "https:/x",
            "https:///x",
            "http://",
            "/%",
            "\\\\evil.com/x",
        ]
    )
    junk = s.text(20)
    base = s.one_of(clean, clean, absolute, absolute, absolute, relative, junk)
    pad = s.sampled_from(["", "", "", " ", "\n  ", "\t", "\r\n", "\u00a0", " \u3000"])
    return s.builds(lambda a, v, b: a + v + b, pad, base, pad)


@functools.cache
def lastmod_values() -> Any:
    s = _gen
    d2 = s.integers(0, 99).map(lambda n: f"{n:02d}")
    tz = s.sampled_from(
        ["", "Z", "z", "+00:00", "-05:30", "+0530", "+05", " Z", "+14:00", "-0000", "GMT"]
    )
    frac = s.sampled_from(["", ".5", ".123456", ".123456789", "."])
    w3c = s.builds(
        lambda y, mo, d, sep, h, mi, sec, f, z: (
            f"{y}-{mo}-{d}"
            + (f"{sep}{h}:{mi}" + (f":{sec}{f}" if sec is not None else "") + z if sep else "")
        ),
        s.integers(1, 9999).map(lambda y: f"{y:04d}"),
        d2,
        d2,
        s.sampled_from(["", "T", "T", "t", " ", "  "]),
        d2,
        d2,
        s.none() | d2,
        frac,
        tz,
    )
    short = s.sampled_from(["2024", "2024-05", "2024-05-01", "1999-12-31", "0000", "2024-5-1"])
    junk = s.sampled_from(
        [
            "",
            " ",
            "yesterday",
            "2024/05/01",
            "20240501",
            "Wed, 01 May 2024 10:00:00 GMT",
            "2024-05-01T10:00:00+05:30:00",
            "2024-05-01T10:00:00.Z",
            *UNICODE_DIGIT_DATES,
            "2024-05-01T10:00:00\u00a0Z",
            "2024-05-01T10:00:00+05:3",
        ]
    )
    pad = s.sampled_from(["", "", "", " ", "\n\t", "\u00a0"])
    return s.builds(lambda a, v, b: a + v + b, pad, s.one_of(w3c, w3c, short, junk), pad)


@functools.cache
def priority_values() -> Any:
    s = _gen
    common = s.sampled_from(["0.5", "1.0", "0.8", "1", "0", "0.0", "0.1"])
    odd = s.sampled_from(
        [
            " 0.3 ",
            "1.5",
            "-0.1",
            "-0",
            "abc",
            "",
            " ",
            "1e-1",
            ".5",
            "+.5",
            "5.",
            "0_5",
            "0.5_0",
            "nan",
            "NaN",
            "inf",
            "-Infinity",
            "0x1",
            "1,0",
            "0.50000000000000001",
            "1.0000000000000001",
            *UNICODE_DIGIT_PRIORITIES,
            "\u00a00.2\u00a0",
            "1e400",
            "0.5f",
            "\n0.7\n",
        ]
    )
    numeric = s.floats(-0.5, 1.5).map(lambda f: repr(f))
    return s.one_of(common, common, odd, numeric)


@functools.cache
def changefreq_values() -> Any:
    s = _gen
    return s.sampled_from(
        [
            *("daily", "weekly", "monthly", "yearly", "always", "hourly", "never", "Daily"),
            *(" WEEKLY ", "", " ", "sometimes", "dailyy", "d\u0430ily", "\u00a0monthly"),
        ]
    )


@functools.cache
def free_text() -> Any:
    s = _gen
    return s.one_of(
        s.sampled_from(["", " ", "A title", "Caf\u00e9 & cr\u00e8me", "<b>bold</b>", "x]]>y"]),
        s.text(15).map(lambda t: "".join(c for c in t if c >= " " or c in "\t\n")),
    )


@dataclass(frozen=True)
class Style:
    """How one document writes its markup."""

    prefix: str  # the sitemap namespace prefix of items and their children ('' = none)
    root_ns: str  # the root's namespace declarations
    ext: dict[str, str]  # extension -> prefix (xhtml, image, video, news)
    declare_ext_on_root: bool
    rnd: random.Random


def _tag(style: Style, name: str) -> str:
    return f"{style.prefix}:{name}" if style.prefix else name


def _ext_tag(style: Style, ext: str, name: str) -> tuple[str, list[tuple[str, str]]]:
    prefix = style.ext[ext]
    ns = {"xhtml": XHTML_NS, "image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS}[ext]
    attrs = [] if style.declare_ext_on_root else [(f"xmlns:{prefix}", ns)]
    return f"{prefix}:{name}", attrs


def _filler(rnd: random.Random) -> str:
    """Whatever a well-formed document may hold between elements."""
    return rnd.choice(
        [
            "",
            "",
            "\n  ",
            "\n",
            "<!-- a comment -->",
            "<?pi data?>",
            "<!-- <url><loc>https://x.com/commented</loc></url> -->",
            "<unknown xmlns='urn:u'>text<deeper a='1'/></unknown>",
            "<!--\u00e9-->",
        ]
    )


@generated
def url_items(draw: Any, style: Style, *, mixed: bool = True) -> str:
    s = _gen
    rnd = style.rnd
    children: list[str] = []
    n_loc = draw(s.sampled_from([1, 1, 1, 1, 1, 1, 0, 2]))
    for _ in range(n_loc):
        loc = draw(url_values())
        if rnd.random() < 0.05:
            children.append(element(rnd, _tag(style, "loc"), None))
        else:
            children.append(element(rnd, _tag(style, "loc"), loc, style=rnd.choice(TEXT_STYLES)))
            if mixed and rnd.random() < 0.03:
                children[-1] = children[-1].replace("</", "<b/>tail</", 1)
    if draw(s.booleans()):
        children.append(
            element(
                rnd, _tag(style, "lastmod"), draw(lastmod_values()), style=rnd.choice(TEXT_STYLES)
            )
        )
    if draw(s.integers(0, 3)) == 0:
        children.append(element(rnd, _tag(style, "priority"), draw(priority_values())))
    if draw(s.integers(0, 3)) == 0:
        children.append(element(rnd, _tag(style, "changefreq"), draw(changefreq_values())))
    for _ in range(draw(s.sampled_from([0, 0, 0, 1, 2, 3]))):
        name, attrs = _ext_tag(style, "xhtml", "link")
        rel = draw(s.sampled_from(["alternate", "alternate", "alternate", "canonical", "", None]))
        hreflang = draw(s.sampled_from(["de", "en-GB", "x-default", " fr ", "", None, "\u00a0es"]))
        href = draw(s.none() | url_values())
        fields = [("rel", rel), ("hreflang", hreflang), ("href", href)]
        rnd.shuffle(fields)
        attrs = attrs + [(k, v) for k, v in fields if v is not None]
        if rnd.random() < 0.1:
            attrs.append(("type", "text/html"))
        children.append(element(rnd, name, None, attrs=attrs))
    for _ in range(draw(s.sampled_from([0, 0, 0, 0, 1, 2]))):
        name, attrs = _ext_tag(style, "image", "image")
        parts = []
        if rnd.random() < 0.9:
            tag, _ = _ext_tag(style, "image", "loc")
            parts.append(element(rnd, tag, draw(url_values()), style=rnd.choice(TEXT_STYLES)))
        for field in ("title", "caption"):
            if rnd.random() < 0.4:
                tag, _ = _ext_tag(style, "image", field)
                parts.append(element(rnd, tag, draw(free_text()), style=rnd.choice(TEXT_STYLES)))
        rnd.shuffle(parts)
        children.append(_wrap(rnd, name, attrs, parts))
    if draw(s.integers(0, 7)) == 0:
        name, attrs = _ext_tag(style, "video", "video")
        parts = []
        for field in ("content_loc", "player_loc", "thumbnail_loc", "title", "description"):
            if rnd.random() < 0.5:
                tag, _ = _ext_tag(style, "video", field)
                value = draw(url_values()) if field.endswith("loc") else draw(free_text())
                parts.append(element(rnd, tag, value, style=rnd.choice(TEXT_STYLES)))
        rnd.shuffle(parts)
        children.append(_wrap(rnd, name, attrs, parts))
    if draw(s.integers(0, 7)) == 0:
        name, attrs = _ext_tag(style, "news", "news")
        pub = []
        for field in ("name", "language"):
            if rnd.random() < 0.7:
                tag, _ = _ext_tag(style, "news", field)
                pub.append(element(rnd, tag, draw(free_text())))
        parts = []
        if pub or rnd.random() < 0.3:
            tag, _ = _ext_tag(style, "news", "publication")
            parts.append(_wrap(rnd, tag, [], pub))
        for field in ("publication_date", "title"):
            if rnd.random() < 0.7:
                tag, _ = _ext_tag(style, "news", field)
                value = draw(lastmod_values()) if field == "publication_date" else draw(free_text())
                parts.append(element(rnd, tag, value))
        rnd.shuffle(parts)
        children.append(_wrap(rnd, name, attrs, parts))
    if rnd.random() < 0.1:
        children.append(_filler(rnd))
    rnd.shuffle(children)
    return _wrap(rnd, _tag(style, "url"), [], children, mixed=mixed)


def _wrap(
    rnd: random.Random,
    name: str,
    attrs: Sequence[tuple[str, str]],
    children: Sequence[str],
    *,
    mixed: bool = False,
) -> str:
    """An element around children, with whitespace, comments and PIs between them."""
    inner = []
    for child in children:
        inner.append(ws(rnd) if rnd.random() < 0.9 else _filler(rnd))
        inner.append(child)
    inner.append(ws(rnd))
    if mixed and rnd.random() < 0.02:
        inner.insert(0, "stray text")
    body = "".join(inner)
    start = element(rnd, name, "x", attrs=attrs).split(">", 1)[0] + ">" if attrs else f"<{name}>"
    if not body and rnd.random() < 0.3:
        return start[:-1] + "/>"
    return f"{start}{body}</{name}>"


def _prolog(draw: Any, rnd: random.Random, root: str, encoding: str | None) -> str:
    s = _gen
    out = []
    if draw(s.integers(0, 9)) == 0:
        out.append(rnd.choice([" ", "\n", "\r\n", "\t \n"]))
    if draw(s.integers(0, 5)) != 0 or encoding:
        enc = f' encoding="{encoding}"' if encoding else ""
        standalone = ' standalone="yes"' if rnd.random() < 0.1 else ""
        quote = rnd.choice("\"'")
        out.append(f"<?xml version={quote}1.0{quote}{enc}{standalone}?>")
    for _ in range(draw(s.integers(0, 2))):
        out.append(
            rnd.choice(
                [
                    "\n",
                    '<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>',
                    "<!-- generated by x -->",
                    "<!--<urlset>-->",
                ]
            )
        )
    if draw(s.integers(0, 7)) == 0:
        out.append(
            rnd.choice(
                [
                    f"<!DOCTYPE {root}>",
                    f'<!DOCTYPE {root} PUBLIC "-//X//DTD Y//EN" "http://x.com/y.dtd">',
                    f'<!DOCTYPE {root} [<!ENTITY e "https://evil.com/">]>',
                    f'<!DOCTYPE {root} SYSTEM "file:///etc/passwd" [\n  <!ENTITY e SYSTEM "x">\n]>',
                    f"<!doctype {root}>",
                ]
            )
        )
    out.append(ws(rnd))
    return "".join(out)


def _encode(draw: Any, text: str) -> tuple[bytes, str | None]:
    """The document's bytes in the encoding its declaration names (UTF-8 without one)."""
    return text.encode("utf-8", "surrogatepass"), None


@generated
def urlset_docs(draw: Any, *, damageable: bool = False) -> Doc:
    s = _gen
    rnd = random.Random(draw(s.integers(0, 2**32)))
    prefix, root_ns = draw(
        s.sampled_from(
            [
                ("", f' xmlns="{SM_NS}"'),
                ("", f' xmlns="{SM_NS}"'),
                ("", ""),
                ("sm", f' xmlns:sm="{SM_NS}"'),
                ("", ' xmlns="http://example.org/wrong"'),
            ]
        )
    )
    ext_names = draw(
        s.sampled_from(
            [
                {"xhtml": "xhtml", "image": "image", "video": "video", "news": "news"},
                {"xhtml": "x", "image": "img", "video": "v", "news": "n"},
            ]
        )
    )
    on_root = draw(s.booleans())
    style = Style(prefix, root_ns, ext_names, on_root, rnd)
    encoding = draw(s.sampled_from([None, None, "UTF-8", "utf-8"]))
    root = _tag(style, draw(s.sampled_from(["urlset", "urlset", "urlset", "URLSET"])))
    decls = root_ns
    if on_root:
        for ext, pfx in ext_names.items():
            ns = {"xhtml": XHTML_NS, "image": IMAGE_NS, "video": VIDEO_NS, "news": NEWS_NS}[ext]
            decls += f"{ws(rnd, allow_none=False)}xmlns:{pfx}={attr_value(rnd, ns)}"
    parts = Parts()
    if not damageable and draw(s.integers(0, 15)) == 0:
        parts.add("\ufeff")
    parts.add(_prolog(draw, rnd, root, encoding))
    parts.add(f"<{root}{decls}{ws(rnd)}>")
    if draw(s.booleans()):  # past the 1 KiB the oracle buffers to sniff the kind
        parts.add("<!-- " + "padding " * 140 + "-->")
    parts.mark_head()
    for _ in range(draw(s.integers(0, 12))):
        parts.add(_filler(rnd) if rnd.random() < 0.3 else ws(rnd))
        parts.add(draw(url_items(style, mixed=not damageable)), item=True)
    parts.add(ws(rnd))
    parts.mark_body_end()
    tail = f"</{root}>"
    parts.add(tail)
    parts.add(rnd.choice(["", "\n", "<!-- after -->", "\n\n"]))
    return _doc(parts, "urlset")


def _doc(parts: Parts, family: str) -> Doc:
    data = parts.text().encode("utf-8", "surrogatepass")
    return Doc(
        data,
        family,
        tuple(parts.items),
        data[: parts.head_end],
        data[parts.body_end :],
        parts.body_end,
    )


@generated
def index_docs(draw: Any, *, damageable: bool = False) -> Doc:
    s = _gen
    rnd = random.Random(draw(s.integers(0, 2**32)))
    prefix, root_ns = draw(
        s.sampled_from(
            [
                ("", f' xmlns="{SM_NS}"'),
                ("", ""),
                ("i", ' xmlns:i="urn:x"'),
                ("sm", f' xmlns:sm="{SM_NS}"'),
            ]
        )
    )
    style = Style(prefix, root_ns, {}, True, rnd)
    root = _tag(style, draw(s.sampled_from(["sitemapindex", "sitemapindex", "SitemapIndex"])))
    parts = Parts()
    parts.add(_prolog(draw, rnd, root, None))
    parts.add(f"<{root}{root_ns}>")
    if draw(s.booleans()):
        parts.add("<!-- " + "padding " * 140 + "-->")
    parts.mark_head()
    for _ in range(draw(s.integers(0, 12))):
        parts.add(_filler(rnd) if rnd.random() < 0.3 else ws(rnd))
        children = []
        for _ in range(draw(s.sampled_from([1, 1, 1, 1, 0, 2]))):
            children.append(
                element(rnd, _tag(style, "loc"), draw(url_values()), style=rnd.choice(TEXT_STYLES))
            )
        if draw(s.booleans()):
            children.append(element(rnd, _tag(style, "lastmod"), draw(lastmod_values())))
        rnd.shuffle(children)
        parts.add(_wrap(rnd, _tag(style, "sitemap"), [], children), item=True)
    parts.add(ws(rnd))
    parts.mark_body_end()
    parts.add(f"</{root}>")
    return _doc(parts, "sitemapindex")


@functools.cache
def rfc822_values() -> Any:
    s = _gen
    return s.sampled_from(
        [
            "Wed, 01 May 2024 10:00:00 GMT",
            "Wed, 01 May 2024 10:00:00 +0200",
            "01 May 2024 10:00:00 -0500",
            "Wed, 1 May 2024 10:00 EST",
            "Wed, 01 May 24 10:00:00 GMT",
            "Mon, 31 Feb 2024 10:00:00 GMT",
            "not a date",
            "",
            "  ",
            "2024-05-01T10:00:00Z",
            "2024-05-01",
            " Wed, 01 May 2024 10:00:00 Z ",
            "Wed, 01 May 2024 25:00:00 GMT",
            "Thu, 01 Jan 1970 00:00:00 +0000",
        ]
    )


@generated
def rss_docs(draw: Any) -> Doc:
    s = _gen
    rnd = random.Random(draw(s.integers(0, 2**32)))
    parts = Parts()
    parts.add(_prolog(draw, rnd, "rss", None))
    atom = draw(s.booleans())
    decl = f' xmlns:atom="{ATOM_NS}"' if atom else ""
    if rnd.random() < 0.3:
        decl += ' xmlns:dc="http://purl.org/dc/elements/1.1/"'
    parts.add(f'<rss version="2.0"{decl}><channel><title>Blog</title>')
    parts.add(element(rnd, "link", "https://x.com/"))
    if atom:
        parts.add('<atom:link href="https://x.com/feed" rel="self" type="application/rss+xml"/>')
    if draw(s.booleans()):
        parts.add("<!-- " + "padding " * 140 + "-->")
    for _ in range(draw(s.integers(0, 10))):
        children = []
        for _ in range(draw(s.sampled_from([0, 1, 1, 1, 2]))):
            children.append(element(rnd, "link", draw(url_values()), style=rnd.choice(TEXT_STYLES)))
        if draw(s.integers(0, 2)) == 0:
            perma = draw(s.sampled_from([None, "true", "false", "False"]))
            attrs = [("isPermaLink", perma)] if perma is not None else []
            children.append(
                element(
                    rnd,
                    "guid",
                    draw(s.none() | url_values()),
                    attrs=attrs,
                    style=rnd.choice(TEXT_STYLES),
                )
            )
        for _ in range(draw(s.sampled_from([0, 1, 1, 2]))):
            children.append(element(rnd, "pubDate", draw(rfc822_values())))
        if rnd.random() < 0.5:
            children.append(element(rnd, "title", draw(free_text()), style=rnd.choice(TEXT_STYLES)))
        if rnd.random() < 0.3:
            children.append(
                element(
                    rnd,
                    "description",
                    "<p>Some <a href='/x'>html</a> &amp; more</p>",
                    style="cdata",
                )
            )
        if atom and rnd.random() < 0.2:
            children.append('<atom:link href="https://x.com/other" rel="alternate"/>')
        if rnd.random() < 0.1:
            children.append('<enclosure url="https://x.com/a.mp3" length="1" type="audio/mpeg"/>')
        rnd.shuffle(children)
        parts.add(ws(rnd) if rnd.random() < 0.8 else _filler(rnd))
        parts.add(_wrap(rnd, "item", [], children), item=True)
    parts.add("</channel></rss>")
    return _doc(parts, "rss")


@generated
def atom_docs(draw: Any) -> Doc:
    s = _gen
    rnd = random.Random(draw(s.integers(0, 2**32)))
    prefix = draw(s.sampled_from(["", "", "a"]))
    ns_decl = f' xmlns:a="{ATOM_NS}"' if prefix else f' xmlns="{ATOM_NS}"'

    def tag(name: str) -> str:
        return f"{prefix}:{name}" if prefix else name

    parts = Parts()
    parts.add(_prolog(draw, rnd, tag("feed"), None))
    parts.add(f"<{tag('feed')}{ns_decl}>")
    parts.add(element(rnd, tag("title"), "Feed"))
    parts.add(f'<{tag("link")} href="https://x.com/" rel="self"/>')
    if draw(s.booleans()):
        parts.add("<!-- " + "padding " * 140 + "-->")
    for _ in range(draw(s.integers(0, 10))):
        children = []
        for _ in range(draw(s.sampled_from([0, 1, 1, 1, 2, 3]))):
            rel = draw(
                s.sampled_from(
                    [None, None, "alternate", "self", "edit", "enclosure", "Alternate", ""]
                )
            )
            href = draw(s.none() | url_values())
            attrs = [
                (k, v)
                for k, v in (("rel", rel), ("href", href), ("type", "text/html"))
                if v is not None
            ]
            rnd.shuffle(attrs)
            children.append(element(rnd, tag("link"), None, attrs=attrs))
        for name in ("updated", "published"):
            for _ in range(draw(s.sampled_from([0, 1, 1, 2]))):
                children.append(element(rnd, tag(name), draw(lastmod_values())))
        if rnd.random() < 0.5:
            children.append(element(rnd, tag("id"), "urn:uuid:1"))
        if rnd.random() < 0.3:
            nested = f'<div xmlns="{XHTML_NS}"><link href="/nested"/></div>'
            children.append(f'<{tag("content")} type="xhtml">{nested}</{tag("content")}>')
        rnd.shuffle(children)
        parts.add(ws(rnd) if rnd.random() < 0.8 else _filler(rnd))
        parts.add(_wrap(rnd, tag("entry"), [], children), item=True)
    parts.add(f"</{tag('feed')}>")
    return _doc(parts, "atom")


@generated
def text_docs(draw: Any) -> Doc:
    s = _gen
    rnd = random.Random(draw(s.integers(0, 2**32)))
    first = draw(
        s.sampled_from(["https://x.com/a", "HTTP://X.com/b", "http://x.com/c d", "https://"])
    )
    lines = [first]
    for _ in range(draw(s.integers(0, 15))):
        lines.append(
            draw(
                s.one_of(
                    url_values(),
                    s.sampled_from(["", " ", "# comment", "x.com/a", "https://x.com/\u00e9", "\t"]),
                )
            )
        )
    newline = draw(s.sampled_from(["\n", "\r\n", "\n", "\r"]))
    text = newline.join(lines) + draw(s.sampled_from(["", newline, newline * 2]))
    lead = draw(s.sampled_from(["", "", "\ufeff", " \n", "\r\n\t "]))
    data = (lead + text).encode("utf-8", "surrogatepass")
    if rnd.random() < 0.05:
        at = rnd.randrange(len(data) + 1)
        data = data[:at] + rnd.choice([b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80"]) + data[at:]
    return Doc(data, "text")


@generated
def other_docs(draw: Any) -> Doc:
    """Documents that are not sitemaps, or sit at the edge of sniffing."""
    s = _gen
    data = draw(
        s.sampled_from(
            [
                b"",
                b"   \n",
                b"\xef\xbb\xbf",
                b"<!DOCTYPE html><html><head><title>x</title></head><body>hi</body></html>",
                b"<html><body><a href='/a'>a</a></body></html>",
                b'{"urls": ["https://x.com/a"]}',
                b"<?xml version='1.0'?><root><url><loc>https://x.com/a</loc></url></root>",
                b"<?xml version='1.0'?>",
                b"<!-- only a comment -->",
                b"<?xml version='1.0'?><!DOCTYPE x><x/>",
                b"ftp://x.com/a\nhttps://x.com/b",
                b"<HTML><BODY></BODY></HTML>",
                b"<s:feed xmlns:s='urn:s'><s:entry><s:link href='/a'/></s:entry></s:feed>",
                b"<Urlset><url><loc>https://x.com/a</loc></url></Urlset>",
                b"<rss><channel><item><link>/a</link></item></channel></rss>",
            ]
        )
    )
    pad = draw(s.sampled_from([b"", b"\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf \r\n"]))
    return Doc(pad + data, "other")


def any_docs() -> G:
    s = _gen
    return s.one_of(
        urlset_docs(),
        urlset_docs(),
        urlset_docs(),
        index_docs(),
        rss_docs(),
        atom_docs(),
        text_docs(),
        other_docs(),
    )


# --------------------------------------------------------------------------- damaged documents


@dataclass
class Damaged:
    """A generated document after damage, with what the damage leaves intact."""

    data: bytes
    family: str
    required: list[bytes]  # intact items: each must come out as it does on its own
    swallowed: list[bytes]  # intact items inside a construct the damage left open
    must_be_damaged: bool  # some damage no reading can take for well-formed XML
    truncated: bool  # note_truncated() is called
    ops: list[str]
    head: bytes
    tail: bytes


class _Damager:
    """Applies damage to a document while tracking where its items went."""

    def __init__(self, doc: Doc, rnd: random.Random) -> None:
        self.rnd = rnd
        self.data = doc.data
        # [start, end, touched]
        self.items: list[list[Any]] = [[a, b, False] for a, b in doc.items]
        self.body = [len(doc.head), doc.body_end]
        self.ops: list[str] = []

    def insert(self, pos: int, text: bytes) -> None:
        self.data = self.data[:pos] + text + self.data[pos:]
        n = len(text)
        for it in self.items:
            if it[0] >= pos:
                it[0] += n
                it[1] += n
            elif it[1] > pos:
                it[1] += n
                it[2] = True
        self.body[1] += n if self.body[1] >= pos else 0

    def delete(self, a: int, b: int) -> None:
        self.data = self.data[:a] + self.data[b:]
        n = b - a
        for it in self.items:
            if it[0] >= b:
                it[0] -= n
                it[1] -= n
            elif it[1] > a:
                it[2] = True
                it[1] = max(a, it[1] - n)
        if self.body[1] >= b:
            self.body[1] -= n

    def body_pos(self) -> int:
        return self.rnd.randint(self.body[0], self.body[1])

    def boundary(self) -> int:
        """A position between items (or at the body's ends)."""
        spots = [self.body[0], self.body[1]] + [it[1] for it in self.items]
        return self.rnd.choice(spots)

    def an_item(self) -> list[Any] | None:
        return self.rnd.choice(self.items) if self.items else None

    # -- the kinds of damage ----------------------------------------------------------------

    def bad_bytes(self) -> None:
        bad = self.rnd.choice([b"\xff", b"\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xf8"])
        self.insert(self.body_pos(), bad)
        self.ops.append(f"bad bytes {bad!r}")

    def drop_tag(self, end: bool) -> None:
        it = self.an_item()
        if it is None:
            return
        span = self.data[it[0] : it[1]]
        pattern = rb"</[^>]+>" if end else rb"<[A-Za-z][^>]*[^/>]>|<[A-Za-z]>"
        tags = list(re.finditer(pattern, span))
        if not tags:
            return
        m = self.rnd.choice(tags)
        self.delete(it[0] + m.start(), it[0] + m.end())
        self.ops.append(f"dropped {m.group()!r}")

    def stray(self) -> None:
        text = self.rnd.choice([b"&", b"&x", b"&#;", b"&#xZZ;", b"& ", b"&amp", b"<", b"< ", b"<1"])
        pos = self.body_pos()
        self.insert(pos, text)
        self.ops.append(f"stray {text!r}")

    def cut(self, opener: bytes, closer: bytes) -> None:
        """Remove the terminator of a comment or CDATA section."""
        spots = [
            m.start()
            for m in re.finditer(re.escape(opener), self.data)
            if self.body[0] <= m.start() < self.body[1]
        ]
        if not spots:
            return
        start = self.rnd.choice(spots)
        end = self.data.find(closer, start + len(opener))
        if end < 0 or (opener == b"<!--" and _skip_comment_hyphens(self.data, end + 3)):
            return
        self.delete(end, end + len(closer))
        self.ops.append(f"cut {opener!r}")

    def garbage(self) -> None:
        text = self.rnd.choice(
            [
                b"junk text",
                b"&bogus; & x",
                b"\x01\x02",
                b"<loc>https://x.com/stray</loc>",
                b"</foo>",
                b"<foo",
                b"<<>>",
                b'<a b="',
                b"]]>",
                b"<!-- unterminated",
                b"<![CDATA[",
                b"<?pi",
                b"<url>",
                b"</url>",
                b"</sitemap>",
                b"<loc>https://x.com/open",
            ]
        )
        pos = self.boundary()
        if text.startswith(b"<!--") and _skip_comment_hyphens(self.data, pos):
            return
        self.insert(pos, text)
        self.ops.append(f"garbage {text!r}")

    def truncate(self) -> None:
        end_of_root = self.body[1] + 1
        pos = self.rnd.randint(self.body[0], max(self.body[0], end_of_root))
        self.data = self.data[:pos]
        for it in self.items:
            if it[1] > pos:
                it[2] = True
        self.ops.append(f"truncated at {pos}")

    def finish(self, doc: Doc, truncated: bool) -> Damaged:
        starts = markup_starts(self.data, len(doc.head))
        required, swallowed = [], []
        for start, end, touched in self.items:
            if touched:
                continue
            item = self.data[start:end]
            (required if start in starts else swallowed).append(item)
        return Damaged(
            self.data,
            doc.family,
            required,
            swallowed,
            False,  # worked out by `damage`
            truncated,
            self.ops,
            doc.head,
            doc.tail,
        )


_MARKUP_NEXT = re.compile(rb"[A-Za-z_:/!?\x80-\xff]")
_ENDS = {b"<!--": b"-->", b"<![CDATA[": b"]]>", b"<?": b"?>"}


def markup_starts(data: bytes, pos: int) -> set[int]:
    """Where markup starts in the content of `data` from `pos` on, however damage is read:
    the positions of `<` that are not inside a comment, CDATA section, PI or tag, whether a
    quote in a broken tag opens an attribute value or not. An item starting elsewhere may be
    text of a construct the damage left open."""
    return _markup_starts(data, pos, quotes=True) & _markup_starts(data, pos, quotes=False)


def _markup_starts(data: bytes, pos: int, *, quotes: bool) -> set[int]:
    out = set()
    n = len(data)
    while True:
        lt = data.find(b"<", pos)
        if lt < 0:
            return out
        if lt + 1 < n and not _MARKUP_NEXT.match(data, lt + 1):
            pos = lt + 1  # `<=`, `< `, `<<`: not markup, whatever follows is
            continue
        out.add(lt)
        for opener, closer in _ENDS.items():
            if data.startswith(opener, lt):
                end = data.find(closer, lt + len(opener))
                if end < 0:
                    return out
                pos = end + len(closer)
                break
        else:
            # A tag: up to the first `>` outside quotes; a `<` outside quotes ends a broken tag
            # and starts the next markup (`<foo <url>`).
            i = lt + 1
            quote = 0
            while i < n:
                ch = data[i]
                if quote:
                    if ch == quote:
                        quote = 0
                elif quotes and ch in (0x22, 0x27) and data[i - 1] in b" \t\r\n=":
                    quote = ch
                elif ch in (0x3C, 0x3E):
                    break
                i += 1
            if i >= n:
                return out
            pos = i + 1 if data[i] == 0x3E else i


def _skip_comment_hyphens(data: bytes, pos: int) -> bool:
    """With SITESCOUT_DIFF_SKIP=comment-hyphens, no comment left open runs into a later one
    (`<!-- a <!-- b -->` has `--` inside a comment: damage a reader may overlook)."""
    return "comment-hyphens" in _SKIP and b"-->" in data[pos:]


def damage(doc: Doc, rnd: random.Random) -> Damaged:
    """One to three kinds of damage, a truncation sometimes last."""
    d = _Damager(doc, rnd)
    for _ in range(rnd.randint(1, 3)):
        kind = rnd.randrange(8)
        if kind == 0:
            d.bad_bytes()
        elif kind in (1, 2):
            d.drop_tag(end=kind == 1)
        elif kind == 3:
            d.stray()
        elif kind == 4:
            d.cut(b"<!--", b"-->")
        elif kind == 5:
            d.cut(b"<![CDATA[", b"]]>")
        else:
            d.garbage()
    truncated = False
    if rnd.random() < 0.3:
        d.truncate()
        truncated = rnd.random() < 0.5
    out = d.finish(doc, truncated)
    # Two kinds of damage can cancel out (a dropped `</url>` and a dropped `<url>` further on),
    # so a strict parser has the last word on whether the document is still well-formed.
    out.must_be_damaged = not well_formed(out.data)
    return out


_BARE = re.compile(rb"&(?!(?:amp|lt|gt|quot|apos|#[0-9]{1,8}|#x[0-9a-fA-F]{1,8});)")


def well_formed(data: bytes) -> bool:
    """Is `data` well-formed XML to a strict parser, once the liberties every reading here
    takes are taken (whitespace before the declaration and a DOCTYPE are skipped, a bare `&`
    is literal, control characters are dropped)?"""
    import xml.parsers.expat

    from tests.reference.parse import _DOCTYPE_RE

    data = data.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")  # skipped before parsing
    data = _DOCTYPE_RE.sub(b"", data, count=1)  # cut out, never parsed
    parser = xml.parsers.expat.ParserCreate()
    try:
        parser.Parse(_BARE.sub(b"&amp;", data.translate(None, _CONTROL_BYTES)), True)
    except xml.parsers.expat.ExpatError:
        return False
    return True


@generated
def damaged_docs(draw: Any) -> Damaged:
    s = _gen
    doc = draw(s.one_of(urlset_docs(damageable=True), index_docs(damageable=True)))
    rnd = random.Random(draw(s.integers(0, 2**32)))
    return damage(doc, rnd)


# -- what a returned URL may be

_LOC_OPEN = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?loc(?:\s[^<>]*)?>")
_LOC_CLOSE = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?loc\s*>")
_COMMENT_OR_PI = re.compile(rb"<!--.*?-->|<\?.*?\?>", re.S)
_CDATA = re.compile(rb"<!\[CDATA\[(.*?)\]\]>", re.S)
_REF = re.compile(r"&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);")
# What a text holds besides characters: comments, CDATA sections and processing instructions
# (each to its end, or to the end of the text when it has none), and a tag that starts an
# element (the only match one byte long).
_MARKUP_OR_CHILD = re.compile(
    rb"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)|<\?.*?(?:\?>|\Z)|<(?![!?/])", re.S
)
_CONTROL_BYTES = bytes(range(0, 9)) + b"\x0b\x0c" + bytes(range(14, 32))


def loc_values(data: bytes, window: int = 50) -> set[str]:
    """Every string a `<loc>` element of `data` can be read as, damage or not: the text from
    one of the last `window` `<loc>` tags before each `</loc>` up to it, read with and without
    comments, CDATA markers and invalid bytes."""
    out: set[str] = set()
    opens = [m.end() for m in _LOC_OPEN.finditer(data)]
    k = 0
    for close in _LOC_CLOSE.finditer(data):
        while k < len(opens) and opens[k] <= close.start():
            k += 1
        # CDATA can hide end tags, so an open before the previous close may be the one.
        for start in opens[max(0, k - window) : k]:
            whole = data[start : close.start()].translate(None, _CONTROL_BYTES)
            # A `<loc>` holding an element reads as its text before that element (as
            # ElementTree's `.text` does, and the reference reader with it).
            head = _text_before_child(whole)
            for raw in (whole,) if head is None else (whole, head):
                for errors in ("replace", "ignore"):
                    for keep in (True, False):
                        out.add(_xml_text(raw, errors, keep_invalid=keep))
                for variant in _byte_variants(raw):
                    for errors in ("replace", "ignore"):
                        text = variant.decode("utf-8", errors)
                        text = text.replace("\r\n", "\n").replace("\r", "\n")
                        out.add(_unref(text))
                        out.add(_unref(text, keep_invalid=False))
                        out.add(text)
    return out


_MARKUP_IN_TEXT = re.compile(rb"<!\[CDATA\[(.*?)\]\]>|<!--.*?-->|<\?.*?\?>", re.S)


def _text_before_child(raw: bytes) -> bytes | None:
    """`raw` up to the first element it holds (None when it holds none): what a `<loc>` with
    a child reads as (ElementTree's `.text`, and the reference reader's)."""
    for m in _MARKUP_OR_CHILD.finditer(raw):
        if m.end() - m.start() == 1:
            return raw[: m.start()]
    return None


def invented_urls(urls: Iterable[str], data: bytes, url: str, family: str) -> list[str]:
    """The URLs of `urls` that are no `<loc>` value of `data`. The nearest `<loc>` before each
    `</loc>` is tried first; the wider search (CDATA may hide end tags) only when needed."""
    missing = [u for u in urls if u not in acceptable_urls(data, url, family, window=2)]
    if missing:
        wide = acceptable_urls(data, url, family)
        missing = [u for u in missing if u not in wide]
    return missing


def _xml_text(raw: bytes, errors: str, *, keep_invalid: bool) -> str:
    """`raw` read as XML character data: references decoded outside CDATA sections only,
    comments and PIs dropped."""
    parts = []
    pos = 0
    for m in _MARKUP_IN_TEXT.finditer(raw):
        parts.append(_unref(_text_of(raw[pos : m.start()], errors), keep_invalid=keep_invalid))
        if m.group(1) is not None:
            parts.append(_text_of(m.group(1), errors))
        pos = m.end()
    parts.append(_unref(_text_of(raw[pos:], errors), keep_invalid=keep_invalid))
    return "".join(parts)


def _text_of(raw: bytes, errors: str) -> str:
    return raw.decode("utf-8", errors).replace("\r\n", "\n").replace("\r", "\n")


def _byte_variants(raw: bytes) -> list[bytes]:
    # As XML reads it: CDATA content kept as it is (comments in it too), comments and PIs dropped.
    xml = _MARKUP_IN_TEXT.sub(lambda m: m.group(1) or b"", raw)
    plain = _CDATA.sub(lambda m: m.group(1), _COMMENT_OR_PI.sub(b"", raw))
    bare = plain.replace(b"<![CDATA[", b"").replace(b"]]>", b"")
    return [raw, xml, plain, bare, xml.replace(b"<![CDATA[", b"")]


def _unref(text: str, *, keep_invalid: bool = True) -> str:
    """References decoded; with `keep_invalid=False`, one to a character XML does not allow
    (a control character) is dropped rather than decoded."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name[0] != "#":
            return {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}[name]
        code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
        if not keep_invalid and code < 0x20 and code not in (9, 10, 13):
            return ""
        return chr(code) if 0 < code < 0x110000 and not 0xD800 <= code < 0xE000 else ""

    return _REF.sub(sub, text)


def acceptable_urls(data: bytes, url: str, family: str, window: int = 50) -> set[str]:
    """The URLs the `<loc>` values of `data` resolve to (normalized, except for an index's
    children, which are fetched as written)."""
    from tests.reference.urls import _is_clean, normalize_url, resolve_url

    out = set()
    for value in loc_values(data, window):
        v = value.strip()
        if _is_clean(v):
            out.add(v)
            continue
        resolved = resolve_url(v, url)
        if resolved is not None:
            out.add(resolved if family == "sitemapindex" else normalize_url(resolved))
    return out


_XML_DECL = re.compile(r"\A\s*<\?xml\b[^>]*\?>")


def reencode(data: bytes, codec: str) -> bytes | None:
    """A generated UTF-8 document in another encoding: UTF-16 (with a BOM), or ISO-8859-1 /
    windows-1252 named in the XML declaration, characters outside them as references (what
    they mean inside CDATA changes, but both readers get the same bytes). None if `data` is
    not UTF-8 (a text sitemap generated with bad bytes)."""
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    if codec.startswith("utf-16"):
        return (text if codec == "utf-16" else "\ufeff" + text).encode(codec, "surrogatepass")
    if text.lstrip().startswith("<"):
        name = {"latin-1": "ISO-8859-1", "cp1252": "windows-1252"}[codec]
        text = f'<?xml version="1.0" encoding="{name}"?>' + _XML_DECL.sub("", text)
    if codec == "latin-1":
        # Bytes 0x80-0x9F: C1 controls to lxml, windows-1252's characters to the core (as
        # browsers read an ISO-8859-1 label); the same references to both instead.
        text = _C1.sub(lambda m: f"&#{ord(m.group())};", text)
    return text.encode(codec, "xmlcharrefreplace")


_C1 = re.compile("[\x80-\x9f]")
