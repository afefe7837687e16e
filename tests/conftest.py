from __future__ import annotations

import threading
from collections.abc import Iterator
from fnmatch import fnmatch

import pytest

from .server import Site

# Markers for whole modules, by file name: every test in them needs the same heavy thing.
# Single tests that need a cluster, a browser or a timing of 4x the input carry their own
# `@pytest.mark.…` line. The markers and their meanings are declared in pyproject.toml;
# `make check` runs only the tests that have none of them.
MODULE_MARKERS: dict[str, tuple[str, ...]] = {
    "test_batch.py": ("cluster",),  # a real Dask LocalCluster walking a farm of sites
    "test_fuzz_*.py": ("fuzz",),
    "test_benchmarks.py": ("slow",),  # every script in benchmarks/ run with --smoke
}

# The tests marked `slow` by measurement: over about a second in `pytest --durations=0` on a
# busy 2-core machine, and not already marked above or in their file. Test functions by file,
# with every case of a parametrized one. Mostly CLI runs in a subprocess, Ctrl-C, deadline and
# stdin tests, and sweeps of generated input. Re-measure and extend it when `make check` slows.
SLOW_TESTS: dict[str, tuple[str, ...]] = {
    "test_budget.py": ("test_order_children_is_a_permutation",),
    # test_urls_jsonl_stdout_is_data_only (about 1 s) stays in `make check` on purpose: its one
    # `python -m sitescout` run is the fast lane's test of the real entry point.
    "test_cli.py": (
        "test_json_summary_on_stderr",
        "test_nothing_found_exits_3",
        "test_partial_exits_1",
        "test_render_without_a_browser_is_a_usage_error",
        "test_sitemap_flag_skips_robots",
        "test_urls_csv_to_file_and_no_alternates",
        "test_urls_parquet_file_holds_every_entry",
        "test_urls_parquet_needs_an_output_file",
        "test_urls_without_a_sitemap_streams_the_link_crawl",
        "test_usage_error_exits_2",
        "test_user_agent_is_sent",
    ),
    "test_cli_budgets.py": (
        "test_deadline_flag_ends_a_slow_walk_with_exit_1",
        "test_warnings_on_plain_stderr_keep_their_exact_wording",
    ),
    "test_cli_extract.py": (
        "test_an_empty_pages_list_is_a_usage_error",
        "test_another_origin_exits_2",
        "test_conflicting_scope_flags_are_a_usage_error",
        "test_demo_prints_the_selection_and_writes_the_artifacts",
        "test_extract_on_a_site_without_sitemap_says_it_crawled",
        "test_few_templates_warns_and_proceeds_without_a_tty",
        "test_json_summary_is_one_document_on_stdout",
        "test_one_locale_shows_no_locale_note",
        "test_sigint_mid_run_leaves_complete_files",
        "test_the_locale_note_follows_the_first_line",
        "test_url_budget_cut_prints_the_truncation_notice",
    ),
    "test_cli_output.py": (
        "test_a_complete_run_replaces_the_file",
        "test_a_full_disk_is_a_clear_error",
        "test_a_run_that_finds_nothing_leaves_the_file_alone",
        "test_ctrl_c_before_the_first_entry_leaves_the_file_alone",
        "test_ctrl_c_groups_keep_what_was_counted",
        "test_ctrl_c_summary_counts_the_lines_piped_to_stdout",
        "test_ctrl_c_summary_counts_what_the_file_holds",
        "test_entries_stream_to_a_pipe_while_the_site_stalls",
        "test_no_entry_written_creates_no_file",
        "test_no_entry_written_leaves_the_file_byte_for_byte",
        "test_output_to_a_device_is_written_in_place",
        "test_the_file_behind_a_symlink_is_replaced_keeping_its_mode",
    ),
    "test_cli_quiet_verbose.py": (
        "test_double_verbose_adds_the_http_library_debug_log",
        "test_every_command_takes_quiet_and_verbose",
        "test_quiet_and_verbose_together_are_a_usage_error",
        "test_quiet_batch_prints_only_the_failed_sites",
        "test_quiet_demo_prints_nothing",
        "test_quiet_extract_json_is_the_only_output",
        "test_quiet_extract_keeps_page_failures_as_errors",
        "test_quiet_extract_prints_nothing_and_still_extracts",
        "test_quiet_extract_says_why_there_is_nothing_to_extract",
        "test_quiet_json_summary_still_comes_out",
        "test_quiet_scope_prints_its_answer_and_nothing_else",
        "test_quiet_urls_ends_a_failed_run_with_one_error_line",
        "test_quiet_urls_hides_budget_warnings_but_keeps_the_exit_code",
        "test_quiet_urls_keeps_the_errors",
        "test_quiet_urls_prints_the_data_and_nothing_else",
        "test_verbose_extract_logs_the_walk_without_http_internals",
        "test_verbose_logs_one_line_per_sitemap_document",
        "test_verbose_names_a_failed_document",
    ),
    "test_cli_small.py": (
        "test_a_chosen_locale_is_not_called_the_default",
        "test_a_chosen_locale_with_no_page_says_so",
        "test_a_closed_stdout_pipe_exits_0_without_a_word",
        "test_an_inferred_locale_is_still_the_default",
        "test_no_page_at_all_is_still_no_page_discovered",
        "test_pages_not_among_the_discovered_ones_are_named",
    ),
    "test_cli_surface.py": (
        "test_a_bare_two_letter_sitemap_folder_is_not_a_language",
        "test_crawl_runs_show_no_section_numbers",
        "test_full_runs_show_no_section_numbers",
        "test_hreflang_alone_is_enough",
        "test_one_bare_first_folder_is_not_a_language",
        "test_one_locale_named_sitemap_alone_is_not_a_language",
        "test_root_help_through_the_installed_entry_point",
        "test_scope_table_shows_none_for_a_lone_folder",
        "test_two_locale_named_sitemaps_are_languages",
        "test_two_locales_at_one_position_are_languages",
        "test_txt_ctrl_c_keeps_the_urls_written",
        "test_txt_feeds_a_pipeline",
        "test_txt_is_one_url_per_line",
        "test_txt_to_a_file_and_the_no_alternates_flag",
    ),
    "test_core_batch.py": ("test_encodings_match_the_python_writers",),
    "test_core_damaged.py": (
        "test_damage_generator_covers_every_kind_of_damage",
        "test_damaged_documents_hold_the_properties",
        "test_suite_damaged_documents",
    ),
    "test_core_scan.py": (
        "test_generated_atom",
        "test_generated_in_other_encodings",
        "test_generated_rss",
        "test_generated_sitemap_indexes",
        "test_generated_text_sitemaps",
        "test_generated_urlsets",
    ),
    "test_core_urls.py": (
        "test_code_points_in_hosts",
        "test_every_code_point_in_every_part",
        "test_generated_values_agree",
        "test_ipv6_literals_agree",
        "test_nearly_clean_urls_agree",
        "test_strip_is_python_strip_over_all_code_points",
    ),
    "test_crawl.py": (
        "test_consumer_leaving_early_stops_the_crawl",
        "test_crawl_delay_spaces_requests",
        "test_deadline_stops_requesting_new_pages",
        "test_start_url_moved_to_another_site_crawls_that_site_by_its_rules",
        "test_thousand_linked_pages_at_most_two_hundred_requested",
    ),
    "test_demo.py": (
        "test_a_port_in_use_is_a_one_line_usage_error",
        "test_serve_stays_up_until_a_signal_and_exits_0",
        "test_the_server_takes_a_free_port_or_the_one_asked_for",
    ),
    "test_extract.py": (
        "test_a_site_without_sitemap_is_crawled_and_logged_as_bfs",
        "test_failure_classes_are_recorded_and_do_not_stop_the_others",
        "test_second_run_appends_and_skips_what_is_extracted",
    ),
    "test_extract_filters.py": (
        "test_a_local_sitemap_file_plans_pages_fetched_from_the_site",
        "test_a_sitemap_on_stdin_with_filters",
    ),
    "test_fetch_control.py": (
        "test_a_gated_site_answers_only_with_the_credential_cli",
        "test_a_gated_site_answers_only_with_the_credential_library",
        "test_a_proxy_refusing_a_tunnel_is_one_clear_error",
        "test_a_proxy_that_wants_credentials_is_one_clear_error",
        "test_ca_bundle_insecure_and_a_connect_tunnel",
        "test_every_request_goes_through_the_proxy",
        "test_rate_paces_extract_from_the_walk_to_the_pages",
        "test_rate_paces_the_link_crawl",
        "test_rate_spaces_request_starts_from_the_first",
        "test_scope_takes_the_fetch_flags",
        "test_secrets_never_appear_in_output_logs_or_project_files",
        "test_the_guard_still_checks_targets_through_a_proxy",
        "test_trust_env_reads_netrc_for_the_start_host",
        "test_trust_env_reads_ssl_cert_file",
        "test_trust_env_takes_the_proxy_from_the_environment",
    ),
    "test_guard_special.py": (
        "test_fetcher_connects_to_the_checked_address_after_the_answer_expires",
        "test_walk_connects_only_to_the_address_it_checked",
    ),
    "test_html.py": ("test_huge_document_is_cut_at_the_cap",),
    "test_html_hostile.py": ("test_issue_svg_bomb_page_is_read_and_its_real_title_found",),
    "test_http_hostile.py": (
        "test_a_gzip_body_cut_anywhere_is_seen_as_cut",
        "test_read_timeout_is_labelled_read",
        "test_retries_and_backoff_share_one_time_limit",
        "test_retry_after_that_fits_is_still_honoured",
    ),
    "test_junk.py": ("test_filter_partitions_input",),
    "test_layout.py": ("test_nothing_outside_the_cli_imports_the_cli",),
    "test_llms_walk.py": (
        "test_a_file_over_the_cap_is_cut_and_the_cut_recorded",
        "test_an_explicit_llms_txt_on_another_site_is_read_as_given",
        "test_cli_csv_and_parquet_carry_md_url_and_sources",
        "test_cli_extract_uses_llms_txt_and_logs_it",
        "test_deadline_bounds_a_slow_llms_txt",
    ),
    "test_local_inputs.py": (
        "test_a_fifo_is_refused_not_waited_on",
        "test_sitemap_option_takes_stdin_and_file_urls",
        "test_stdin_is_read_as_one_document",
        "test_stdin_left_open_is_cut_by_the_deadline",
    ),
    "test_locale.py": (
        "test_a_50000_child_index_is_read_in_linear_time",
        "test_children_locales_adds_locale_folders_to_sitemap_locale",
        "test_filter_children_partitions_its_input",
        "test_sitemap_locale_is_canonical_on_urls",
    ),
    "test_newcomer.py": (
        "test_ctrl_c_while_the_summary_is_written_does_not_undo_a_finished_run",
        "test_each_command_takes_a_bare_host_and_says_so_once",
        "test_groups_on_a_narrow_pipe_shows_whole_counts",
        "test_urls_json_keeps_stderr_for_the_summary",
    ),
    "test_options.py": (
        "test_cli_bad_locale_exits_2_before_any_request",
        "test_cli_unwritable_output_exits_2_before_any_request",
        "test_walk_keywords_either_accept_or_raise_usage_error",
    ),
    "test_parse.py": (
        "test_arbitrary_bytes_after_a_sitemap_prefix_never_raise",
        "test_arbitrary_bytes_never_raise",
        "test_markup_soup_never_raises",
        "test_text_sitemaps_any_chunking",
        "test_wellformed_urlsets_any_chunking",
    ),
    "test_parse_hostile.py": (
        "test_items_after_an_unclosed_attribute_value_come_out_as_they_arrive",
        "test_one_read_inflating_to_megabytes_does_not_hold_the_event_loop",
        "test_text_sitemap_cut_by_a_timeout",
    ),
    "test_project.py": (
        "test_a_pages_symlink_out_of_the_project_is_refused",
        "test_a_stale_lock_file_does_not_block",
        "test_a_traversal_slug_in_state_is_refused_before_anything_is_written",
        "test_the_cli_exits_2_and_leaves_a_wrongly_typed_file_alone",
        "test_the_cli_reports_a_bad_concurrency_as_a_usage_error",
        "test_the_lock_is_released_after_ctrl_c",
        "test_two_runs_into_one_directory_lose_nothing",
    ),
    "test_readme.py": (
        "test_regenerating_rewrites_a_drifted_block_and_keeps_a_matching_one",
        "test_the_readme_example_matches_the_demo_site",
    ),
    "test_report.py": (
        "test_a_full_depth_2_table_counts_like_one_url_at_a_time",
        "test_every_table_is_capped_and_counts_still_add_up",
        "test_page_size_is_bounded_by_the_caps_not_the_urls",
        "test_report_from_saved_inventories_matches_the_walk",
    ),
    "test_robots.py": ("test_robots_fetch_holds_a_short_timeout",),
    "test_rules.py": ("test_the_literal_of_a_row_is_in_every_path_it_matches",),
    "test_scope.py": ("test_server_that_never_answers_returns_within_the_timeouts",),
    "test_scope_local.py": (
        "test_relative_children_of_stdin_have_no_folder",
        "test_sitemap_from_stdin_for_a_site_url",
        "test_stdin_is_the_top_document",
    ),
    "test_select.py": (
        "test_all_keeps_the_whole_pool",
        "test_cap_and_home",
        "test_every_page_lands_in_exactly_one_list",
        "test_selection_does_not_depend_on_input_order",
    ),
    "test_startup.py": ("test_a_command_alone_says_what_it_says_among_all",),
    "test_table.py": (
        "test_arrow_lastmod_parsing_agrees_with_the_rule",
        "test_python_objects_grow_per_batch_not_per_url",
        "test_without_the_extra_a_usage_error_names_the_install",
    ),
    "test_unreachable.py": (
        "test_a_server_that_accepts_and_says_nothing_is_not_unreachable",
        "test_cli_extract_on_a_closed_port_says_so",
        "test_cli_urls_json_summary_of_a_closed_port",
        "test_cli_urls_on_a_closed_port_says_so_and_exits_3",
    ),
    "test_urls.py": (
        "test_classify_never_raises",
        "test_fast_path_agrees_with_slow_path",
        "test_normalize_idempotent_on_resolved",
        "test_normalize_never_raises_and_is_idempotent",
        "test_slugify_is_always_a_safe_name",
    ),
    "test_walk.py": (
        "test_429_with_retry_after_then_200",
        "test_a_slow_consumer_gets_every_url_once",
        "test_concurrency_is_documents_in_flight_on_one_host",
        "test_gzip_bomb_is_capped_and_recorded",
        "test_trickling_server_ends_at_total_timeout",
    ),
    "test_walk_budgets.py": (
        "test_byte_budget_stops_every_document_in_flight",
        "test_byte_budget_stops_the_document_that_crosses_it",
        "test_deadline_cutting_the_last_document_is_reported",
        "test_deadline_ends_a_slow_walk_and_keeps_what_was_collected",
    ),
}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        file = item.path.name
        for pattern, markers in MODULE_MARKERS.items():
            if fnmatch(file, pattern):
                for marker in markers:
                    item.add_marker(marker)
        if isinstance(item, pytest.Function) and item.originalname in SLOW_TESTS.get(file, ()):
            item.add_marker("slow")


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site().start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown so that slow handlers still sleeping return at once."""
    event = threading.Event()
    try:
        yield event
    finally:
        event.set()
