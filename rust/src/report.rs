//! What the site report counts per row, counted per batch: the report (`sitescout._report`)
//! then takes one step per distinct value of a batch instead of one per row. Each count lists
//! its values in the order they first appear, so caps fill as they did row by row; the rules
//! that read the values (months, locales, caps) stay in the report.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::hash::Hash;

use crate::batch::Rows;
use crate::groups::group_key;

/// Counts of values in the order they first appear.
#[derive(Debug)]
pub struct Tally<K> {
    pub counts: Vec<(K, usize)>,
    index: HashMap<K, usize>,
}

impl<K> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            counts: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<K: Hash + Eq + Clone> Tally<K> {
    pub fn add(&mut self, key: K) {
        match self.index.get(&key) {
            Some(&at) => self.counts[at].1 += 1,
            None => {
                self.index.insert(key.clone(), self.counts.len());
                self.counts.push((key, 1));
            }
        }
    }
}

/// The first `n` characters of `text` (code points, as Python slices a str).
fn head(text: &str, n: usize) -> &str {
    match text.char_indices().nth(n) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// A batch's rows as the report counts them.
#[derive(Debug, Default)]
pub struct ReportCounts<'a> {
    /// The first 8 characters of each row's lastmod ("" without one): a month and what follows.
    pub lastmods: Tally<&'a str>,
    pub sitemaps: Tally<&'a str>,
    /// The hreflang of each alternate row.
    pub alternates: Tally<Option<&'a str>>,
    /// The path group (depth 1; None: in no group) of each page that lists alternates.
    pub declaring: Tally<Option<Vec<u8>>>,
    /// (path group, hreflang) for each distinct hreflang a page lists.
    pub declared: Tally<(Option<Vec<u8>>, &'a str)>,
}

pub fn report_counts(rows: &Rows) -> ReportCounts<'_> {
    let mut counts = ReportCounts::default();
    let mut languages: Vec<&str> = Vec::new();
    for row in &rows.0 {
        counts
            .lastmods
            .add(head(row.entry.lastmod.as_deref().unwrap_or(""), 8));
        counts.sitemaps.add(&*row.sitemap);
        if row.alternate_of.is_some() {
            counts.alternates.add(row.hreflang.as_deref());
            continue;
        }
        if row.entry.alternates.is_empty() {
            continue;
        }
        let group = group_key(row.entry.url.as_bytes(), 1);
        counts.declaring.add(group.clone());
        languages.clear();
        for alternate in &row.entry.alternates {
            if !languages.contains(&alternate.hreflang.as_str()) {
                languages.push(&alternate.hreflang);
                counts.declared.add((group.clone(), &alternate.hreflang));
            }
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{Alternate, Entry};

    fn entry(url: &str, lastmod: Option<&str>, hreflangs: &[&str]) -> Entry {
        Entry {
            url: url.to_string(),
            lastmod: lastmod.map(str::to_string),
            alternates: hreflangs
                .iter()
                .map(|h| Alternate {
                    hreflang: h.to_string(),
                    url: format!("https://x.com/{h}/"),
                })
                .collect(),
            ..Entry::default()
        }
    }

    #[test]
    fn counts_follow_first_appearance_and_pages_name_a_language_once() {
        let mut rows = Rows::from_document(
            vec![
                entry(
                    "https://x.com/b/1",
                    Some("2024-01-05T10:00:00Z"),
                    &["de", "fr", "de"],
                ),
                entry("https://x.com/a/1", None, &[]),
                entry("https://x.com/b/2", Some("2024-01-06"), &["fr"]),
                entry("mailto:x", Some("2023-12-é9xyz"), &["de"]),
            ],
            "https://x.com/s.xml",
            1,
        );
        rows.0[1].alternate_of = Some("https://x.com/b/1".into());
        rows.0[1].hreflang = Some("de".into());
        let counts = report_counts(&rows);
        assert_eq!(
            counts.lastmods.counts,
            [("2024-01-", 2), ("", 1), ("2023-12-", 1)]
        );
        assert_eq!(counts.sitemaps.counts, [("https://x.com/s.xml", 4)]);
        assert_eq!(counts.alternates.counts, [(Some("de"), 1)]);
        assert_eq!(
            counts.declaring.counts,
            [(Some(b"/b/*".to_vec()), 2), (None, 1)]
        );
        assert_eq!(
            counts.declared.counts,
            [
                ((Some(b"/b/*".to_vec()), "de"), 1),
                ((Some(b"/b/*".to_vec()), "fr"), 2),
                ((None, "de"), 1),
            ]
        );
    }
}
