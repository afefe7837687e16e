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

use regex::Regex;
use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::{meta, Input, MatchKind, PatternID, PatternSet};

use crate::batch::Rows;
use crate::groups::{group_key, group_key_into, plain_parts, Plain, CAPITAL, PERCENT};
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

/// A lastmod's first 8 characters as the report counts them. Most are 8 ASCII bytes or fewer,
/// and those are packed into one number, compared and hashed as one where a text is a call to
/// `memcmp` (`report_counts` took 0.92x the time, in process); the rest are the text itself.
/// A head is always the one or the other, so equal heads are equal keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Head<'a> {
    /// The bytes from the lowest up, the unused ones 0xFF (never an ASCII byte).
    Packed(u64),
    Text(&'a str),
}

impl<'a> Head<'a> {
    pub fn of(lastmod: &'a str) -> Head<'a> {
        // ASCII up to the 8th byte: those bytes are the first 8 characters.
        let ascii = &lastmod.as_bytes()[..lastmod.len().min(8)];
        if ascii.is_ascii() {
            let mut bytes = [0xFF; 8];
            bytes[..ascii.len()].copy_from_slice(ascii);
            Head::Packed(u64::from_le_bytes(bytes))
        } else {
            Head::Text(head(lastmod, 8))
        }
    }

    pub fn text(&self) -> std::borrow::Cow<'a, str> {
        match *self {
            Head::Packed(packed) => {
                let bytes = packed.to_le_bytes();
                let len = bytes.iter().position(|&b| b == 0xFF).unwrap_or(8);
                String::from_utf8_lossy(&bytes[..len]).into_owned().into()
            }
            Head::Text(text) => text.into(),
        }
    }
}

/// A batch's rows as the report counts them.
#[derive(Debug, Default)]
pub struct ReportCounts<'a> {
    /// The first 8 characters of each row's lastmod ("" without one): a month and what follows.
    pub lastmods: Tally<Head<'a>>,
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
            .add(Head::of(row.entry.lastmod.as_deref().unwrap_or("")));
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
    /// copy suffix, the junk shapes, the sign-in words; `junk_in_all` and `auth_in_all` pick
    /// the answers out of what it finds. Nearly every path matches none, and one scan costs
    /// less than four searches. Without a prefilter: the rules' literals (`/`, `-`) are on
    /// every path, and restarting at each took `report_urls` 1.13x the time (in process).
    all: meta::Regex,
    /// Whether any rule matches at all, as a DFA compiled once: a path none matches (nearly
    /// every one) is read at a table lookup per byte, where `all` builds its states as it goes
    /// (`report_urls` took 0.89x the time). None when a rule needs what such a DFA cannot do (a
    /// Unicode word boundary); `all` then reads every path.
    any: Option<dense::DFA<Vec<u32>>>,
    junk_in_all: Vec<PatternID>,
    auth_in_all: Option<PatternID>,
}

/// The most memory the rules' DFA may take, and take to build.
const DFA_LIMIT: usize = 4 << 20;

/// A rule the core cannot read.
pub type RuleError = Box<dyn std::error::Error + Send + Sync>;

impl UrlRules {
    /// The rules from the report's words and regexes (Python syntax that the `regex` crate reads
    /// alike: classes, counted repeats, `(?:...)`, `$`); an error names a pattern it cannot read.
    pub fn new(
        junk_words: &[String],
        junk_patterns: &[String],
        copy_pattern: Option<&str>,
        auth_words: &[String],
    ) -> Result<UrlRules, RuleError> {
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
            junk_in_all.push(PatternID::new(patterns.len())?);
            patterns.push(rule.as_str());
        }
        let auth_in_all = match &auth {
            Some(rule) => {
                patterns.push(rule.as_str());
                Some(PatternID::new(patterns.len() - 1)?)
            }
            None => None,
        };
        let all = meta::Builder::new()
            .configure(
                meta::Config::new()
                    .match_kind(MatchKind::All)
                    .auto_prefilter(false),
            )
            .build_many(&patterns)?;
        // The rules are ours and small (the DFA is tens of KiB); a bound keeps a future rule
        // that would blow up in determinizing on the general search instead.
        let any = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .start_kind(StartKind::Unanchored)
                    .dfa_size_limit(Some(DFA_LIMIT))
                    .determinize_size_limit(Some(DFA_LIMIT)),
            )
            .build_many(&patterns)
            .ok();
        Ok(UrlRules {
            copy,
            auth,
            all,
            any,
            junk_in_all,
            auth_in_all,
        })
    }

    /// Whether a junk row could match a (lowercased) path, and whether a sign-in word is in it;
    /// `found` is room for the answer, reused from path to path.
    fn junk_and_auth(&self, path: &str, found: &mut PatternSet) -> (bool, bool) {
        let input = Input::new(path);
        if let Some(any) = &self.any {
            if let Ok(None) = any.try_search_fwd(&input.clone().earliest(true)) {
                return (false, false);
            }
        }
        found.clear();
        self.all.which_overlapping_matches(&input, found);
        let junk = self.junk_in_all.iter().any(|&i| found.contains(i));
        (junk, self.auth_in_all.is_some_and(|i| found.contains(i)))
    }

    /// Room for `junk_and_auth`'s answer.
    fn pattern_set(&self) -> PatternSet {
        PatternSet::new(self.all.pattern_len())
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
/// (A plain URL's usual path is read as it is: `Plain::junk_path`.)
fn junk_path<'b>(path: &'b [u8], buf: &'b mut String) -> Option<(&'b str, bool)> {
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

/// What the report reads of a plain URL beyond its group.
impl Plain<'_> {
    /// The path as `junk_path` would give it, read as it is: led by `/`, no capital (and plain,
    /// as the whole URL is).
    fn junk_path(&self) -> Option<&str> {
        if self.path.first() == Some(&b'/') && self.path_classes & CAPITAL == 0 {
            std::str::from_utf8(self.path).ok()
        } else {
            None
        }
    }

    /// `may_gain_a_word` of this URL: never without an escape in its path or a backslash.
    fn may_gain_a_word(&self, url: &[u8]) -> bool {
        (self.path_classes & PERCENT != 0 || self.backslash) && may_gain_a_word(url, self.path)
    }
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
    let mut found = rules.pattern_set();
    for (row, url) in urls.iter().enumerate() {
        let plain = plain_parts(url);
        let grouped = match plain {
            Some(plain) => plain.group_key_into(2, &mut key),
            None => group_key_into(url, 2, &mut key),
        };
        if grouped {
            counts.places.add_ref(&key[..]);
        } else {
            counts.other += 1;
        }

        // `junk_filter` reads the path of the URL as given.
        let read = match plain.as_ref().and_then(Plain::junk_path) {
            Some(text) => Some((text, false)),
            None => junk_path(plain.map_or_else(|| path_of(url), |p| p.path), &mut buf),
        };
        match read {
            None => {
                junk[row] = true;
                whole = true;
            }
            Some((text, led)) => {
                let (is_junk, is_auth) = rules.junk_and_auth(text, &mut found);
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
            Some(plain) => plain.may_gain_a_word(url),
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
    fn a_head_is_the_first_8_characters_and_equal_heads_are_equal_keys() {
        let texts = [
            "",
            "2024",
            "2024-01-",
            "2024-01-05",
            "2024-01-06T10:00Z",
            "Fri, 05 Jan 2024",
            "é2024-01-05",
            "2024-01-é",
            "2024-01\u{ff}",
            "ÿÿÿÿÿÿÿÿÿ",
        ];
        for a in texts {
            let chars: String = a.chars().take(8).collect();
            assert_eq!(Head::of(a).text(), chars, "{a:?}");
            for b in texts {
                let same = chars == b.chars().take(8).collect::<String>();
                assert_eq!(Head::of(a) == Head::of(b), same, "{a:?} {b:?}");
            }
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
    fn a_rule_no_compiled_dfa_can_hold_is_still_searched() {
        // A Unicode word boundary: the rules are read without the quick DFA.
        let shapes = ["\\bpromo[0-9]\\b".to_owned()];
        let bounded = UrlRules::new(&[], &shapes, None, &["login".to_owned()]).unwrap();
        assert!(bounded.any.is_none());
        assert!(rules().any.is_some());
        // So does a set of rules whose DFA would be too big.
        let huge = ["a[ab]{24}".to_owned()];
        assert!(UrlRules::new(&[], &huge, None, &[]).unwrap().any.is_none());
        let counts = report_urls(
            &[
                b"https://x.com/a",
                b"https://x.com/promo1",
                b"https://x.com/x/login",
                b"https://x.com/\xc3\xa4promo1",
            ],
            &bounded,
        );
        assert_eq!((counts.junk, counts.auth), (vec![1], vec![2]));
    }

    #[test]
    fn the_quick_dfa_and_the_full_search_agree() {
        let rules = rules();
        let mut found = rules.pattern_set();
        for path in [
            "/a",
            "/test",
            "/x/page12",
            "/a-2",
            "/b-3/",
            "/admin",
            "/é/login",
            "/dev",
        ] {
            let quick = rules.junk_and_auth(path, &mut found);
            found.clear();
            rules
                .all
                .which_overlapping_matches(&Input::new(path), &mut found);
            assert_eq!(quick.0 || quick.1, !found.is_empty(), "{path}");
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
        rows.0[1].alternate = boxed_if_any(crate::batch::AlternateOf {
            hreflang: Some(Short::new("de")),
            page: Some("https://x.com/b/1".into()),
        });
        let counts = report_counts(&rows);
        let heads: Vec<_> = counts
            .lastmods
            .counts
            .iter()
            .map(|(head, n)| (head.text().into_owned(), *n))
            .collect();
        let head = |text: &str, n: usize| (text.to_owned(), n);
        assert_eq!(
            heads,
            [head("2024-01-", 2), head("", 1), head("2023-12-", 1)]
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
