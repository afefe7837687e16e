//! Base-path scope (§7, §8): whether a page URL is the walk's site's, and whether it lies under
//! the walk's base path. These were `sitescout._urls.site_key` and `sitescout._locale.under_prefix`,
//! which now call them; the frozen Python copies are the oracle in `tests/reference/scope.py`.
//!
//! * `site_key`: RFC 3986 appendix B's split (every string splits), the `host:port` after the
//!   netloc's last `@` lowercased as Python's `str.lower()` does it, a bracketed host kept whole
//!   (a missing `]` added), the scheme's default port dropped, then the host's trailing dots and
//!   one leading `www.` dropped. The scheme is otherwise ignored: `http://` and `https://` URLs
//!   of one host are one site.
//! * `under_prefix`: the path as `urllib.parse.urlsplit` reads it (empty where it raises) is the
//!   prefix without its trailing slashes or lies below it, a whole segment at a time; case
//!   counts; an empty prefix holds everything.
//!
//! Text is WTF-8 (a Python str with lone surrogates crosses as its `surrogatepass` bytes), so
//! that the Python helpers never raise; batch rows are plain UTF-8.
#![forbid(unsafe_code)]

use std::borrow::Cow;

use crate::urls::{code_point_at, split_path};

/// Python's `str.lower()` on WTF-8 text that is not all ASCII. The glue asks CPython, whose
/// Unicode tables (and final-sigma rule) then decide; `RustLower` serves without Python.
pub trait Lower {
    fn lower(&mut self, text: &[u8]) -> Vec<u8>;
}

/// Rust's own lowercasing: CPython's but for case data newer than its Unicode 14, and lone
/// surrogates (kept as they are, as CPython keeps them). For tests and pure-Rust callers.
pub struct RustLower;

impl Lower for RustLower {
    fn lower(&mut self, text: &[u8]) -> Vec<u8> {
        match std::str::from_utf8(text) {
            Ok(text) => text.to_lowercase().into_bytes(),
            Err(_) => text.to_vec(),
        }
    }
}

/// `text.lower()`: ASCII here, borrowed when nothing changes; anything else by `lower`.
fn py_lower<'a>(text: &'a [u8], lower: &mut dyn Lower) -> Cow<'a, [u8]> {
    if !text.is_ascii() {
        Cow::Owned(lower.lower(text))
    } else if text.iter().any(u8::is_ascii_uppercase) {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// RFC 3986 appendix B, `(?:([^:/?#]+):)?(?://([^/?#]*))?`: the scheme and the authority.
fn scheme_and_netloc(url: &[u8]) -> (&[u8], &[u8]) {
    let (scheme, rest) = match url
        .iter()
        .position(|c| matches!(c, b':' | b'/' | b'?' | b'#'))
    {
        Some(i) if i > 0 && url[i] == b':' => (&url[..i], &url[i + 1..]),
        _ => (&b""[..], url),
    };
    let netloc = match rest.strip_prefix(b"//") {
        Some(after) => {
            let end = after
                .iter()
                .position(|c| matches!(c, b'/' | b'?' | b'#'))
                .unwrap_or(after.len());
            &after[..end]
        }
        None => b"",
    };
    (scheme, netloc)
}

/// A site key as slices of the lowercased `host:port`: `host` (then `]` when `close`), `port`.
struct Key<'a> {
    host: &'a [u8],
    close: bool,
    port: &'a [u8],
}

impl Key<'_> {
    fn host_is(&self, host: &[u8]) -> bool {
        if self.close {
            host.len() == self.host.len() + 1 && host.starts_with(self.host) && host.ends_with(b"]")
        } else {
            host == self.host
        }
    }
}

/// The key of a lowercased `host:port` of a URL with this scheme.
fn key_of<'a>(scheme: &[u8], hostport: &'a [u8]) -> Key<'a> {
    let (host, close, port): (&[u8], bool, &[u8]) = if hostport.first() == Some(&b'[') {
        match memchr::memchr(b']', hostport) {
            Some(end) => {
                // `port[1:]`: the character after the `]` goes, whatever it is.
                let after = &hostport[end + 1..];
                let skip = if after.is_empty() {
                    0
                } else {
                    code_point_at(after, 0).1.min(after.len())
                };
                (&hostport[..=end], false, &after[skip..])
            }
            None => (hostport, true, b""),
        }
    } else {
        match memchr::memchr(b':', hostport) {
            Some(colon) => (&hostport[..colon], false, &hostport[colon + 1..]),
            None => (hostport, false, b""),
        }
    };
    let default: Option<&[u8]> = if scheme.eq_ignore_ascii_case(b"http") {
        Some(b"80")
    } else if scheme.eq_ignore_ascii_case(b"https") {
        Some(b"443")
    } else {
        None
    };
    let port = if Some(port) == default {
        &b""[..]
    } else {
        port
    };
    // Trailing dots, then one `www.` (a bracketed host has neither: it ends with `]`).
    let end = host.iter().rposition(|&c| c != b'.').map_or(0, |i| i + 1);
    let host = if close { host } else { &host[..end] };
    let host = host.strip_prefix(b"www.").unwrap_or(host);
    Key { host, close, port }
}

/// The lowercased `host:port` of a URL: after the netloc's last `@`.
fn hostport<'a>(url: &'a [u8], lower: &mut dyn Lower) -> (&'a [u8], Cow<'a, [u8]>) {
    let (scheme, netloc) = scheme_and_netloc(url);
    let hostport = match memchr::memrchr(b'@', netloc) {
        Some(at) => &netloc[at + 1..],
        None => netloc,
    };
    (scheme, py_lower(hostport, lower))
}

/// Same-site identity of a URL (§8): (host without trailing dots and one `www.`, port unless
/// it is the scheme's default).
pub fn site_key(url: &[u8], lower: &mut dyn Lower) -> (Vec<u8>, Vec<u8>) {
    let (scheme, hostport) = hostport(url, lower);
    let key = key_of(scheme, &hostport);
    let mut host = key.host.to_vec();
    if key.close {
        host.push(b']');
    }
    (host, key.port.to_vec())
}

/// A prefix without its trailing slashes (`/en-us/docs/` → `/en-us/docs`; `/` → empty).
fn bare(prefix: &[u8]) -> &[u8] {
    let end = prefix.iter().rposition(|&c| c != b'/').map_or(0, |i| i + 1);
    &prefix[..end]
}

/// Whether `path` is `bare` or lies below it, a whole segment at a time.
fn path_under(path: &[u8], bare: &[u8]) -> bool {
    path.starts_with(bare) && (path.len() == bare.len() || path[bare.len()] == b'/')
}

/// Whether a URL (or a bare path) lies under `prefix`: `/en-us/docs/` covers `/en-us/docs`,
/// `/en-us/docs/` and `/en-us/docs/x`, not `/en-us/docsx`. Path case counts.
pub fn under_prefix(url: &[u8], prefix: &[u8]) -> bool {
    let bare = bare(prefix);
    bare.is_empty() || path_under(&split_path(url), bare)
}

/// Where a page URL stands with respect to a walk's scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Another site's (not counted by the narrow-prefix warning).
    OtherSite,
    /// The site's, outside the base path.
    Outside,
    /// The site's, under the base path.
    Under,
}

/// A walk's scope: its site's key (as `site_key` gives it) and its base path.
pub struct Scope {
    host: Vec<u8>,
    port: Vec<u8>,
    bare: Vec<u8>,
}

impl Scope {
    pub fn new(host: &[u8], port: &[u8], prefix: &[u8]) -> Scope {
        Scope {
            host: host.to_vec(),
            port: port.to_vec(),
            bare: bare(prefix).to_vec(),
        }
    }

    pub fn place(&self, url: &[u8], lower: &mut dyn Lower) -> Place {
        let (scheme, hostport) = hostport(url, lower);
        let key = key_of(scheme, &hostport);
        if key.port != self.port || !key.host_is(&self.host) {
            Place::OtherSite
        } else if self.bare.is_empty() || path_under(&split_path(url), &self.bare) {
            Place::Under
        } else {
            Place::Outside
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(url: &str) -> (String, String) {
        let (host, port) = site_key(url.as_bytes(), &mut RustLower);
        (
            String::from_utf8(host).unwrap(),
            String::from_utf8(port).unwrap(),
        )
    }

    #[test]
    fn site_keys() {
        let cases = [
            ("https://www.Example.COM./a", "example.com", ""),
            ("http://example.com:80/", "example.com", ""),
            ("https://example.com:80/", "example.com", "80"),
            ("HTTPS://example.com:443", "example.com", ""),
            ("ftp://example.com:21/", "example.com", "21"),
            ("https://u:p@www.www.ex.com:8443/x", "www.ex.com", "8443"),
            ("https://a@b@ex.com/", "ex.com", ""),
            ("https://[::1]:8080/", "[::1]", "8080"),
            ("https://[::1]x80/", "[::1]", "80"),
            ("https://[::1]/", "[::1]", ""),
            ("https://[::1/", "[::1]", ""),
            ("https://[::1]\u{e9}9/", "[::1]", "9"),
            ("https://ex.com.:/", "ex.com", ""),
            ("https://...:8/", "", "8"),
            ("https://www./", "www", ""),
            ("https://WWW.\u{212a}.com/", "k.com", ""),
            ("//ex.com/a", "ex.com", ""),
            ("/a/b", "", ""),
            ("mailto:x@ex.com", "", ""),
            ("1http://ex.com/", "ex.com", ""),
            (":http://ex.com/", "", ""),
            ("", "", ""),
        ];
        for (url, host, port) in cases {
            assert_eq!(key(url), (host.to_owned(), port.to_owned()), "{url:?}");
        }
    }

    #[test]
    fn prefixes() {
        let p = b"/en-us/docs/";
        for (url, under) in [
            ("https://x.com/en-us/docs", true),
            ("https://x.com/en-us/docs/", true),
            ("https://x.com/en-us/docs/x?q#f", true),
            ("/en-us/docs/x/y?q=1", true),
            ("https://x.com/en-us/docsx", false),
            ("https://x.com/en-us/", false),
            ("https://x.com/EN-US/docs/", false),
            ("https://x.com/en-us/d\tocs/", true),
            ("https://[x.com/en-us/docs/", false),
            ("  https://x.com/en-us/docs", true),
        ] {
            assert_eq!(under_prefix(url.as_bytes(), p), under, "{url:?}");
            assert_eq!(
                under_prefix(url.as_bytes(), b"/en-us/docs"),
                under,
                "{url:?}"
            );
        }
        assert!(under_prefix(b"https://[x.com/", b"/"));
        assert!(under_prefix(b"", b"///"));
    }

    #[test]
    fn places() {
        let scope = Scope::new(b"example.com", b"", b"/docs/");
        let place = |url: &str| scope.place(url.as_bytes(), &mut RustLower);
        assert_eq!(place("https://www.example.com/docs/a"), Place::Under);
        assert_eq!(place("http://EXAMPLE.com:80/docs"), Place::Under);
        assert_eq!(place("https://example.com/blog"), Place::Outside);
        assert_eq!(place("https://example.com:8443/docs/a"), Place::OtherSite);
        assert_eq!(place("https://other.com/docs/a"), Place::OtherSite);
        let scope = Scope::new(b"[::1]", b"", b"/");
        assert_eq!(scope.place(b"https://[::1/x", &mut RustLower), Place::Under);
        assert_eq!(
            scope.place(b"https://[::2]/x", &mut RustLower),
            Place::OtherSite
        );
    }
}
