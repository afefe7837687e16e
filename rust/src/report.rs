//! What the site report counts per row, counted per batch: the report (`sitescout._report`)
//! then takes one step per distinct value of a batch instead of one per row. Each count lists
//! its values in the order they first appear, so caps fill as they did row by row; the rules
//! that read the values (months, locales, caps) stay in the report.
//!
//! `report_urls` does the same for the URLs themselves: their path groups (depth 2, from which
//! depth 1 follows), and the few URLs the junk and sign-in rules must judge. Those rules stay in
//! Python (`_junk.junk_filter`, `_urls.classify`); what they match is handed over as data
//! (`UrlRules`), and this module only picks candidates: every URL a rule could match, and for a
//! `-2` copy the URLs it could be a copy of. Picking more than needed costs time, never a
//! different answer; picking fewer would be a bug, which the tests look for.
#![forbid(unsafe_code)]

use std::borrow::Borrow;
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::Arc;

use regex::{Regex, RegexSet};

use crate::batch::Rows;
use crate::groups::{group_key, group_key_into, host_and_port_ok, path_key_into};
use crate::urls::{is_clean_bytes, py_strip_bytes};

/// Counts of values in the order they first appear.
#[derive(Debug)]
pub struct Tally<K> {
    pub counts: Vec<(K, usize)>,
    index: HashMap<K, usize>,
    /// Where the last value added is counted.
    last: usize,
}

impl<K> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            counts: Vec::new(),
            index: HashMap::new(),
            last: 0,
        }
    }
}

impl<K: Hash + Eq + Clone> Tally<K> {
    pub fn add(&mut self, key: K) {
        self.add_ref(&key);
    }

    /// `add` of a value lent (a group key cut into a reused buffer): copied only the first time.
    pub fn add_ref<Q>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        // Neighbouring rows mostly share a value (one sitemap, one day): no hash for those.
        if self
            .counts
            .get(self.last)
            .is_some_and(|(k, _)| k.borrow() == key)
        {
            self.counts[self.last].1 += 1;
            return;
        }
        self.last = match self.index.get(key) {
            Some(&at) => at,
            None => {
                let owned = key.to_owned();
                self.index.insert(owned.clone(), self.counts.len());
                self.counts.push((owned, 0));
                self.counts.len() - 1
            }
        };
        self.counts[self.last].1 += 1;
    }

    /// Count the last value added once more.
    pub fn add_last_again(&mut self) {
        if let Some(last) = self.counts.get_mut(self.last) {
            last.1 += 1;
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
    let mut previous: Option<&Arc<str>> = None;
    for row in &rows.0 {
        counts
            .lastmods
            .add(head(row.entry.lastmod.as_deref().unwrap_or(""), 8));
        // The rows of one document share their sitemap's text: the same text is the same count.
        match previous {
            Some(sitemap) if Arc::ptr_eq(sitemap, &row.sitemap) => counts.sitemaps.add_last_again(),
            _ => counts.sitemaps.add(&*row.sitemap),
        }
        previous = Some(&row.sitemap);
        if row.alternate_of().is_some() {
            counts.alternates.add(row.hreflang());
            continue;
        }
        if row.entry.alternates().is_empty() {
            continue;
        }
        let group = group_key(row.entry.url.as_bytes(), 1);
        counts.declaring.add(group.clone());
        languages.clear();
        for alternate in row.entry.alternates() {
            if !languages.contains(&alternate.hreflang.as_str()) {
                languages.push(&alternate.hreflang);
                counts.declared.add((group.clone(), &alternate.hreflang));
            }
        }
    }
    counts
}

/// What the report's junk and sign-in rules look for, as the report words them: literal words
/// and regexes found anywhere in a lowercased path.
#[derive(Debug)]
pub struct UrlRules {
    /// A copy suffix (`-2`) as group 1: the URL without it is what it would be a copy of.
    copy: Option<Regex>,
    /// Any sign-in word.
    auth: Option<Regex>,
    /// Every rule in one pass over a path: the junk words (an alternation of literals), the
    /// copy suffix, the junk shapes, the sign-in words. Nearly every path matches none, and one
    /// scan costs less than four searches (with it, `report_urls` over the 1.1M rows of the
    /// benchmark site took 0.84x the time, in process). `junk_in_all` and `auth_in_all` pick
    /// the answers out of it.
    all: RegexSet,
    junk_in_all: Vec<usize>,
    auth_in_all: Option<usize>,
}

impl UrlRules {
    /// The rules from the report's words and regexes (Python syntax that the `regex` crate reads
    /// alike: classes, counted repeats, `(?:...)`, `$`); an error names a pattern it cannot read.
    pub fn new(
        junk_words: &[String],
        junk_patterns: &[String],
        copy_pattern: Option<&str>,
        auth_words: &[String],
    ) -> Result<UrlRules, regex::Error> {
        let either = |items: Vec<String>| -> Result<Option<Regex>, regex::Error> {
            if items.is_empty() {
                return Ok(None);
            }
            let alternation = items
                .iter()
                .map(|item| format!("(?:{item})"))
                .collect::<Vec<_>>()
                .join("|");
            Regex::new(&alternation).map(Some)
        };
        let words = |words: &[String]| words.iter().map(|w| regex::escape(w)).collect::<Vec<_>>();
        let junk_words = either(words(junk_words))?;
        let junk_shapes = either(junk_patterns.to_vec())?;
        let copy = copy_pattern.map(Regex::new).transpose()?;
        let auth = either(words(auth_words))?;
        let mut patterns = Vec::new();
        let mut junk_in_all = Vec::new();
        for rule in [&junk_words, &copy, &junk_shapes].into_iter().flatten() {
            junk_in_all.push(patterns.len());
            patterns.push(rule.as_str().to_owned());
        }
        let auth_in_all = auth.as_ref().map(|rule| {
            patterns.push(rule.as_str().to_owned());
            patterns.len() - 1
        });
        Ok(UrlRules {
            copy,
            auth,
            all: RegexSet::new(patterns)?,
            junk_in_all,
            auth_in_all,
        })
    }

    /// Whether a junk row could match a (lowercased) path, and whether a sign-in word is in it.
    fn junk_and_auth(&self, path: &str) -> (bool, bool) {
        let found = self.all.matches(path);
        let junk = self.junk_in_all.iter().any(|&i| found.matched(i));
        (junk, self.auth_in_all.is_some_and(|i| found.matched(i)))
    }
}

/// A batch's URLs as the report reads them.
#[derive(Debug, Default)]
pub struct UrlCounts {
    /// The URLs per path group at depth 2 (`group_key(url, 2)`), groups in the order they
    /// first appear.
    pub places: Tally<Vec<u8>>,
    /// The URLs in no group.
    pub other: usize,
    /// The rows the junk rules must judge, in order: every URL a row could match, and every URL a
    /// `-2` copy among them could be a copy of.
    pub junk: Vec<usize>,
    /// The rows the sign-in rule must judge, in order.
    pub auth: Vec<usize>,
}

/// The path of `url` as RFC 3986's appendix-B split cuts it (Python's `_urls._parts`, which
/// `url_path` and `classify` read): after `scheme:` and `//authority` when there are, up to the
/// query or fragment.
fn path_of(url: &[u8]) -> &[u8] {
    let mut rest = url;
    if let Some(at) = rest.iter().position(|c| b":/?#".contains(c)) {
        if rest[at] == b':' && at > 0 {
            rest = &rest[at + 1..];
        }
    }
    if let Some(after) = rest.strip_prefix(b"//") {
        let end = after
            .iter()
            .position(|c| b"/?#".contains(c))
            .unwrap_or(after.len());
        rest = &after[end..];
    }
    let end = rest
        .iter()
        .position(|c| b"?#".contains(c))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// `text` lowercased as Python's `str.lower` does, into `buf`; None for text the rules are not
/// run on here (not UTF-8, or holding control characters a reader may drop): such a URL is
/// always a candidate.
fn lowered<'b>(text: &[u8], buf: &'b mut String) -> Option<&'b str> {
    if text.iter().any(|&c| c < 0x20 || c == 0x7f) {
        return None;
    }
    let text = std::str::from_utf8(text).ok()?;
    buf.clear();
    if text.is_ascii() {
        buf.push_str(text);
        buf.make_ascii_lowercase();
    } else {
        buf.push_str(&text.to_lowercase());
    }
    Some(buf)
}

/// A path as the junk rows are matched against it: lowercased (see `lowered`), and led by a
/// `/` when it has none (`mailto:promo1`), since the siblings row reads every segment, the first
/// of a relative path too; and whether that `/` was put there.
fn junk_path<'b>(path: &'b [u8], buf: &'b mut String) -> Option<(&'b str, bool)> {
    // The usual path is read as it is: led by `/`, printable ASCII, no capital.
    if path.first() == Some(&b'/')
        && path
            .iter()
            .all(|&c| (0x20..0x7f).contains(&c) && !c.is_ascii_uppercase())
    {
        return std::str::from_utf8(path).ok().map(|text| (text, false));
    }
    lowered(path, buf)?;
    let led = !buf.starts_with('/');
    if led {
        buf.insert(0, '/');
    }
    Some((buf, led))
}

/// A path as `_junk._path_key` compares paths: without trailing slashes, `/` when nothing is
/// left.
fn path_key(path: &str) -> &str {
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        "/"
    } else {
        path
    }
}

/// A URL as a walk yields them: printable ASCII, `http://` or `https://`, no bracket in its
/// authority. `str.strip` leaves such a URL as it is, and urlsplit and `_urls._parts` cut it
/// alike: its `(netloc, path)`.
fn plain_parts(url: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = url
        .strip_prefix(b"https://")
        .or_else(|| url.strip_prefix(b"http://"))?;
    if !url.iter().all(|&c| (0x21..0x7f).contains(&c)) {
        return None;
    }
    let end = rest
        .iter()
        .position(|c| b"/?#".contains(c))
        .unwrap_or(rest.len());
    let (netloc, rest) = rest.split_at(end);
    if netloc.iter().any(|&c| c == b'[' || c == b']') {
        return None;
    }
    let end = rest
        .iter()
        .position(|c| b"?#".contains(c))
        .unwrap_or(rest.len());
    Some((netloc, &rest[..end]))
}

/// Whether `classify` could find `url` to be a sign-in page. It reads the path of the stripped
/// URL, resolved against the site and normalized unless it is clean.
fn might_sign_in(url: &[u8], rules: &UrlRules, buf: &mut String) -> bool {
    let stripped = py_strip_bytes(url);
    let path = path_of(stripped);
    may_gain_a_word(stripped, path)
        || lowered(path, buf).is_none_or(|text| matches(&rules.auth, text))
}

/// Whether resolving and normalizing a stripped URL could put a word into its path (`path`).
/// Normalizing an absolute http(s) URL can decode escapes (`%6Cogin`) and read a backslash as a
/// slash, but never joins two pieces of a path into a word, and leaves a clean URL as it is; a
/// relative URL takes the site's path, which is not known here.
fn may_gain_a_word(stripped: &[u8], path: &[u8]) -> bool {
    let absolute = [&b"http://"[..], b"https://"].iter().any(|scheme| {
        stripped.len() >= scheme.len() && stripped[..scheme.len()].eq_ignore_ascii_case(scheme)
    });
    (!absolute || path.contains(&b'%') || stripped.contains(&b'\\')) && !is_clean_bytes(stripped)
}

fn matches(rule: &Option<Regex>, text: &str) -> bool {
    rule.as_ref().is_some_and(|r| r.is_match(text))
}

/// The path groups of `urls` and the candidates of the junk and sign-in rules among them
/// (WTF-8: a Python str with lone surrogates crosses as its `surrogatepass` bytes).
pub fn report_urls(urls: &[&[u8]], rules: &UrlRules) -> UrlCounts {
    let mut counts = UrlCounts::default();
    let mut key = Vec::new();
    let mut buf = String::new();
    let mut originals: HashSet<String> = HashSet::new();
    let mut whole = false; // a candidate the copy rule cannot read: judge every row
    let mut junk = vec![false; urls.len()];
    for (row, url) in urls.iter().enumerate() {
        let plain = plain_parts(url);
        let grouped = match plain {
            Some((netloc, path)) => {
                host_and_port_ok(netloc) && {
                    path_key_into(path, 2, &mut key);
                    true
                }
            }
            None => group_key_into(url, 2, &mut key),
        };
        if grouped {
            counts.places.add_ref(&key[..]);
        } else {
            counts.other += 1;
        }

        // `junk_filter` reads the path of the URL as given.
        let path = plain.map_or_else(|| path_of(url), |(_, path)| path);
        match junk_path(path, &mut buf) {
            None => {
                junk[row] = true;
                whole = true;
            }
            Some((text, led)) => {
                let (is_junk, is_auth) = rules.junk_and_auth(text);
                if is_junk {
                    junk[row] = true;
                    if let Some(copy) = &rules.copy {
                        // What it would be a copy of is read from the path as the filter has
                        // it, without the `/` put before it here.
                        let path = &text[usize::from(led)..];
                        for found in copy.captures_iter(path) {
                            let suffix = found.get(1).map_or(0..0, |m| m.range());
                            let original =
                                format!("{}{}", &path[..suffix.start], &path[suffix.end..]);
                            originals.insert(path_key(&original).to_owned());
                        }
                    }
                }
                // A plain URL is its own stripped form, and its path is the one just read.
                if plain.is_some() && is_auth {
                    counts.auth.push(row);
                    continue;
                }
            }
        }
        let auth = match plain {
            Some((_, path)) => may_gain_a_word(url, path),
            None => might_sign_in(url, rules, &mut buf),
        };
        if auth {
            counts.auth.push(row);
        }
    }
    if whole {
        junk.fill(true);
    } else if !originals.is_empty() {
        for (row, url) in urls.iter().enumerate() {
            if !junk[row] {
                if let Some(path) = lowered(path_of(url), &mut buf) {
                    junk[row] = originals.contains(path_key(path));
                }
            }
        }
    }
    counts.junk = (0..urls.len()).filter(|&row| junk[row]).collect();
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::{boxed_if_any, Alternate, Entry, More, Short};

    fn entry(url: &str, lastmod: Option<&str>, hreflangs: &[&str]) -> Entry {
        Entry {
            url: url.to_string(),
            lastmod: lastmod.map(Short::new),
            more: boxed_if_any(More {
                alternates: hreflangs
                    .iter()
                    .map(|h| Alternate {
                        hreflang: h.to_string(),
                        url: format!("https://x.com/{h}/"),
                    })
                    .collect(),
                ..More::default()
            }),
            ..Entry::default()
        }
    }

    #[test]
    fn a_tally_counts_a_value_seen_again_after_others() {
        let mut tally = Tally::default();
        for key in ["a", "b", "a", "a", "c", "b", "b"] {
            tally.add(key);
        }
        tally.add_last_again();
        assert_eq!(tally.counts, [("a", 3), ("b", 4), ("c", 1)]);
    }

    #[test]
    fn sitemaps_shared_or_not_are_counted_alike() {
        let entries = |n: usize| vec![Entry::default(); n];
        let mut rows = Rows::from_document(entries(2), "https://x.com/a.xml", 1);
        rows.0
            .extend(Rows::from_document(entries(1), "https://x.com/b.xml", 1).0);
        rows.0
            .extend(Rows::from_document(entries(3), "https://x.com/a.xml", 1).0);
        let counts = report_counts(&rows);
        assert_eq!(
            counts.sitemaps.counts,
            [("https://x.com/a.xml", 5), ("https://x.com/b.xml", 1)]
        );
    }

    fn rules() -> UrlRules {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        UrlRules::new(
            &words(&["/test", "/dev"]),
            &words(&["/[a-z]+[0-9]+(?:/|$)"]),
            Some("(-2|-3)(?:/|$)"),
            &words(&["login", "admin"]),
        )
        .unwrap()
    }

    fn scan(urls: &[&str]) -> UrlCounts {
        let bytes: Vec<&[u8]> = urls.iter().map(|u| u.as_bytes()).collect();
        report_urls(&bytes, &rules())
    }

    #[test]
    fn places_are_depth_2_groups_in_first_appearance_order() {
        let counts = scan(&[
            "https://x.com/a/b/c",
            "https://x.com/",
            "mailto:x",
            "https://x.com/a/b",
            "https://x.com/a",
            "ftp://x.com/a",
        ]);
        let places: Vec<_> = counts
            .places
            .counts
            .iter()
            .map(|(k, n)| (String::from_utf8_lossy(k).into_owned(), *n))
            .collect();
        let place = |k: &str, n: usize| (k.to_owned(), n);
        assert_eq!(
            places,
            [place("/a/b/*", 2), place("/", 1), place("/a/*", 1)]
        );
        assert_eq!(counts.other, 2);
    }

    #[test]
    fn candidates_are_read_from_the_lowercased_path_not_the_host() {
        let counts = scan(&[
            "https://dev.x.com/docs",    // the host is not the path
            "https://x.com/TEST/a",      // junk, in upper case
            "https://x.com/Admin",       // sign-in
            "https://x.com/docs?q=/dev", // a word after the path is not in the path
            "https://x.com/page12",      // a shape
            "https://x.com/LOGİN",       // lowercased as Python does: no `login`
            "HTTPS://x.com/plain",       // not clean, but its path holds no word
            "https://x.com/%6Cogin",     // an escape normalization may decode
            "https://x.com/a?ref=x",     // not clean, and no word
            "/relative",                 // resolved against a path not known here
        ]);
        assert_eq!(counts.junk, [1, 4]);
        assert_eq!(counts.auth, [2, 7, 9]);
    }

    #[test]
    fn a_path_without_a_leading_slash_is_read_segment_by_segment() {
        let counts = scan(&["mailto:promo1", "urn:x", "promo2", "a-2", "a"]);
        assert_eq!(counts.junk, [0, 2, 3, 4]);
        // `-3/1` would be a copy of `/1`, read without the leading `/` put there.
        let counts = scan(&["https://x.com/1", "mailto:-3/1", "https://x.com/2"]);
        assert_eq!(counts.junk, [0, 1]);
    }

    #[test]
    fn a_copy_brings_the_urls_it_could_be_a_copy_of() {
        let counts = scan(&[
            "https://x.com/about",
            "https://x.com/other",
            "https://x.com/about-2/",
            "https://x.com/ABOUT/?x",
            "https://x.com/about/more",
        ]);
        assert_eq!(counts.junk, [0, 2, 3]);
    }

    #[test]
    fn a_url_with_control_characters_has_every_row_judged() {
        let counts = scan(&["https://x.com/a", "https://x.com/b\tc", "https://x.com/d"]);
        assert_eq!(counts.junk, [0, 1, 2]);
        assert_eq!(counts.auth, [1]);
        let counts = report_urls(&[b"https://x.com/\xff", b"https://x.com/a"], &rules());
        assert_eq!((counts.junk, counts.auth), (vec![0, 1], vec![0]));
    }

    #[test]
    fn rules_that_do_not_compile_are_refused() {
        assert!(UrlRules::new(&[], &["(".to_owned()], None, &[]).is_err());
        let none = UrlRules::new(&[], &[], None, &[]).unwrap();
        let counts = report_urls(&[b"https://x.com/test"], &none);
        assert!(counts.junk.is_empty() && counts.auth.is_empty());
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
        rows.0[1].alternate = boxed_if_any(crate::batch::AlternateOf {
            hreflang: Some(Short::new("de")),
            page: Some("https://x.com/b/1".into()),
        });
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
