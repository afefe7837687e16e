"""What a user of the command line sees: help texts, plain-URL output, and scope's languages.

Help is rendered through typer's real help machinery; the runs are real subprocesses against
loopback sites.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sitescout.cli import app

from .server import Site, gz, sitemapindex, urlset
from .test_cli_output import interrupt, stalling_site, start, stray_files, summary_of, written

SECTION = "§"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sitescout", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def command_names() -> list[str]:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    return sorted(group.commands)


def help_of(*command: str) -> str:
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_every_command_is_covered() -> None:
    assert {"urls", "scope", "groups", "extract", "demo"} <= set(command_names())


@pytest.mark.parametrize("command", [(), *[(name,) for name in command_names()]])
def test_help_has_no_section_numbers_and_flags_take_no_value(command: tuple[str, ...]) -> None:
    text = help_of(*command)
    assert SECTION not in text
    assert "<bool>" not in text
    help_line = next(line for line in text.splitlines() if "--help" in line)
    assert help_line.split("--help", 1)[1].split()[:1] == ["Show"]  # no type column between


def test_flags_that_take_values_still_show_them() -> None:
    text = help_of("urls")
    lines = {line.split()[1]: line for line in text.splitlines() if line.startswith("│ --")}
    assert "<int range>" in lines["--concurrency"]
    assert "<jsonl|csv|txt|parquet>" in lines["--format"]
    assert lines["--no-alternates"].split()[2] == "Do"  # the help text follows the flag


def test_root_help_through_the_installed_entry_point() -> None:
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    assert SECTION not in proc.stdout and "<bool>" not in proc.stdout
    for name in ("urls", "scope", "groups", "extract"):
        assert name in proc.stdout


# -- runs: nothing a user sees names a spec section ----------------------------------------------


def sitemap_site(site: Site) -> list[str]:
    u = site.url
    pages = [f"{u}/", f"{u}/about/", f"{u}/blog/", f"{u}/blog/post-1/", f"{u}/contact/"]
    site.add("/robots.txt", "Sitemap: /index.xml\n", Content_Type="text/plain")
    site.add("/index.xml", sitemapindex([f"{u}/pages.xml", f"{u}/missing.xml"]))
    alt = f'<xhtml:link rel="alternate" hreflang="fr" href="{u}/fr/"/>'
    rest = "".join(f"<url><loc>{p}</loc></url>" for p in pages[1:])
    site.add("/pages.xml", urlset(pages[:1], extra=alt).replace("</urlset>", rest + "</urlset>"))
    for path in ("/", "/about/", "/blog/", "/blog/post-1/", "/contact/", "/fr/"):
        body = f"<html><head><title>{path}</title></head><body><p>{path}</p></body></html>"
        site.add(path, body, Content_Type="text/html")
    return [*pages, f"{u}/fr/"]


def crawl_site(site: Site) -> None:
    links = "".join(f'<a href="/{p}">{p}</a>' for p in ("a", "b"))
    home = f"<html><title>home</title><body><p>hi</p>{links}</body></html>"
    site.add("/", home, Content_Type="text/html")
    for p in ("a", "b"):
        page = f"<html><title>{p}</title><body><p>{p}</p></body></html>"
        site.add(f"/{p}", page, Content_Type="text/html")


def test_full_runs_show_no_section_numbers(site: Site, tmp_path: Path) -> None:
    sitemap_site(site)
    project = tmp_path / "project"
    runs = [
        run("urls", site.url),
        run("urls", site.url, "--json", "-f", "csv"),
        run("urls", site.url, "--max-fetches", "1", "--max-urls", "2"),
        run("scope", site.url),
        run("scope", site.url, "--json", "--sample", "2"),
        run("groups", site.url, "--json"),
        run("extract", site.url, "--out", str(project), "--yes"),
        run("extract", site.url, "--out", str(project), "--json", "--refresh-all", "--yes"),
    ]
    for proc in runs:
        assert proc.returncode in (0, 1), proc.args
        assert proc.stdout or proc.stderr
        assert SECTION not in proc.stdout, proc.args
        assert SECTION not in proc.stderr, proc.args
    assert "warning:" in runs[2].stderr  # a budget warning was among what was checked
    written_files = [p for p in project.rglob("*") if p.is_file()]
    assert any(p.name == "_crawl-log.json" for p in written_files)
    for path in written_files:
        assert SECTION not in path.read_text(encoding="utf-8"), path


def test_crawl_runs_show_no_section_numbers(site: Site) -> None:
    crawl_site(site)
    proc = run("urls", site.url + "/", "--json")
    assert proc.returncode == 0, proc.stderr
    summary = summary_of(proc.stderr)
    assert any("link crawl" in note for note in summary["notes"])
    assert SECTION not in proc.stdout + proc.stderr


# -- urls --format txt ---------------------------------------------------------------------------


def test_txt_is_one_url_per_line(site: Site) -> None:
    expected = sitemap_site(site)
    proc = run("urls", site.url, "--format", "txt")
    assert proc.returncode == 1, proc.stderr  # one child sitemap is missing: partial
    lines = proc.stdout.splitlines()
    assert sorted(lines) == sorted(expected)
    assert proc.stdout.endswith("\n") and "" not in lines
    jsonl = run("urls", site.url)
    assert sorted(lines) == sorted(json.loads(line)["url"] for line in jsonl.stdout.splitlines())


def test_txt_to_a_file_and_the_no_alternates_flag(site: Site, tmp_path: Path) -> None:
    expected = sitemap_site(site)
    out = tmp_path / "urls.txt"
    proc = run("urls", site.url, "-f", "txt", "-o", str(out), "--no-alternates", "--json")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    lines = out.read_text(encoding="utf-8").splitlines()
    assert sorted(lines) == sorted(u for u in expected if not u.endswith("/fr/"))
    assert written(summary_of(proc.stderr)) == len(lines)
    assert stray_files(tmp_path, out) == []


def test_txt_feeds_a_pipeline(site: Site) -> None:
    expected = sitemap_site(site)
    shell = f"{sys.executable} -m sitescout urls {site.url} -f txt -q | grep -c /blog/"
    proc = subprocess.run(
        shell, shell=True, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.stdout.strip() == str(sum("/blog/" in u for u in expected))


def test_txt_ctrl_c_keeps_the_urls_written(
    site: Site, release: threading.Event, tmp_path: Path
) -> None:
    paths = stalling_site(site, release)
    out = tmp_path / "urls.txt"
    proc = start("urls", site.url, "--format", "txt", "-o", str(out), "--json")
    _stdout, stderr = interrupt(proc, site, paths)
    assert proc.returncode == 1, stderr
    summary = summary_of(stderr)
    assert "interrupted" in summary["partial_reasons"]
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) > 0 and all(line.startswith(site.url + "/c") for line in lines)
    assert len(set(lines)) == len(lines) == written(summary)
    assert stray_files(tmp_path, out) == []


# -- scope: languages need the evidence the locale rules ask for -------------------------------


def scope_languages(site: Site, *args: str) -> list[str]:
    proc = run("scope", site.url + "/", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    assert SECTION not in proc.stdout
    languages = json.loads(proc.stdout)["languages_detected"]
    assert isinstance(languages, list)
    return languages


def page_urlset(site: Site, paths: list[str], extra: str = "") -> str:
    return urlset([site.url + p for p in paths], extra=extra)


def test_a_bare_two_letter_sitemap_folder_is_not_a_language(site: Site) -> None:
    u = site.url
    site.add("/robots.txt", "Sitemap: /sm/index.xml\n", Content_Type="text/plain")
    site.add("/sm/index.xml", sitemapindex([f"{u}/sm/leaf-1.xml.gz", f"{u}/sm/leaf-2.xml.gz"]))
    site.add("/sm/leaf-1.xml.gz", gz(page_urlset(site, ["/products/a", "/products/b"])))
    site.add("/sm/leaf-2.xml.gz", gz(page_urlset(site, ["/about", "/contact"])))
    assert scope_languages(site) == []
    assert scope_languages(site, "--sample", "2") == []


def test_one_locale_named_sitemap_alone_is_not_a_language(site: Site) -> None:
    u = site.url
    site.add("/robots.txt", "Sitemap: /sitemap_index.xml\n", Content_Type="text/plain")
    site.add("/sitemap_index.xml", sitemapindex([f"{u}/sitemap-it.xml", f"{u}/it/sitemap.xml"]))
    assert scope_languages(site) == []


def test_two_locale_named_sitemaps_are_languages(site: Site) -> None:
    u = site.url
    site.add("/robots.txt", "Sitemap: /sitemap_index.xml\n", Content_Type="text/plain")
    children = [f"{u}/sitemap-it.xml", f"{u}/sitemap-de.xml", f"{u}/sitemap-pages.xml"]
    site.add("/sitemap_index.xml", sitemapindex(children))
    assert scope_languages(site) == ["de", "it"]


def test_one_bare_first_folder_is_not_a_language(site: Site) -> None:
    # `/it/` as in "IT services": the only locale-looking folder of the site.
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", page_urlset(site, ["/it/services", "/it/support", "/about"]))
    assert scope_languages(site) == []


def test_two_locales_at_one_position_are_languages(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", page_urlset(site, ["/it/servizi", "/fr/services", "/about"]))
    assert scope_languages(site) == ["fr", "it"]


def test_hreflang_alone_is_enough(site: Site) -> None:
    u = site.url
    links = "".join(
        f'<xhtml:link rel="alternate" hreflang="{lang}" href="{u}/x-{lang}"/>'
        for lang in ("de", "pt-BR")
    )
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", page_urlset(site, ["/it/x"], extra=links))
    assert scope_languages(site) == ["de", "pt-br"]  # the lone `/it/` still is no language


def test_scope_table_shows_none_for_a_lone_folder(site: Site) -> None:
    site.add("/robots.txt", "Sitemap: /sitemap.xml\n", Content_Type="text/plain")
    site.add("/sitemap.xml", page_urlset(site, ["/it/services", "/about"]))
    proc = run("scope", site.url + "/")
    assert proc.returncode == 0, proc.stderr
    row = next(line for line in proc.stdout.splitlines() if "languages" in line)
    assert row.split() == ["languages", "none"]
