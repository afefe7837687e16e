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

/// Write the group of `url` into `key` (cleared first); false, with `key` empty, when the URL
/// is in no group.
pub fn group_key_into(url: &[u8], depth: usize, key: &mut Vec<u8>) -> bool {
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
    for url in urls {
        let at = if group_key_into(url.as_bytes(), depth, &mut key) {
            match index.get(key.as_slice()) {
                Some(&at) => at,
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
