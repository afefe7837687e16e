//! The URL rules: the clean check, resolution and normalization, exact to the pure-Python rules
//! they replace (kept as the oracle in `tests/reference/urls.py`; the rules themselves are stated
//! in `sitescout._urls`'s module docstring).
//!
//! The clean check runs on every URL of a walk and most sitemap URLs pass it, so it is a
//! table-driven byte scanner that never allocates. Everything else is the slow path: it follows
//! CPython 3.11's `urllib.parse.urlsplit`/`urljoin` and `ipaddress.IPv6Address` step by step,
//! quirks included, because a URL that resolves differently is a different page to the caller.
#![forbid(unsafe_code)]

use std::borrow::Cow;

/// Maps a host that contains non-ASCII characters to what Python makes of it:
/// `h = host.lower(); h if h.isascii() else h.encode("idna").decode("ascii").lower()`, or None
/// when that raises. The lowercasing is part of the contract because Python's Unicode tables
/// decide it (the Kelvin sign lowercases to ASCII `k` and then needs no IDNA at all).
/// The Python glue implements it with CPython itself; pure-Rust callers may use `NoIdna`.
pub trait Idna {
    fn to_ascii(&mut self, host: &str) -> Option<String>;

    /// The same for a host in WTF-8 (a Python str with lone surrogates, encoded with
    /// `surrogatepass`). Python's IDNA codec rejects every surrogate, so only valid UTF-8 can
    /// have an ASCII form.
    fn to_ascii_wtf8(&mut self, host: &[u8]) -> Option<String> {
        self.to_ascii(std::str::from_utf8(host).ok()?)
    }
}

/// Rejects every non-ASCII host (no IDNA codec available).
pub struct NoIdna;

impl Idna for NoIdna {
    fn to_ascii(&mut self, _host: &str) -> Option<String> {
        None
    }
}

// --------------------------------------------------------------------------- byte classes

const HOST: u8 = 1; // [a-z0-9_-]
const PATH: u8 = 2; // [A-Za-z0-9\-._~!$&'()*+,;=:@/]
const QUERY: u8 = 4; // PATH plus ?[]|^
const UPPER_HEX: u8 = 8; // [0-9A-F]
const UNRESERVED: u8 = 16; // [A-Za-z0-9\-._~]
const HEX: u8 = 32; // [0-9A-Fa-f]
const PATH_SAFE: u8 = 64; // \x21-\x7e except "<>`{}
const QUERY_SAFE: u8 = 128; // \x21-\x7e except "<>`

const fn classes() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let mut flags = 0u8;
        let alpha = c.is_ascii_alphabetic();
        let digit = c.is_ascii_digit();
        if c.is_ascii_lowercase() || digit || c == b'_' || c == b'-' {
            flags |= HOST;
        }
        let sub_delim = matches!(
            c,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
                | b':'
                | b'@'
                | b'/'
        );
        if alpha || digit || sub_delim {
            flags |= PATH | QUERY;
        }
        if matches!(c, b'?' | b'[' | b']' | b'|' | b'^') {
            flags |= QUERY;
        }
        if digit || matches!(c, b'A'..=b'F') {
            flags |= UPPER_HEX | HEX;
        }
        if matches!(c, b'a'..=b'f') {
            flags |= HEX;
        }
        if alpha || digit || matches!(c, b'-' | b'.' | b'_' | b'~') {
            flags |= UNRESERVED;
        }
        if c >= 0x21 && c <= 0x7e && !matches!(c, b'"' | b'<' | b'>' | b'`') {
            flags |= QUERY_SAFE;
            if !matches!(c, b'{' | b'}') {
                flags |= PATH_SAFE;
            }
        }
        table[i] = flags;
        i += 1;
    }
    table
}

static CLASS: [u8; 256] = classes();

/// 1 for a path byte the clean check passes without a second look: a `PATH` byte other than
/// `.` (which may start a dot segment); 0 for the rest.
static PLAIN_PATH: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        if CLASS[i] & PATH != 0 && i != b'.' as usize {
            table[i] = 1;
        }
        i += 1;
    }
    table
};

/// Whether each of the eight bytes is `PLAIN_PATH`: no branch per byte, so the compiler lays
/// the eight lookups out side by side.
#[inline(always)]
fn plain_path8(bytes: &[u8; 8]) -> bool {
    bytes
        .iter()
        .fold(1u8, |all, &c| all & PLAIN_PATH[c as usize])
        == 1
}

#[inline(always)]
fn has(byte: u8, flag: u8) -> bool {
    CLASS[byte as usize] & flag != 0
}

fn hex_value(byte: u8) -> u8 {
    match byte {
        b'0'..=b'9' => byte - b'0',
        b'a'..=b'f' => byte - b'a' + 10,
        _ => byte.wrapping_sub(b'A').wrapping_add(10),
    }
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

// --------------------------------------------------------------------------- whitespace

/// Python's `str.isspace()` for one code point (Unicode 14, as CPython 3.11 has it).
pub fn py_isspace(c: char) -> bool {
    is_space_code(c as u32)
}

fn is_space_code(c: u32) -> bool {
    matches!(
        c,
        0x09..=0x0d
            | 0x1c..=0x20
            | 0x85
            | 0xa0
            | 0x1680
            | 0x2000..=0x200a
            | 0x2028
            | 0x2029
            | 0x202f
            | 0x205f
            | 0x3000
    )
}

/// Python's `str.strip()`: not `str::trim`, which keeps `\x1c`-`\x1f`.
pub fn py_strip(s: &str) -> &str {
    // Nearly every value starts and ends with a visible ASCII character, which no Python
    // whitespace is: then there is nothing to strip, and no character needs decoding.
    let b = s.as_bytes();
    if b.first().is_some_and(u8::is_ascii_graphic) && b.last().is_some_and(u8::is_ascii_graphic) {
        return s;
    }
    s.trim_matches(py_isspace)
}

/// The code point starting at `b[i]` and its length, in UTF-8 extended to lone surrogates
/// (what Python's `surrogatepass` writes). Only whitespace and a few symbols are looked up this
/// way, so malformed bytes need no more than a result that is none of them.
pub(crate) fn code_point_at(b: &[u8], i: usize) -> (u32, usize) {
    let lead = b[i];
    let len = match lead {
        0x00..=0x7f => return (u32::from(lead), 1),
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return (u32::MAX, 1),
    };
    if i + len > b.len() {
        return (u32::MAX, 1);
    }
    let mut code = u32::from(lead) & (0x7f >> len);
    for &c in &b[i + 1..i + len] {
        if c & 0xc0 != 0x80 {
            return (u32::MAX, 1);
        }
        code = code << 6 | u32::from(c & 0x3f);
    }
    (code, len)
}

/// `py_strip` on WTF-8 bytes.
pub fn py_strip_bytes(b: &[u8]) -> &[u8] {
    let mut start = 0;
    while start < b.len() {
        let (code, len) = code_point_at(b, start);
        if !is_space_code(code) {
            break;
        }
        start += len;
    }
    let mut end = b.len();
    while end > start {
        let mut lead = end - 1;
        while lead > start && b[lead] & 0xc0 == 0x80 && end - lead < 4 {
            lead -= 1;
        }
        let (code, len) = code_point_at(b, lead);
        if lead + len != end || !is_space_code(code) {
            break;
        }
        end = lead;
    }
    &b[start..end]
}

fn find(haystack: &[u8], byte: u8) -> Option<usize> {
    memchr::memchr(byte, haystack)
}

fn split_once(b: &[u8], byte: u8) -> Option<(&[u8], &[u8])> {
    find(b, byte).map(|i| (&b[..i], &b[i + 1..]))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

fn to_string(bytes: Vec<u8>) -> String {
    // Valid UTF-8 in gives valid UTF-8 out: every cut is at an ASCII delimiter.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

// --------------------------------------------------------------------------- the clean check

/// Whether normalization would leave `url` unchanged and it is an absolute http(s) URL with a
/// valid host and port (the oracle's `_is_clean`). Allocation-free, one pass.
pub fn is_clean(url: &str) -> bool {
    is_clean_bytes(url.as_bytes())
}

/// `is_clean` on bytes (a clean URL is ASCII, so any encoding of the rest will do).
pub fn is_clean_bytes(b: &[u8]) -> bool {
    clean_authority(b).is_some_and(|i| clean_from_path(b, i))
}

/// `is_clean_bytes` over URLs that nearly all share their scheme, host and port, as a
/// sitemap's do: that part, once read clean, is compared with the next URL's start rather than
/// read again (each byte of the host was a table lookup and a branch).
#[derive(Debug, Default)]
pub struct CleanCheck {
    /// Scheme, host, port and the path's `/` of the last URL whose part before its path was
    /// clean; the check of a URL starting with these bytes goes the same way up to there.
    authority: Vec<u8>,
}

impl CleanCheck {
    pub fn is_clean(&mut self, b: &[u8]) -> bool {
        let i = if !self.authority.is_empty() && b.starts_with(&self.authority) {
            self.authority.len() - 1
        } else {
            let Some(i) = clean_authority(b) else {
                return false;
            };
            self.authority.clear();
            self.authority.extend_from_slice(&b[..=i]);
            i
        };
        clean_from_path(b, i)
    }
}

/// The clean check up to the path: where its `/` is, when scheme, host and port are clean.
fn clean_authority(b: &[u8]) -> Option<usize> {
    let n = b.len();
    let (https, mut i) = if b.starts_with(b"https://") {
        (true, 8)
    } else if b.starts_with(b"http://") {
        (false, 7)
    } else {
        return None;
    };
    // Host: non-empty labels separated by dots, one trailing dot allowed.
    loop {
        let start = i;
        while i < n && has(b[i], HOST) {
            i += 1;
        }
        if i == start {
            return None;
        }
        if i < n && b[i] == b'.' {
            i += 1;
            if i < n && has(b[i], HOST) {
                continue;
            }
        }
        break;
    }
    if i < n && b[i] == b':' {
        i += 1;
        let start = i;
        let mut port = 0u32;
        while i < n && b[i].is_ascii_digit() && i - start < 5 {
            port = port * 10 + u32::from(b[i] - b'0');
            i += 1;
        }
        if i == start || b[start] == b'0' || port > 65535 || port == if https { 443 } else { 80 } {
            return None;
        }
    }
    (i < n && b[i] == b'/').then_some(i)
}

/// The clean check from the path's `/` at `b[i]` on.
fn clean_from_path(b: &[u8], mut i: usize) -> bool {
    let n = b.len();
    i += 1;
    while i < n {
        if let Some(eight) = b.get(i..i + 8).and_then(|s| <&[u8; 8]>::try_from(s).ok()) {
            if plain_path8(eight) {
                i += 8;
                continue;
            }
        }
        let c = b[i];
        if has(c, PATH) {
            if c == b'.' && b[i - 1] == b'/' {
                return false; // a dot segment (or a name starting with one): the slow path decides
            }
            i += 1;
        } else if c == b'%' && kept_path_escape(b, i) {
            i += 3;
        } else {
            break;
        }
    }
    i == n || (b[i] == b'?' && clean_query(&b[i..]))
}

/// An escape the path normalization keeps as it is: uppercase hex of a byte that is not an
/// unreserved character (those get decoded).
#[inline]
fn kept_path_escape(b: &[u8], i: usize) -> bool {
    i + 2 < b.len()
        && has(b[i + 1], UPPER_HEX)
        && has(b[i + 2], UPPER_HEX)
        && !has(hex_value(b[i + 1]) << 4 | hex_value(b[i + 2]), UNRESERVED)
}

/// The query part of the clean check; `q` starts with its `?`.
fn clean_query(q: &[u8]) -> bool {
    let n = q.len();
    if n < 2 || q[1] == b'&' || q[n - 1] == b'&' {
        return false;
    }
    let mut i = 1;
    while i < n {
        let c = q[i];
        if has(c, QUERY) {
            i += 1;
        } else if c == b'%' && i + 2 < n && has(q[i + 1], UPPER_HEX) && has(q[i + 2], UPPER_HEX) {
            i += 3;
        } else {
            return false;
        }
    }
    // Any `?` or `&` may start a parameter name, as the oracle's search has it.
    for (j, &c) in q.iter().enumerate() {
        if c == b'&' && q.get(j + 1) == Some(&b'&') {
            return false;
        }
        if (c == b'?' || c == b'&') && tracking_at(&q[j + 1..]) {
            return false;
        }
    }
    true
}

fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Whether a tracking parameter name starts `rest` and ends at `=`, `&` or the end.
fn tracking_at(rest: &[u8]) -> bool {
    if starts_with_ignore_case(rest, b"utm_") || starts_with_ignore_case(rest, b"mc_") {
        return true;
    }
    for name in [&b"gclid"[..], b"fbclid", b"_ga", b"ref", b"source"] {
        if starts_with_ignore_case(rest, name) {
            match rest.get(name.len()) {
                None | Some(b'=') | Some(b'&') => return true,
                _ => {}
            }
        }
    }
    false
}

// --------------------------------------------------------------------------- resolution

/// `resolve_url`: the absolute http(s) URL `raw` names against `base`, not normalized; None
/// when the value cannot become one.
pub fn resolve(raw: &str, base: &str, idna: &mut dyn Idna) -> Option<String> {
    resolve_wtf8(raw.as_bytes(), base.as_bytes(), idna).map(to_string)
}

/// `resolve` on WTF-8: Python strs with lone surrogates, encoded with `surrogatepass`.
pub fn resolve_wtf8(raw: &[u8], base: &[u8], idna: &mut dyn Idna) -> Option<Vec<u8>> {
    let value = py_strip_bytes(raw);
    if value.is_empty() || value[0] == b'#' {
        return None;
    }
    if is_clean_bytes(value) {
        return Some(value.to_vec());
    }
    let parts = urlsplit(value, b"")?;
    let (resolved, parts) = if parts.scheme.is_empty() {
        let joined = urljoin(py_strip_bytes(base), value)?;
        let parts = urlsplit(&joined, b"")?;
        (joined, parts)
    } else if parts.netloc.is_empty() {
        // `https:/x` is a relative reference to urljoin; `https:///x` is a broken URL. The
        // offset counts code points of the value as given, before urlsplit's cleanup, as the
        // oracle does.
        let after = skip_code_points(value, parts.scheme.len() + 1);
        if after.starts_with(b"//") {
            return None;
        }
        let joined = urljoin(py_strip_bytes(base), value)?;
        let parts = urlsplit(&joined, b"")?;
        (joined, parts)
    } else {
        (value.to_vec(), parts)
    };
    if !is_http(&parts.scheme) {
        return None;
    }
    canonical_netloc(&parts.scheme, &parts.netloc, idna)?;
    Some(resolved)
}

fn skip_code_points(b: &[u8], count: usize) -> &[u8] {
    let mut seen = 0;
    for (i, &c) in b.iter().enumerate() {
        if c & 0xc0 != 0x80 {
            if seen == count {
                return &b[i..];
            }
            seen += 1;
        }
    }
    &[]
}

/// What the sitemap parser does with one `<loc>` value: strip, keep it if clean, else resolve it
/// against the document's URL and (for pages, not sitemap-index entries) normalize it. None is
/// a value the parser records as malformed.
pub fn resolve_loc(raw: &str, base: &str, normalize: bool, idna: &mut dyn Idna) -> Option<String> {
    resolve_loc_cow(raw, base, normalize, idna, &mut CleanCheck::default()).map(Cow::into_owned)
}

/// `resolve_loc` without the copy in the common case: a clean value comes back borrowed.
pub fn resolve_loc_cow<'a>(
    raw: &'a str,
    base: &str,
    normalize: bool,
    idna: &mut dyn Idna,
    clean: &mut CleanCheck,
) -> Option<Cow<'a, str>> {
    let value = py_strip(raw);
    if clean.is_clean(value.as_bytes()) {
        return Some(Cow::Borrowed(value));
    }
    let url = resolve_loc_wtf8(value.as_bytes(), base.as_bytes(), normalize, idna)?;
    Some(Cow::Owned(to_string(url)))
}

/// `resolve_loc` on WTF-8.
pub fn resolve_loc_wtf8(
    raw: &[u8],
    base: &[u8],
    normalize: bool,
    idna: &mut dyn Idna,
) -> Option<Vec<u8>> {
    let value = py_strip_bytes(raw);
    if is_clean_bytes(value) {
        return Some(value.to_vec());
    }
    let url = resolve_wtf8(value, base, idna)?;
    if !normalize || is_clean_bytes(&url) {
        return Some(url);
    }
    Some(normalize_slow(&url, idna).unwrap_or(url))
}

fn is_http(scheme: &[u8]) -> bool {
    scheme == b"http" || scheme == b"https"
}

// --------------------------------------------------------------------------- normalization

/// `normalize_url`: idempotent, never fails (a value it cannot read comes back unchanged).
pub fn normalize<'a>(url: &'a str, idna: &mut dyn Idna) -> Cow<'a, str> {
    if is_clean(url) {
        return Cow::Borrowed(url);
    }
    match normalize_slow(url.as_bytes(), idna) {
        Some(normalized) => Cow::Owned(to_string(normalized)),
        None => Cow::Borrowed(url),
    }
}

/// `normalize` on WTF-8.
pub fn normalize_wtf8<'a>(url: &'a [u8], idna: &mut dyn Idna) -> Cow<'a, [u8]> {
    if is_clean_bytes(url) {
        return Cow::Borrowed(url);
    }
    match normalize_slow(url, idna) {
        Some(normalized) => Cow::Owned(normalized),
        None => Cow::Borrowed(url),
    }
}

/// None where the oracle returns its input unchanged (not http(s), bad host or port, or a
/// ValueError from urlsplit).
fn normalize_slow(url: &[u8], idna: &mut dyn Idna) -> Option<Vec<u8>> {
    let parts = urlsplit(py_strip_bytes(url), b"")?;
    if !is_http(&parts.scheme) {
        return None;
    }
    let netloc = canonical_netloc(&parts.scheme, &parts.netloc, idna)?;
    let path = normalize_path(&parts.path);
    let query = normalize_query(&parts.query);
    let mut out =
        Vec::with_capacity(parts.scheme.len() + 3 + netloc.len() + path.len() + query.len() + 1);
    out.extend_from_slice(&parts.scheme);
    out.extend_from_slice(b"://");
    out.extend_from_slice(&netloc);
    out.extend_from_slice(&path);
    if !query.is_empty() {
        out.push(b'?');
        out.extend_from_slice(&query);
    }
    Some(out)
}

/// `host[:port]` in canonical form without userinfo; None when the host or port is invalid.
fn canonical_netloc(scheme: &[u8], netloc: &[u8], idna: &mut dyn Idna) -> Option<Vec<u8>> {
    let hostport = match memchr::memrchr(b'@', netloc) {
        Some(at) => &netloc[at + 1..],
        None => netloc,
    };
    let (mut host, port) = if let Some(literal) = hostport.strip_prefix(b"[") {
        let end = find(literal, b']')?;
        let mut host = b"[".to_vec();
        host.extend_from_slice(&ipv6_compressed(&literal[..end])?);
        host.push(b']');
        let rest = &literal[end + 1..];
        if !rest.is_empty() && rest[0] != b':' {
            return None;
        }
        (host, rest.get(1..).unwrap_or(b""))
    } else {
        let (raw_host, port) = split_once(hostport, b':').unwrap_or((hostport, b""));
        (canonical_host(raw_host, idna)?, port)
    };
    if port.is_empty() {
        return Some(host);
    }
    if port.len() > 5 || !port.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let number: u32 = port.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0'));
    if number == 0 || number > 65535 {
        return None;
    }
    let default = if scheme == b"http" { 80 } else { 443 };
    if number != default {
        host.push(b':');
        host.extend_from_slice(number.to_string().as_bytes());
    }
    Some(host)
}

fn canonical_host(host: &[u8], idna: &mut dyn Idna) -> Option<Vec<u8>> {
    let host = if host.is_ascii() {
        host.to_ascii_lowercase()
    } else {
        idna.to_ascii_wtf8(host)?.into_bytes()
    };
    ascii_host(&host).then_some(host)
}

/// `[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?`, whole string.
fn ascii_host(b: &[u8]) -> bool {
    let mut i = 0;
    loop {
        let start = i;
        while i < b.len() && has(b[i], HOST) {
            i += 1;
        }
        if i == start {
            return false;
        }
        if i == b.len() {
            return true;
        }
        if b[i] != b'.' {
            return false;
        }
        i += 1;
        if i == b.len() {
            return true;
        }
    }
}

fn push_escape(out: &mut Vec<u8>, byte: u8) {
    out.extend_from_slice(&[
        b'%',
        HEX_UPPER[(byte >> 4) as usize],
        HEX_UPPER[(byte & 15) as usize],
    ]);
}

fn normalize_path(b: &[u8]) -> Vec<u8> {
    if b.is_empty() {
        return b"/".to_vec();
    }
    let mut out = Vec::with_capacity(b.len() + 8);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if i + 2 < b.len() && has(b[i + 1], HEX) && has(b[i + 2], HEX) {
                let byte = hex_value(b[i + 1]) << 4 | hex_value(b[i + 2]);
                if has(byte, UNRESERVED) {
                    out.push(byte);
                } else {
                    push_escape(&mut out, byte);
                }
                i += 3;
            } else {
                out.extend_from_slice(b"%25"); // a `%` that starts no escape must not start one later
                i += 1;
            }
        } else {
            if has(c, PATH_SAFE) {
                out.push(c);
            } else {
                push_escape(&mut out, c); // byte by byte: quote() encodes a character as UTF-8
            }
            i += 1;
        }
    }
    if contains(&out, b"/.") {
        remove_dot_segments(&out)
    } else {
        out
    }
}

fn remove_dot_segments(path: &[u8]) -> Vec<u8> {
    // The oracle's list of kept segments, held as `/segment` runs in one buffer plus where each
    // starts: popping is a truncation, and memory stays a small multiple of the path.
    let mut out = Vec::with_capacity(path.len());
    let mut starts: Vec<usize> = Vec::new();
    let mut segments = path.split(|&c| c == b'/').skip(1).peekable();
    while let Some(segment) = segments.next() {
        if segment == b".." {
            if let Some(start) = starts.pop() {
                out.truncate(start);
            }
        } else if segment != b"." {
            starts.push(out.len());
            out.push(b'/');
            out.extend_from_slice(segment);
            continue;
        }
        if segments.peek().is_none() {
            // `/a/b/..` names the directory `/a/`, so the trailing slash survives.
            starts.push(out.len());
            out.push(b'/');
        }
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

fn normalize_query(b: &[u8]) -> Vec<u8> {
    // One pass: each parameter is encoded straight into the output and taken back out if it is
    // empty or tracking. Escapes never span a `&`, and encoding never makes one, so splitting
    // before or after encoding is the same.
    let mut out = Vec::with_capacity(b.len() + 8);
    for param in b.split(|&c| c == b'&') {
        let mark = out.len();
        if !out.is_empty() {
            out.push(b'&');
        }
        let start = out.len();
        let mut i = 0;
        while i < param.len() {
            let c = param[i];
            if c == b'%' && i + 2 < param.len() && has(param[i + 1], HEX) && has(param[i + 2], HEX)
            {
                out.extend_from_slice(&[
                    b'%',
                    param[i + 1].to_ascii_uppercase(),
                    param[i + 2].to_ascii_uppercase(),
                ]);
                i += 3;
            } else {
                if has(c, QUERY_SAFE) {
                    out.push(c);
                } else {
                    push_escape(&mut out, c);
                }
                i += 1;
            }
        }
        let encoded = &out[start..];
        let name = split_once(encoded, b'=').map_or(encoded, |(name, _)| name);
        if param.is_empty() || is_tracking(name) {
            out.truncate(mark);
        }
    }
    out
}

fn is_tracking(name: &[u8]) -> bool {
    starts_with_ignore_case(name, b"utm_")
        || starts_with_ignore_case(name, b"mc_")
        || [&b"gclid"[..], b"fbclid", b"_ga", b"ref", b"source"]
            .iter()
            .any(|exact| name.eq_ignore_ascii_case(exact))
}

// --------------------------------------------------------------------------- urllib.parse

const USES_RELATIVE: &[&[u8]] = &[
    b"",
    b"ftp",
    b"http",
    b"gopher",
    b"nntp",
    b"imap",
    b"wais",
    b"file",
    b"https",
    b"shttp",
    b"mms",
    b"prospero",
    b"rtsp",
    b"rtsps",
    b"rtspu",
    b"sftp",
    b"svn",
    b"svn+ssh",
    b"ws",
    b"wss",
];
const USES_NETLOC: &[&[u8]] = &[
    b"",
    b"ftp",
    b"http",
    b"gopher",
    b"nntp",
    b"telnet",
    b"imap",
    b"wais",
    b"file",
    b"mms",
    b"https",
    b"shttp",
    b"snews",
    b"prospero",
    b"rtsp",
    b"rtsps",
    b"rtspu",
    b"rsync",
    b"svn",
    b"svn+ssh",
    b"sftp",
    b"nfs",
    b"git",
    b"git+ssh",
    b"ws",
    b"wss",
];
const USES_PARAMS: &[&[u8]] = &[
    b"",
    b"ftp",
    b"hdl",
    b"prospero",
    b"http",
    b"imap",
    b"https",
    b"shttp",
    b"rtsp",
    b"rtsps",
    b"rtspu",
    b"sip",
    b"sips",
    b"mms",
    b"sftp",
    b"tel",
];

fn listed(list: &[&[u8]], scheme: &[u8]) -> bool {
    list.contains(&scheme)
}

/// `urlsplit`'s five parts (CPython 3.11.7).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Split {
    scheme: Vec<u8>,
    netloc: Vec<u8>,
    path: Vec<u8>,
    query: Vec<u8>,
    fragment: Vec<u8>,
}

fn scheme_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.')
}

/// `urllib.parse.urlsplit(url, default_scheme)`; None where it raises ValueError.
fn urlsplit(url: &[u8], default_scheme: &[u8]) -> Option<Split> {
    let url = skip_c0_and_space(url);
    let cleaned = without_tab_or_newline(url);
    let parts = split_ref(&cleaned)?;
    Some(Split {
        scheme: match parts.scheme {
            Some(scheme) => scheme.to_ascii_lowercase(),
            None => default_scheme.to_vec(),
        },
        netloc: parts.netloc.to_vec(),
        path: parts.path.to_vec(),
        query: parts.query.to_vec(),
        fragment: parts.fragment.to_vec(),
    })
}

/// `urlsplit(url).path`, empty where urlsplit raises ValueError: what `_locale.readable_path`
/// reads out of a URL or a bare path. Borrowed unless the URL holds a tab or a line break.
pub fn split_path(url: &[u8]) -> Cow<'_, [u8]> {
    let url = skip_c0_and_space(url);
    match without_tab_or_newline(url) {
        Cow::Borrowed(url) => Cow::Borrowed(split_ref(url).map_or(&b""[..], |p| p.path)),
        Cow::Owned(cleaned) => {
            Cow::Owned(split_ref(&cleaned).map_or(Vec::new(), |p| p.path.to_vec()))
        }
    }
}

/// urlsplit's scheme (as written; None: no scheme), netloc and path of `url`, handed to `f`;
/// None where urlsplit raises ValueError.
pub fn with_split<R>(url: &[u8], f: impl FnOnce(Option<(Option<&[u8]>, &[u8], &[u8])>) -> R) -> R {
    let url = skip_c0_and_space(url);
    match without_tab_or_newline(url) {
        Cow::Borrowed(url) => f(split_ref(url).map(|p| (p.scheme, p.netloc, p.path))),
        Cow::Owned(cleaned) => f(split_ref(&cleaned).map(|p| (p.scheme, p.netloc, p.path))),
    }
}

/// urlsplit's first step: leading C0 controls and spaces go.
fn skip_c0_and_space(url: &[u8]) -> &[u8] {
    let skip = url.iter().take_while(|&&c| c <= b' ').count();
    &url[skip..]
}

/// urlsplit's second step: every tab, CR and LF goes.
fn without_tab_or_newline(url: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr3(b'\t', b'\r', b'\n', url).is_some() {
        Cow::Owned(
            url.iter()
                .copied()
                .filter(|c| !matches!(c, b'\t' | b'\r' | b'\n'))
                .collect(),
        )
    } else {
        Cow::Borrowed(url)
    }
}

/// urlsplit's parts as slices of the cleaned URL; the scheme as written (None: no scheme).
struct SplitRef<'a> {
    scheme: Option<&'a [u8]>,
    netloc: &'a [u8],
    path: &'a [u8],
    query: &'a [u8],
    fragment: &'a [u8],
}

/// The rest of urlsplit, on a URL its first two steps have cleaned; None where it raises.
fn split_ref(url: &[u8]) -> Option<SplitRef<'_>> {
    let mut rest = url;
    let mut scheme = None;
    if let Some(colon) = find(rest, b':') {
        let candidate = &rest[..colon];
        if colon > 0
            && candidate[0].is_ascii_alphabetic()
            && candidate.iter().all(|&c| scheme_char(c))
        {
            scheme = Some(candidate);
            rest = &rest[colon + 1..];
        }
    }
    let mut netloc: &[u8] = b"";
    if let Some(after) = rest.strip_prefix(b"//") {
        let delim = after
            .iter()
            .position(|c| matches!(c, b'/' | b'?' | b'#'))
            .unwrap_or(after.len());
        netloc = &after[..delim];
        rest = &after[delim..];
        let open = find(netloc, b'[').is_some();
        if open != find(netloc, b']').is_some() {
            return None; // "Invalid IPv6 URL"
        }
        if open {
            let inside = split_once(netloc, b'[').map_or(&b""[..], |(_, after)| after);
            let bracketed = split_once(inside, b']').map_or(inside, |(host, _)| host);
            if !bracketed_host_ok(bracketed) {
                return None;
            }
        }
    }
    let (rest, fragment) = split_once(rest, b'#').unwrap_or((rest, b""));
    let (path, query) = split_once(rest, b'?').unwrap_or((rest, b""));
    if !netloc.is_ascii() && nfkc_makes_delimiter(netloc) {
        return None; // "contains invalid characters under NFKC normalization"
    }
    Some(SplitRef {
        scheme,
        netloc,
        path,
        query,
        fragment,
    })
}

/// Whether the text holds a character whose NFKC form contains one of `/?#@:` (Unicode 14; the
/// Python test checks this list against `unicodedata` over every code point). urlsplit rejects
/// a netloc with one.
fn nfkc_makes_delimiter(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        let (code, len) = code_point_at(b, i);
        if matches!(
            code,
            0x2047
                | 0x2048
                | 0x2049
                | 0x2100
                | 0x2101
                | 0x2105
                | 0x2106
                | 0x2a74
                | 0xfe13
                | 0xfe16
                | 0xfe55
                | 0xfe56
                | 0xfe5f
                | 0xfe6b
                | 0xff03
                | 0xff0f
                | 0xff1a
                | 0xff1f
                | 0xff20
        ) {
            return true;
        }
        i += len;
    }
    false
}

/// urlsplit's `_check_bracketed_host`: an IPvFuture form or an IPv6 address.
fn bracketed_host_ok(host: &[u8]) -> bool {
    if let Some(future) = host.strip_prefix(b"v") {
        // \Av[a-fA-F0-9]+\..+\Z
        let digits = future.iter().take_while(|&&c| has(c, HEX)).count();
        let tail = &future[digits..];
        return digits > 0 && tail.len() > 1 && tail[0] == b'.' && find(tail, b'\n').is_none();
    }
    ipv6_compressed(host).is_some()
}

/// `urlparse`'s split of `;params` off the last path segment.
fn split_params(path: &[u8]) -> (&[u8], &[u8]) {
    let from = memchr::memrchr(b'/', path).unwrap_or(0);
    match find(&path[from..], b';') {
        Some(offset) => (&path[..from + offset], &path[from + offset + 1..]),
        None => (path, b""),
    }
}

struct Parsed {
    split: Split,
    params: Vec<u8>,
}

fn urlparse(url: &[u8], default_scheme: &[u8]) -> Option<Parsed> {
    let mut split = urlsplit(url, default_scheme)?;
    let mut params = Vec::new();
    if listed(USES_PARAMS, &split.scheme) && find(&split.path, b';').is_some() {
        let (path, found) = split_params(&split.path);
        let (path, found) = (path.to_vec(), found.to_vec());
        split.path = path;
        params = found;
    }
    Some(Parsed { split, params })
}

fn urlunparse(
    scheme: &[u8],
    netloc: &[u8],
    path: &[u8],
    params: &[u8],
    query: &[u8],
    fragment: &[u8],
) -> Vec<u8> {
    let path: Cow<[u8]> = if params.is_empty() {
        Cow::Borrowed(path)
    } else {
        Cow::Owned([path, b";", params].concat())
    };
    urlunsplit(scheme, netloc, &path, query, fragment)
}

fn urlunsplit(scheme: &[u8], netloc: &[u8], path: &[u8], query: &[u8], fragment: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        scheme.len() + netloc.len() + path.len() + query.len() + fragment.len() + 6,
    );
    if !scheme.is_empty() {
        out.extend_from_slice(scheme);
        out.push(b':');
    }
    if !netloc.is_empty()
        || (!scheme.is_empty() && listed(USES_NETLOC, scheme) && !path.starts_with(b"//"))
    {
        out.extend_from_slice(b"//");
        out.extend_from_slice(netloc);
        if !path.is_empty() && path[0] != b'/' {
            out.push(b'/');
        }
    }
    out.extend_from_slice(path);
    if !query.is_empty() {
        out.push(b'?');
        out.extend_from_slice(query);
    }
    if !fragment.is_empty() {
        out.push(b'#');
        out.extend_from_slice(fragment);
    }
    out
}

/// urljoin's path resolution, streamed: the segments of the base's directory and the reference
/// (middle empties dropped, unless the reference is absolute), `.`/`..` applied on a stack kept
/// as one buffer, the oracle's `'/'.join(resolved) or '/'`.
fn merge_paths(base: &[u8], path: &[u8]) -> Vec<u8> {
    let slash = |c: &u8| *c == b'/';
    let absolute = path.first() == Some(&b'/');
    // `bpath.split('/')` without its last item unless that is empty.
    let base_dir: Option<&[u8]> = if absolute {
        None
    } else if base.is_empty() || base.last() == Some(&b'/') {
        Some(base)
    } else {
        memchr::memrchr(b'/', base).map(|i| &base[..i])
    };
    let base_count = base_dir.map_or(0, |dir| memchr::memchr_iter(b'/', dir).count() + 1);
    let total = base_count + memchr::memchr_iter(b'/', path).count() + 1;
    let filter = !absolute && total > 2;
    let base_segments = base_dir.into_iter().flat_map(|dir| dir.split(slash));
    let mut out: Vec<u8> = Vec::with_capacity(base.len() + path.len());
    let mut starts: Vec<usize> = Vec::new();
    let mut last: &[u8] = b"";
    for (index, segment) in base_segments.chain(path.split(slash)).enumerate() {
        last = segment;
        if filter && segment.is_empty() && index != 0 && index != total - 1 {
            continue; // would make a redundant slash on re-joining
        }
        if segment == b".." {
            if let Some(start) = starts.pop() {
                out.truncate(start);
            }
        } else if segment != b"." {
            push_segment(&mut out, &mut starts, segment);
        }
    }
    if last == b"." || last == b".." {
        push_segment(&mut out, &mut starts, b"");
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// Appends to a `'/'.join(...)` of segments held as one buffer plus where each one starts.
fn push_segment(out: &mut Vec<u8>, starts: &mut Vec<usize>, segment: &[u8]) {
    starts.push(out.len());
    if starts.len() > 1 {
        out.push(b'/');
    }
    out.extend_from_slice(segment);
}

/// `urllib.parse.urljoin(base, url)`; None where it raises ValueError.
fn urljoin(base: &[u8], url: &[u8]) -> Option<Vec<u8>> {
    if base.is_empty() {
        return Some(url.to_vec());
    }
    if url.is_empty() {
        return Some(base.to_vec());
    }
    let b = urlparse(base, b"")?;
    let u = urlparse(url, &b.split.scheme)?;
    let scheme = u.split.scheme.as_slice();
    if scheme != b.split.scheme || !listed(USES_RELATIVE, scheme) {
        return Some(url.to_vec());
    }
    let mut netloc = u.split.netloc.as_slice();
    if listed(USES_NETLOC, scheme) {
        if !netloc.is_empty() {
            return Some(urlunparse(
                scheme,
                netloc,
                &u.split.path,
                &u.params,
                &u.split.query,
                &u.split.fragment,
            ));
        }
        netloc = &b.split.netloc;
    }
    let path = u.split.path.as_slice();
    if path.is_empty() && u.params.is_empty() {
        let query = if u.split.query.is_empty() {
            &b.split.query
        } else {
            &u.split.query
        };
        return Some(urlunparse(
            scheme,
            netloc,
            &b.split.path,
            &b.params,
            query,
            &u.split.fragment,
        ));
    }
    let joined = merge_paths(&b.split.path, path);
    Some(urlunparse(
        scheme,
        netloc,
        &joined,
        &u.params,
        &u.split.query,
        &u.split.fragment,
    ))
}

// --------------------------------------------------------------------------- ipaddress

/// `ipaddress.IPv6Address(literal).compressed` (scope id included); None where it raises.
fn ipv6_compressed(literal: &[u8]) -> Option<Vec<u8>> {
    if find(literal, b'/').is_some() {
        return None;
    }
    let (address, scope) = match split_once(literal, b'%') {
        None => (literal, None),
        Some((address, scope)) => {
            if scope.is_empty() || find(scope, b'%').is_some() {
                return None;
            }
            (address, Some(scope))
        }
    };
    let hextets = ipv6_hextets(address)?;
    let mut out = compress_hextets(&hextets).into_bytes();
    if let Some(scope) = scope {
        out.push(b'%');
        out.extend_from_slice(scope);
    }
    Some(out)
}

fn ipv6_hextets(address: &[u8]) -> Option<[u16; 8]> {
    if address.is_empty() {
        return None;
    }
    // A literal with more than 9 parts is invalid whatever they hold; stop before collecting.
    if memchr::memchr_iter(b':', address).count() > 8 {
        return None;
    }
    let mut parts: Vec<Cow<[u8]>> = address.split(|&c| c == b':').map(Cow::Borrowed).collect();
    if parts.len() < 3 {
        return None;
    }
    if parts.last().is_some_and(|last| find(last, b'.').is_some()) {
        let v4 = ipv4(&parts.pop()?)?;
        parts.push(Cow::Owned(format!("{:x}", v4 >> 16).into_bytes()));
        parts.push(Cow::Owned(format!("{:x}", v4 & 0xFFFF).into_bytes()));
    }
    if parts.len() > 9 {
        return None;
    }
    let count = parts.len();
    let mut skip_index = None;
    for (i, part) in parts.iter().enumerate().take(count - 1).skip(1) {
        if part.is_empty() {
            if skip_index.is_some() {
                return None; // more than one '::'
            }
            skip_index = Some(i);
        }
    }
    let (parts_hi, parts_lo) = if let Some(skip) = skip_index {
        let mut hi = skip;
        let mut lo = count - skip - 1;
        if parts[0].is_empty() {
            hi -= 1;
            if hi != 0 {
                return None;
            }
        }
        if parts[count - 1].is_empty() {
            lo -= 1;
            if lo != 0 {
                return None;
            }
        }
        if hi + lo >= 8 {
            return None;
        }
        (hi, lo)
    } else {
        if count != 8 || parts[0].is_empty() || parts[count - 1].is_empty() {
            return None;
        }
        (count, 0)
    };
    let mut hextets = [0u16; 8];
    for (slot, part) in hextets.iter_mut().zip(&parts[..parts_hi]) {
        *slot = hextet(part)?;
    }
    for (slot, part) in hextets[8 - parts_lo..]
        .iter_mut()
        .zip(&parts[count - parts_lo..])
    {
        *slot = hextet(part)?;
    }
    Some(hextets)
}

fn hextet(part: &[u8]) -> Option<u16> {
    if part.is_empty() || part.len() > 4 || !part.iter().all(|&c| has(c, HEX)) {
        return None;
    }
    Some(
        part.iter()
            .fold(0u16, |n, &c| n << 4 | u16::from(hex_value(c))),
    )
}

/// `IPv4Address(text)` as an integer; None where it raises.
fn ipv4(text: &[u8]) -> Option<u32> {
    if find(text, b'/').is_some() {
        return None;
    }
    let mut value = 0u32;
    let mut count = 0;
    for octet in text.split(|&c| c == b'.') {
        count += 1;
        if count > 4
            || octet.is_empty()
            || octet.len() > 3
            || !octet.iter().all(u8::is_ascii_digit)
            || (octet.len() > 1 && octet[0] == b'0')
        {
            return None;
        }
        let number: u32 = octet.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0'));
        if number > 255 {
            return None;
        }
        value = value << 8 | number;
    }
    (count == 4).then_some(value)
}

/// The longest run of two or more zero hextets becomes `::` (the first of equal runs wins).
fn compress_hextets(hextets: &[u16; 8]) -> String {
    let (mut best_start, mut best_len, mut start, mut len) = (0usize, 0usize, 0usize, 0usize);
    for (index, &h) in hextets.iter().enumerate() {
        if h == 0 {
            if len == 0 {
                start = index;
            }
            len += 1;
            if len > best_len {
                best_len = len;
                best_start = start;
            }
        } else {
            len = 0;
        }
    }
    let join = |range: &[u16]| {
        range
            .iter()
            .map(|h| format!("{h:x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    if best_len > 1 {
        format!(
            "{}::{}",
            join(&hextets[..best_start]),
            join(&hextets[best_start + best_len..])
        )
    } else {
        join(hextets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(url: &str) -> String {
        normalize(url, &mut NoIdna).into_owned()
    }

    fn res(raw: &str, base: &str) -> Option<String> {
        resolve(raw, base, &mut NoIdna)
    }

    #[test]
    fn a_dot_segment_or_escape_is_seen_at_every_place_in_a_long_path() {
        let plain = "https://example.com/abcdefgh/ijklmnop/qrstuvwx/yz";
        assert!(is_clean(plain));
        let path_at = "https://example.com".len();
        for at in path_at + 1..plain.len() {
            for odd in ["/./", "/../", "%7e", "%41", " ", "\\"] {
                let url = format!("{}{odd}{}", &plain[..at], &plain[at..]);
                assert!(!is_clean(&url), "{url}");
            }
            let kept = format!("{}%2F{}", &plain[..at], &plain[at..]);
            assert!(is_clean(&kept), "{kept}");
        }
    }

    #[test]
    fn clean_urls() {
        assert!(is_clean("https://example.com/"));
        assert!(is_clean("http://a.b.c:8080/x/y?q=1&r=%2F"));
        assert!(is_clean("https://example.com./a%2F"));
        assert!(!is_clean("https://example.com"));
        assert!(!is_clean("https://example.com/?"));
        assert!(!is_clean("https://example.com:443/"));
        assert!(!is_clean("https://example.com:65536/"));
        assert!(!is_clean("https://example.com:08/"));
        assert!(!is_clean("https://Example.com/"));
        assert!(!is_clean("https://example.com/./a"));
        assert!(!is_clean("https://example.com/a%2f"));
        assert!(!is_clean("https://example.com/%41"));
        assert!(!is_clean("https://example.com/?a=1&&b"));
        assert!(!is_clean("https://example.com/?a=1&UTM_x=2"));
        assert!(!is_clean("https://example.com/?ref"));
        assert!(is_clean("https://example.com/?refresh=1"));
        assert!(!is_clean("https://example..com/"));
        assert!(!is_clean("https://example.com/#x"));
    }

    #[test]
    fn the_clean_check_over_a_run_answers_as_each_alone() {
        let urls = [
            "https://example.com/a",
            "https://example.com/./a",
            "https://example.com/b?x=1",
            "https://example.com:8080/a",
            "https://example.com:443/a",
            "https://example.com.evil/a",
            "https://example.com/",
            "https://example.co/a",
            "https://Example.com/a",
            "http://example.com/a",
            "http://example.com:80/a",
            "http://example.com",
            "https://example.com/a%2f",
            "https://example..com/a",
            "https://example.com./a",
            "ftp://example.com/a",
            "",
            "https://example.com/?",
        ];
        // Every order of every pair, and the whole list forwards and backwards.
        for a in urls {
            for b in urls {
                let mut check = CleanCheck::default();
                for url in [a, b, a] {
                    assert_eq!(
                        check.is_clean(url.as_bytes()),
                        is_clean(url),
                        "{a} then {url}"
                    );
                }
            }
        }
        for order in [urls.to_vec(), urls.iter().rev().copied().collect()] {
            let mut check = CleanCheck::default();
            for url in order {
                assert_eq!(check.is_clean(url.as_bytes()), is_clean(url), "{url}");
            }
        }
    }

    #[test]
    fn normalization() {
        assert_eq!(
            norm("HTTP://Ex.com:80/a/../b?utm_x=1&a=%2f"),
            "http://ex.com/b?a=%2F"
        );
        assert_eq!(
            norm("https://u:p@ex.com:0443/%7e/a b/%/"),
            "https://ex.com/~/a%20b/%25/"
        );
        assert_eq!(norm("https://[0:0::1]:8080"), "https://[::1]:8080/");
        assert_eq!(
            norm("https://[::ffff:1.2.3.4]/"),
            "https://[::ffff:102:304]/"
        );
        assert_eq!(
            norm("https://[1:0:0:2:0:0:3:4]/"),
            "https://[1::2:0:0:3:4]/"
        );
        assert_eq!(
            norm("https://ex.com/a/b/..?&&x=1&"),
            "https://ex.com/a/?x=1"
        );
        assert_eq!(norm("mailto:x@y"), "mailto:x@y");
        assert_eq!(norm("https://ex.com:99999/"), "https://ex.com:99999/");
        assert_eq!(norm("https://exa\u{e9}.com/"), "https://exa\u{e9}.com/"); // no IDNA here
        assert_eq!(norm("https://ex.com/\u{e9}"), "https://ex.com/%C3%A9");
    }

    #[test]
    fn resolution() {
        let base = "https://ex.com/a/b/c";
        assert_eq!(res("../x", base).as_deref(), Some("https://ex.com/a/x"));
        assert_eq!(
            res("//other.org/p", base).as_deref(),
            Some("https://other.org/p")
        );
        assert_eq!(res("https:/x", base).as_deref(), Some("https://ex.com/x"));
        assert_eq!(res("https:///x", base), None);
        assert_eq!(res("#frag", base), None);
        assert_eq!(res("  ", base), None);
        assert_eq!(res("mailto:a@b", base), None);
        assert_eq!(res("?q", base).as_deref(), Some("https://ex.com/a/b/c?q"));
        assert_eq!(
            res("..;p", "http://a/b/c/d").as_deref(),
            Some("http://a/b/;p")
        );
        assert_eq!(res("http://[::1", base), None);
        assert_eq!(res("http://ex.com:0/", base), None);
        assert_eq!(res("http://a\u{ff0f}b@ex.com/", base), None);
        assert_eq!(
            res("\x1chttp://ex.com/ \x1f", base).as_deref(),
            Some("http://ex.com/")
        );
    }

    #[test]
    fn strip_matches_python_whitespace() {
        assert_eq!(py_strip("\x1c\u{3000} a \u{85}"), "a");
        assert_eq!(py_strip("\u{200b}a"), "\u{200b}a");
    }

    /// Never panics, on anything: pseudo-random strings over an alphabet of URL pieces.
    #[test]
    fn fuzz_never_panics() {
        const PIECES: &[&str] = &[
            "http",
            "https",
            ":",
            "/",
            "//",
            "?",
            "#",
            "&",
            "=",
            "%",
            "%2",
            "%2f",
            "%41",
            "[",
            "]",
            "::",
            ".",
            "..",
            "@",
            ";",
            "a",
            "Z",
            "0",
            "65536",
            "1.2.3.4",
            "v1.x",
            " ",
            "\t",
            "\n",
            "\u{e9}",
            "\u{ff0f}",
            "\u{212a}",
            "utm_",
            "ref",
            "&&",
            "\x00",
            "\x1c",
            "%zz",
            "\u{10000}",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..100_000 {
            let mut raw = String::new();
            let mut base = String::from("https://ex.com/");
            for _ in 0..(next() % 12) {
                raw.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            for _ in 0..(next() % 4) {
                base.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            let _ = is_clean(&raw);
            let normalized = norm(&raw);
            assert_eq!(norm(&normalized), normalized, "not idempotent: {raw:?}");
            let _ = res(&raw, &base);
            let _ = resolve_loc(&raw, &base, true, &mut NoIdna);
        }
    }

    /// The WTF-8 entry points take bytes from Python's `surrogatepass`; arbitrary bytes must not
    /// make them panic either (truncated sequences, stray continuation bytes, 0xFF).
    #[test]
    fn fuzz_bytes_never_panic() {
        const PIECES: &[&[u8]] = &[
            b"https://",
            b"http:",
            b"//",
            b"/",
            b"?",
            b"#",
            b"[",
            b"]",
            b":",
            b"@",
            b"%",
            b"..",
            b"\xed\xa0\x80",
            b"\xef\xbc\x8f",
            b"\xe3\x80\x80",
            b"\x85",
            b"\xc2",
            b"\xe2\x80",
            b"\xff",
            b"\x80\x80",
            b"\xf0\x9f\x92",
            b" ",
            b"\t",
            b"a",
            b"ex.com",
            b"%41",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..50_000 {
            let mut raw = Vec::new();
            for _ in 0..(next() % 12) {
                raw.extend_from_slice(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            let _ = is_clean_bytes(&raw);
            let _ = normalize_wtf8(&raw, &mut NoIdna);
            let _ = resolve_wtf8(&raw, b"https://ex.com/a/", &mut NoIdna);
            let _ = resolve_wtf8(b"../x", &raw, &mut NoIdna);
            let _ = resolve_loc_wtf8(&raw, &raw, true, &mut NoIdna);
            let _ = py_strip_bytes(&raw);
        }
    }
}
