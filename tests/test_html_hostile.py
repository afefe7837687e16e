"""The HTML page reader under hostile input (issue 15): bounded work per byte.

Scaling tests build the same hostile shape at N and 4N units and require the CPU time to grow at
most 5x (the min of 3 runs per size, process CPU time, so a busy machine does not skew the ratio);
a quadratic path grows 16x. Every measured run also has a hard wall-time limit (SIGALRM), so a
regression fails instead of hanging.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sitescout._html import MAX_ATTRIBUTES, MAX_HTML_BYTES, MAX_TEXT_SCAN, parse_page

from .scaling import RUN_LIMIT, assert_linear, time_limit

PAGE = "https://example.com/docs/page.html"


def read_page(body: object) -> object:
    assert isinstance(body, bytes)
    return parse_page(body, PAGE)


def html(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>".encode()


# -- the issue's page ----------------------------------------------------------------------------


def svg_bomb(depth: int, titles: int) -> bytes:
    return html("<svg>" + "<g>" * depth + "<title>t</title>" * titles + "</g>" * depth + "</svg>")


@pytest.mark.scaling
def test_svg_title_bomb_is_linear() -> None:
    # Nesting and titles grow together: checking every title's ancestors is depth x titles.
    assert_linear(lambda n: svg_bomb(n, 100 * n), read_page, 200)


def test_issue_svg_bomb_page_is_read_and_its_real_title_found() -> None:
    body = svg_bomb(2_000, 300_000)[: -len("</body></html>")] + b"<title>Real</title></body></html>"
    assert 4_500_000 < len(body) < MAX_HTML_BYTES
    with time_limit(RUN_LIMIT, "the issue's 4.9 MB page"):
        info = parse_page(body, PAGE)
    assert info.title == "Real"
    assert not info.truncated


# -- nesting -------------------------------------------------------------------------------------


def nested_headings(n: int) -> bytes:
    # Headings nest in each other (libxml2 keeps <h1> inside <h1>); each one's text is the
    # whole inner text, so reading every heading in full is depth x text.
    return html("<h1><div>" * (n // 8) + "<b>word</b> " * (50 * n) + "</div></h1>" * (n // 8))


@pytest.mark.scaling
def test_nested_headings_are_linear() -> None:
    assert_linear(nested_headings, read_page, 400)


def test_nested_heading_text_is_kept_and_capped() -> None:
    info = parse_page(nested_headings(400), PAGE)
    assert len(info.headings) == 50
    assert all(h.level == 1 for h in info.headings)
    assert all(h.text.startswith("word word") for h in info.headings)
    assert all(len(h.text) <= 1_000 for h in info.headings)


def nested_divs(n: int) -> bytes:
    # Deep nesting repeated: libxml2 keeps up to 2,048 levels, so the depth grows with n too.
    depth = n // 4
    block = "<div>" * depth + "<p>text <a href='/x'>x</a></p>" + "</div>" * depth
    return html(block * 400)


@pytest.mark.scaling
def test_deep_nesting_is_linear() -> None:
    assert_linear(nested_divs, read_page, 500)


def test_nesting_beyond_the_limit_keeps_what_came_before() -> None:
    body = html('<a href="/before">b</a>' + "<div>" * 5_000 + "deep" + "</div>" * 5_000)
    info = parse_page(body, PAGE)
    assert info.links_internal == ["https://example.com/before"]
    assert any("nesting too deep" in note for note in info.notes)


# -- attributes ----------------------------------------------------------------------------------


def many_attributes(n: int) -> bytes:
    attrs = " ".join(f'data-a{i}="v"' for i in range(n))
    return html(f'<div {attrs}>text</div><a href="/after">after</a>')


@pytest.mark.scaling
def test_many_attributes_are_linear() -> None:
    # libxml2 compares each new attribute name with every earlier one in the same tag.
    assert_linear(many_attributes, read_page, 60_000, repeat=3)


def test_a_tag_with_too_many_attributes_is_cut_and_the_page_read_on() -> None:
    attrs = " ".join(f'x{i}=">"' for i in range(MAX_ATTRIBUTES + 50))
    body = html(f'<a href="/first" {attrs}>one</a><a {attrs} href="/dropped">two</a>')
    info = parse_page(body, PAGE)
    assert info.links_internal == ["https://example.com/first"]
    assert info.link_count_other == 0
    assert info.text_length == len("onetwo")  # the cut attributes do not become text
    assert info.notes == ["2 tags had over 100 attributes: only the first ones were read"]


def test_attribute_values_with_markup_in_them_are_kept() -> None:
    body = html('<a title="<b>x</b> > y" href="/a">a</a><a href=\'/b\' title=\'"\'>b</a>')
    info = parse_page(body, PAGE)
    assert info.links_internal == ["https://example.com/a", "https://example.com/b"]
    assert info.notes == []


# -- text and links ------------------------------------------------------------------------------


@pytest.mark.scaling
@pytest.mark.parametrize(
    ("shape", "repeat"),
    [
        pytest.param(lambda n: html("<p>" + "word " * n + "</p>"), 3, id="words"),
        pytest.param(lambda n: html("<p>" + "x" * (5 * n) + "</p>"), 8, id="one-text-node"),
        pytest.param(lambda n: html("<h2>" + " \n" * n + "x</h2>"), 20, id="blank-heading"),
        pytest.param(lambda n: html("", "<title>" + "t " * n + "</title>"), 3, id="huge-title"),
        pytest.param(lambda n: ("<!DOCTYPE" + " " * (2 * n) + "x").encode(), 10, id="doctype"),
        pytest.param(lambda n: ("<!--" + " " * (2 * n)).encode(), 8, id="open-comment"),
        pytest.param(lambda n: ("<!DOCTYPE x [" + "] " * n).encode(), 6, id="doctype-subset"),
        pytest.param(lambda n: html("<svg>" * (n // 200) + "x" * n), 10, id="open-svgs"),
    ],
)
def test_huge_text_is_linear(shape: Callable[[int], bytes], repeat: int) -> None:
    assert_linear(shape, read_page, 200_000, repeat)


@pytest.mark.scaling
@pytest.mark.parametrize(
    ("shape", "repeat"),
    [
        pytest.param(
            lambda n: html("".join(f'<a href="/p{i}">p</a>' for i in range(n))), 1, id="distinct"
        ),
        pytest.param(lambda n: html('<a href="/same">p</a>' * n), 1, id="same"),
        pytest.param(
            lambda n: html("".join(f'<a href="https://o{i}.org/">p</a>' for i in range(n))),
            1,
            id="external",
        ),
        pytest.param(lambda n: html(f'<a href="/{"x" * (20 * n)}">p</a>'), 20, id="one-long-href"),
        pytest.param(lambda n: html('<a href="mailto:a@b">m</a>' * n), 1, id="other"),
    ],
)
def test_many_links_are_linear(shape: Callable[[int], bytes], repeat: int) -> None:
    assert_linear(shape, read_page, 6_000, repeat)


def test_heading_scan_is_bounded_per_heading() -> None:
    # A heading's text comes from at most MAX_TEXT_SCAN characters of its content.
    body = html("<h1>" + " " * (MAX_TEXT_SCAN + 10) + "late</h1><h2>early" + "x" * 2_000 + "</h2>")
    info = parse_page(body, PAGE)
    assert [(h.level, h.text[:5], len(h.text)) for h in info.headings] == [(2, "early", 1_000)]
