//! Path groups (§9): the group of a URL, and a batch's URLs counted per group. This was
//! `sitescout._groups.group_key`, which now calls it; the frozen Python copy is the oracle in
//! `tests/reference/groups.py`.
//!
//! * `group_key`: the URL as `str.strip()` and then `urllib.parse.urlsplit` read it; an http(s)
//!   URL with a host and a port that is a number up to 65535 is in `/seg/*` of its first
//!   `depth` non-empty path segments (joined by `/`), or in `/` when it has none. Anything else
//!   (where urlsplit raises, another scheme, no host) is in no group: the caller's `other`.
//! * `count_groups`: per group of a batch, in the order the groups first appear, its URL count
//!   and its `limit` shortest URLs (shorter first, then by text, as Python orders `(len(url),
//!   url)`), so a caller merges a batch in time per group rather than per URL.
//!
//! Text is WTF-8 (a Python str with lone surrogates crosses as its `surrogatepass` bytes).
#![forbid(unsafe_code)]

use std::collections::HashMap;

use crate::urls::{py_strip_bytes, with_split};

/// What one pass over a URL's bytes tells (a byte's bits in `CLASSES`): here, whether it is
/// plain; to the report (`report_urls`), what its rules need.
const NOT_PLAIN: u8 = 1; // outside printable ASCII without the space (0x21..=0x7e)
pub(crate) const CAPITAL: u8 = 2;
pub(crate) const PERCENT: u8 = 4;
const BACKSLASH: u8 = 8;
const BRACKET: u8 = 16;
const AT_OR_COLON: u8 = 32;

const fn byte_classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        table[c] = if b < 0x21 || b > 0x7e {
            NOT_PLAIN
        } else if b.is_ascii_uppercase() {
            CAPITAL
        } else {
            match b {
                b'%' => PERCENT,
                b'\\' => BACKSLASH,
                b'[' | b']' => BRACKET,
                b'@' | b':' => AT_OR_COLON,
                _ => 0,
            }
        };
        c += 1;
    }
    table
}

static CLASSES: [u8; 256] = byte_classes();

/// The classes of all of `bytes`, or-ed: a table lookup per byte, no branch.
fn classes_of(bytes: &[u8]) -> u8 {
    bytes
        .iter()
        .fold(0, |found, &c| found | CLASSES[usize::from(c)])
}

/// A URL as a walk yields them, cut as `plain_parts` cuts it.
#[derive(Clone, Copy)]
pub(crate) struct Plain<'u> {
    netloc: &'u [u8],
    pub path: &'u [u8],
    /// The classes of the netloc's bytes, and of the path's.
    netloc_classes: u8,
    pub path_classes: u8,
    /// Whether the URL holds a backslash anywhere.
    pub backslash: bool,
}

/// A URL as a walk yields them: printable ASCII, `http://` or `https://`, no bracket in its
/// authority. `str.strip` leaves such a URL as it is, and urlsplit and `_urls._parts` cut it
/// alike: its `(netloc, path)`.
pub(crate) fn plain_parts(url: &[u8]) -> Option<Plain<'_>> {
    let rest = url
        .strip_prefix(b"https://")
        .or_else(|| url.strip_prefix(b"http://"))?;
    let (netloc, rest) =
        rest.split_at(memchr::memchr3(b'/', b'?', b'#', rest).unwrap_or(rest.len()));
    let (path, tail) = rest.split_at(memchr::memchr2(b'?', b'#', rest).unwrap_or(rest.len()));
    let netloc_classes = classes_of(netloc);
    let path_classes = classes_of(path);
    let all = netloc_classes | path_classes | classes_of(tail);
    if all & NOT_PLAIN != 0 || netloc_classes & BRACKET != 0 {
        return None;
    }
    Some(Plain {
        netloc,
        path,
        netloc_classes,
        path_classes,
        backslash: all & BACKSLASH != 0,
    })
}

impl Plain<'_> {
    /// `host_and_port_ok` of the netloc; without `@` or `:` in it, the host is all of it.
    fn host_and_port_ok(&self) -> bool {
        if self.netloc_classes & AT_OR_COLON == 0 {
            !self.netloc.is_empty()
        } else {
            host_and_port_ok(self.netloc)
        }
    }

    /// `group_key_into` of the URL.
    pub fn group_key_into(&self, depth: usize, key: &mut Vec<u8>) -> bool {
        key.clear();
        self.host_and_port_ok() && {
            path_key_into(self.path, depth, key);
            true
        }
    }
}

/// Write the group of `url` into `key` (cleared first); false, with `key` empty, when the URL
/// is in no group. A plain URL (`plain_parts`), nearly every one a walk yields, is cut without
/// the general split.
pub fn group_key_into(url: &[u8], depth: usize, key: &mut Vec<u8>) -> bool {
    if let Some(plain) = plain_parts(url) {
        return plain.group_key_into(depth, key);
    }
    key.clear();
    with_split(py_strip_bytes(url), |parts| {
        let Some((Some(scheme), netloc, path)) = parts else {
            return false;
        };
        if !(scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https")) {
            return false;
        }
        if !host_and_port_ok(netloc) {
            return false;
        }
        path_key_into(path, depth, key);
        true
    })
}

/// The group of a URL whose path (as urlsplit reads it) is `path`, into `key` (cleared first).
pub fn path_key_into(path: &[u8], depth: usize, key: &mut Vec<u8>) {
    key.clear();
    for segment in path
        .split(|&c| c == b'/')
        .filter(|s| !s.is_empty())
        .take(depth)
    {
        key.push(b'/');
        key.extend_from_slice(segment);
    }
    if key.is_empty() {
        key.push(b'/');
    } else {
        key.extend_from_slice(b"/*");
    }
}

/// The group of `url`: `/seg/*`, `/`, or None.
pub fn group_key(url: &[u8], depth: usize) -> Option<Vec<u8>> {
    let mut key = Vec::new();
    group_key_into(url, depth, &mut key).then_some(key)
}

/// What urlsplit's `hostname` and `port` ask of the netloc: a non-empty host (after the last
/// `@`; inside the brackets when there are some), and a port, if any, of ASCII digits up to
/// 65535.
pub(crate) fn host_and_port_ok(netloc: &[u8]) -> bool {
    let hostinfo = match memchr::memrchr(b'@', netloc) {
        Some(at) => &netloc[at + 1..],
        None => netloc,
    };
    let (host, port) = match memchr::memchr(b'[', hostinfo) {
        Some(open) => {
            let bracketed = &hostinfo[open + 1..];
            match memchr::memchr(b']', bracketed) {
                Some(close) => {
                    let after = &bracketed[close + 1..];
                    let port = memchr::memchr(b':', after).map_or(&b""[..], |c| &after[c + 1..]);
                    (&bracketed[..close], port)
                }
                None => (bracketed, &b""[..]),
            }
        }
        None => match memchr::memchr(b':', hostinfo) {
            Some(colon) => (&hostinfo[..colon], &hostinfo[colon + 1..]),
            None => (hostinfo, &b""[..]),
        },
    };
    port_ok(port) && !host.is_empty()
}

fn port_ok(port: &[u8]) -> bool {
    if port.is_empty() {
        return true; // no port
    }
    if !port.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let digits = &port[port.iter().take_while(|&&c| c == b'0').count()..];
    digits.len() <= 5
        && digits
            .iter()
            .fold(0u32, |n, &c| n * 10 + u32::from(c - b'0'))
            <= 65535
}

/// Python's `len(url)` of a UTF-8 str: code points, not bytes.
fn py_len(url: &str) -> usize {
    if url.is_ascii() {
        url.len()
    } else {
        url.chars().count()
    }
}

/// One group of a batch: its key (None: in no group), its URL count and its shortest URLs.
#[derive(Debug, PartialEq, Eq)]
pub struct BatchGroup<'a> {
    pub key: Option<Vec<u8>>,
    pub count: usize,
    samples: Vec<(usize, &'a str)>,
}

impl<'a> BatchGroup<'a> {
    fn new(key: Option<Vec<u8>>) -> Self {
        BatchGroup {
            key,
            count: 0,
            samples: Vec::new(),
        }
    }

    /// The kept URLs, shortest first.
    pub fn samples(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.samples.iter().map(|&(_, url)| url)
    }

    /// Python's `keep_shortest`: take `url` if it is among the `limit` first in (length,
    /// text) order, no URL twice; the one it displaces goes.
    fn keep(&mut self, url: &'a str, limit: usize) {
        let item = (py_len(url), url);
        let samples = &mut self.samples;
        if samples.len() >= limit && samples.last().is_none_or(|last| item >= *last) {
            return;
        }
        let Err(at) = samples.binary_search(&item) else {
            return; // already kept
        };
        if samples.len() >= limit {
            samples.pop();
        }
        samples.insert(at, item);
    }
}

/// The groups of `urls` at `depth`, in the order they first appear, each with its count and
/// its `limit` shortest distinct URLs.
pub fn count_groups<'a>(
    urls: impl IntoIterator<Item = &'a str>,
    depth: usize,
    limit: usize,
) -> Vec<BatchGroup<'a>> {
    let mut groups: Vec<BatchGroup<'a>> = Vec::new();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut other: Option<usize> = None;
    let mut key = Vec::new();
    let mut last: Option<usize> = None;
    for url in urls {
        let at = if group_key_into(url.as_bytes(), depth, &mut key) {
            // Neighbouring URLs mostly share a group: no hash for those.
            let same = last.filter(|&at| groups[at].key.as_deref() == Some(key.as_slice()));
            match same.or_else(|| index.get(key.as_slice()).copied()) {
                Some(at) => at,
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push(BatchGroup::new(Some(key.clone())));
                    groups.len() - 1
                }
            }
        } else {
            *other.get_or_insert_with(|| {
                groups.push(BatchGroup::new(None));
                groups.len() - 1
            })
        };
        last = Some(at);
        let group = &mut groups[at];
        group.count += 1;
        group.keep(url, limit);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(url: &str, depth: usize) -> Option<String> {
        group_key(url.as_bytes(), depth).map(|k| String::from_utf8(k).unwrap())
    }

    #[test]
    fn keys_follow_the_first_segments() {
        assert_eq!(
            key("https://a.example/blog/x", 1).as_deref(),
            Some("/blog/*")
        );
        assert_eq!(
            key("https://a.example/docs/api/x", 2).as_deref(),
            Some("/docs/api/*")
        );
        assert_eq!(
            key("https://a.example//docs//", 2).as_deref(),
            Some("/docs/*")
        );
        assert_eq!(key("HTTP://a.example", 1).as_deref(), Some("/"));
        assert_eq!(key("https://a.example/?q=/x", 1).as_deref(), Some("/"));
        assert_eq!(
            key(" \u{3000}https://a.example/b \n", 1).as_deref(),
            Some("/b/*")
        );
        assert_eq!(key("https://a.example/b\t/c", 1).as_deref(), Some("/b/*"));
        assert_eq!(key("https://[::1]:8080/x", 1).as_deref(), Some("/x/*"));
        assert_eq!(
            key("https://a.example:00000000443/x", 1).as_deref(),
            Some("/x/*")
        );
    }

    #[test]
    fn urls_urlsplit_refuses_are_in_no_group() {
        for url in [
            "ftp://a.example/x",
            "/blog/x",
            "https:///x",
            "https://user@/x",
            "https://a.example:65536/x",
            "https://a.example:8o/x",
            "https://a.example:+80/x",
            "https://[::1/x",
            "https://[nope]/x",
            "https://[127.0.0.1]/x",
            "https://a\u{2100}b/x",
            "1http://a.example/x",
        ] {
            assert_eq!(key(url, 1), None, "{url}");
        }
        assert_eq!(key("https://a.example:/x", 1).as_deref(), Some("/x/*"));
    }

    #[test]
    fn a_batch_counts_each_group_once_with_its_shortest_urls() {
        let urls = [
            "https://a.example/b/long-one",
            "mailto:x",
            "https://a.example/b/",
            "https://a.example/c/1",
            "https://a.example/b/",
            "https://a.example/b/zz",
            "https://a.example/b/aa",
        ];
        let groups = count_groups(urls, 1, 2);
        let keys: Vec<_> = groups.iter().map(|g| g.key.clone()).collect();
        assert_eq!(keys, [Some(b"/b/*".to_vec()), None, Some(b"/c/*".to_vec())]);
        assert_eq!(groups[0].count, 5);
        assert_eq!(
            groups[0].samples().collect::<Vec<_>>(),
            ["https://a.example/b/", "https://a.example/b/aa"]
        );
        assert_eq!(groups[1].count, 1);
    }

    #[test]
    fn sample_length_counts_code_points() {
        // Two bytes per `é`: by bytes the first would be longer than the second.
        let groups = count_groups(["https://a.example/b/éé", "https://a.example/b/abc"], 1, 1);
        assert_eq!(
            groups[0].samples().collect::<Vec<_>>(),
            ["https://a.example/b/éé"]
        );
    }
}
