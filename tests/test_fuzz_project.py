"""Fuzzing the project loader: random JSON, mutated real project files and mangled bytes.

Whatever is on disk, `Project.open` either returns a project or raises `ProjectError`, never
writes a project file, and accepts exactly what the shipped schemas accept. Set
`SITESCOUT_FUZZ_EXAMPLES` for a longer session (the default keeps each test to a few seconds).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sitescout._extract import ExtractOptions, plan_extract, run_extract
from sitescout._project import CRAWL_LOG, LOCK, STATE, Project, ProjectError, is_slug, schema

from .server import Site, urlset

EXAMPLES = int(os.environ.get("SITESCOUT_FUZZ_EXAMPLES", "200"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
KIND = {CRAWL_LOG: "crawl-log", STATE: "state"}


def html(title: str) -> str:
    return f"<html><head><title>{title}</title></head><body><p>{title} words</p></body></html>"


@pytest.fixture(scope="module")
def real() -> Iterator[tuple[str, dict[str, Any]]]:
    """The files of a real two-run project: pages extracted, one failed, one refreshed."""
    site = Site().start()
    try:
        site.add("/", html("Home"), Content_Type="text/html")
        site.add("/about/", html("About"), Content_Type="text/html")
        site.add("/blog/post/", html("Post"), Content_Type="text/html")
        site.add("/gone/", html("Gone"), status=404, Content_Type="text/html")
        paths = ["/", "/about/", "/blog/post/", "/gone/"]
        site.add("/sitemap.xml", urlset([site.url + p for p in paths]))
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp)

            async def twice() -> None:
                for refresh in ((), ("about",)):
                    options = ExtractOptions(out=out, all=True, refresh=refresh)
                    plan = await plan_extract(site.url + "/", options)
                    await run_extract(plan, options)

            asyncio.run(twice())
            files = {name: json.loads((out / name).read_text()) for name in KIND}
        yield site.url, files
    finally:
        site.stop()


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(min_value=-(2**70), max_value=2**70)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=12)
        | st.sampled_from(["discovered", "extracted", "../x", "home", "", "2026-01-01T00:00:00Z"])
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
        max_leaves=max_leaves,
    )


def places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path to a value inside `value`, the root included."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*path, index))


@st.composite
def mutated(draw: st.DrawFn, data: Any) -> Any:
    """`data` with one value replaced, one key or item removed, or one key added or renamed."""
    data = copy.deepcopy(data)
    path = draw(st.sampled_from(list(places(data))))
    if not path:
        return draw(json_values())
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    action = draw(st.sampled_from(["replace", "delete", "add", "rename"]))
    if action == "replace" or (action == "rename" and not isinstance(parent, dict)):
        parent[last] = draw(json_values(4))
    elif action == "delete":
        del parent[last]
    elif isinstance(parent, dict):
        key = draw(st.text(max_size=8) | st.sampled_from(["../up", "A", "a" * 201, "x\n"]))
        parent[key] = parent.pop(last) if action == "rename" else draw(json_values(4))
    else:
        parent.insert(last, draw(json_values(4)))
    return data


def ecma_pattern(
    validator: Any, pattern: str, instance: Any, _schema: Any
) -> Iterator[jsonschema.ValidationError]:
    """`pattern` as JSON Schema reads it (an ECMA-262 regex, as the loader's validator does): `$`
    ends the text. Python's `re.search`, which `jsonschema` uses, also takes `$` before a final
    newline."""
    ecma = pattern.removesuffix("$") + r"\Z" if pattern.endswith("$") else pattern
    if validator.is_type(instance, "string") and re.search(ecma, instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


# The general validator the loader is held equal to.
ORACLE = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": ecma_pattern})


def schema_accepts(name: str, data: Any, origin: str) -> bool:
    if not ORACLE(schema(KIND[name])).is_valid(data):
        return False
    if data["origin"] != origin:
        return False
    return name != STATE or all(is_slug(slug) for slug in data["pages"])


def check_loader(files: dict[str, bytes], origin: str) -> Project | None:
    """Open a project holding `files`; assert the outcome is documented and nothing was written."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for name, raw in files.items():
            (directory / name).write_bytes(raw)
        try:
            project: Project | None = Project.open(directory, origin)
        except ProjectError as exc:
            assert "\n" not in str(exc)
            project = None
        if project is not None:
            project.close()
        after = {p.name: p.read_bytes() for p in directory.iterdir() if p.name != LOCK}
        assert after == files
        return project


def encode(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


@FUZZ
@given(name=st.sampled_from(sorted(KIND)), value=json_values())
def test_random_json_is_refused_cleanly(name: str, value: Any) -> None:
    origin = "https://x.com"
    project = check_loader({name: encode(value)}, origin)
    event("loaded" if project is not None else "refused")
    assert (project is not None) == schema_accepts(name, value, origin)


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(KIND)))
def test_mutated_real_files_load_exactly_when_the_schema_accepts_them(
    real: tuple[str, dict[str, Any]], data: st.DataObject, name: str
) -> None:
    origin, files = real
    value = data.draw(mutated(files[name]))
    other = next(n for n in KIND if n != name)
    project = check_loader({name: encode(value), other: encode(files[other])}, origin)
    event("loaded" if project is not None else "refused")
    assert (project is not None) == schema_accepts(name, value, origin)
    if project is not None and name == STATE:
        assert set(project.pages) == set(value["pages"])


@FUZZ
@given(data=st.data(), name=st.sampled_from(sorted(KIND)))
def test_mangled_bytes_never_escape_as_another_exception(
    real: tuple[str, dict[str, Any]], data: st.DataObject, name: str
) -> None:
    origin, files = real
    raw = bytearray(encode(files[name]))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(raw)))
        action = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if action == "cut":
            del raw[at:]
        elif action == "insert":
            raw[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        elif at < len(raw):
            raw[at] ^= data.draw(st.integers(1, 255))
    project = check_loader({name: bytes(raw)}, origin)
    event("loaded" if project is not None else "refused")


def test_the_real_files_themselves_load(real: tuple[str, dict[str, Any]]) -> None:
    origin, files = real
    assert check_loader({n: encode(v) for n, v in files.items()}, origin) is not None
    assert all(schema_accepts(n, v, origin) for n, v in files.items())


TRICKY = [1, 1.0, True, False, 0, -1, 0.5, 2**70, 1e300, "1", None, [], {}]


@pytest.mark.parametrize("value", TRICKY, ids=repr)
def test_json_types_are_told_apart_as_the_schema_says(
    real: tuple[str, dict[str, Any]], value: Any
) -> None:
    """Where Python and JSON disagree (`True == 1`; `1.0` is an integer), the schema decides."""
    origin, files = real
    version = copy.deepcopy(files[STATE]) | {"schemaVersion": value}
    run = copy.deepcopy(files[STATE])
    run["pages"]["home"]["history"][0]["run"] = value
    successes = copy.deepcopy(files[CRAWL_LOG])
    successes["runs"][0]["crawl"]["successes"] = value
    for name, data in [(STATE, version), (STATE, run), (CRAWL_LOG, successes)]:
        other = next(n for n in KIND if n != name)
        project = check_loader({name: encode(data), other: encode(files[other])}, origin)
        assert (project is not None) == schema_accepts(name, data, origin), (name, value)
