//! Field values: character data decoding and the per-field rules (`lastmod`, `priority`,
//! `changefreq`), each held to what the Python parser did.
#![forbid(unsafe_code)]

use std::borrow::Cow;

use crate::entry::Short;
pub use crate::urls::{py_isspace as is_py_space, py_strip};

/// The first `n` characters (Python's `s[:n]`).
pub fn cut_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Whether a code point may appear in an XML 1.0 document (what a character reference may name).
fn is_xml_char(c: u32) -> bool {
    matches!(c, 0x9 | 0xA | 0xD | 0x20..=0xD7FF | 0xE000..=0xFFFD | 0x10000..=0x10FFFF)
}

/// What a reference starting at `s[0] == b'&'` stands for, and its length; None leaves the `&`
/// literal. Only XML's five predefined entities and character references of at most 8 digits
/// count, as the Python parser's pre-escape had it: `&eacute;`, `&AMP;`, a bare `&` stay text.
/// `Some((None, len))`: a reference to a character XML forbids, dropped (libxml2 drops it too).
fn reference(s: &[u8]) -> Option<(Option<char>, usize)> {
    let rest = &s[1..];
    let named: [(&[u8], char); 5] = [
        (b"amp;", '&'),
        (b"lt;", '<'),
        (b"gt;", '>'),
        (b"quot;", '"'),
        (b"apos;", '\''),
    ];
    for (name, c) in named {
        if rest.starts_with(name) {
            return Some((Some(c), name.len() + 1));
        }
    }
    if rest.first() != Some(&b'#') {
        return None;
    }
    let (hex, digits_at) = if rest.get(1) == Some(&b'x') {
        (true, 2)
    } else {
        (false, 1)
    };
    let digits = &rest[digits_at..];
    let n = digits
        .iter()
        .take(9)
        .take_while(|b| {
            if hex {
                b.is_ascii_hexdigit()
            } else {
                b.is_ascii_digit()
            }
        })
        .count();
    if n == 0 || n > 8 || digits.get(n) != Some(&b';') {
        return None;
    }
    let mut code: u32 = 0;
    for &b in &digits[..n] {
        let d = (b as char).to_digit(16).unwrap_or(0);
        code = code
            .saturating_mul(if hex { 16 } else { 10 })
            .saturating_add(d);
    }
    let c = if is_xml_char(code) {
        char::from_u32(code)
    } else {
        None
    };
    Some((c, 1 + digits_at + n + 1))
}

/// Outcome of decoding character data: the text, and whether it held damage (invalid UTF-8 or a
/// reference to a forbidden character).
pub struct Decoded {
    pub text: String,
    pub damaged: bool,
}

/// Whether `decode` gives `raw` back as it is when it is valid UTF-8: nothing to decode or
/// normalize in it.
fn is_plain(raw: &[u8], attr: bool) -> bool {
    if attr {
        !raw.iter()
            .any(|&b| matches!(b, b'&' | b'\r' | b'\n' | b'\t'))
    } else {
        memchr::memchr2(b'&', b'\r', raw).is_none()
    }
}

/// What `decode(raw, attr)` gives back as it is, borrowed; None when it has to decode.
fn plain(raw: &[u8], attr: bool) -> Option<&str> {
    if is_plain(raw, attr) {
        std::str::from_utf8(raw).ok()
    } else {
        None
    }
}

/// Character data that `decode` gives back as it is, borrowed; None when it has to decode.
pub fn plain_text(raw: &[u8]) -> Option<&str> {
    plain(raw, false)
}

/// Whether an attribute's raw value decodes (as `decode(raw, true)`) to `value`, without
/// making the decoded string when the value is plain.
pub fn attr_equals(raw: &[u8], value: &str) -> bool {
    match plain(raw, true) {
        Some(text) => text == value,
        None => decode(raw, true).text == value,
    }
}

/// Character data as the XML parser reports it: line ends normalized (CRLF and CR become LF),
/// references decoded, everything else literal. With `attr`, literal whitespace becomes a space
/// (attribute-value normalization; characters from references are kept as they are).
pub fn decode(raw: &[u8], attr: bool) -> Decoded {
    if is_plain(raw, attr) {
        return match std::str::from_utf8(raw) {
            Ok(s) => Decoded {
                text: s.to_owned(),
                damaged: false,
            },
            Err(_) => Decoded {
                text: String::from_utf8_lossy(raw).into_owned(),
                damaged: true,
            },
        };
    }
    let mut out: Vec<u8> = Vec::with_capacity(raw.len());
    let mut damaged = false;
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        match b {
            b'&' => match reference(&raw[i..]) {
                Some((c, len)) => {
                    match c {
                        Some(c) => {
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                        None => damaged = true,
                    }
                    i += len;
                    continue;
                }
                None => out.push(b'&'),
            },
            b'\r' => {
                if raw.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                out.push(if attr { b' ' } else { b'\n' });
            }
            b'\n' | b'\t' if attr => out.push(b' '),
            _ => out.push(b),
        }
        i += 1;
    }
    match String::from_utf8(out) {
        Ok(text) => Decoded { text, damaged },
        Err(e) => Decoded {
            text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            damaged: true,
        },
    }
}

/// Unicode Nd (decimal digit) ranges as CPython 3.11 knows them (Unicode 14.0.0); each starts at
/// a zero digit.
const DECIMAL_DIGITS: [(u32, u32); 62] = [
    (0x30, 0x39),
    (0x660, 0x669),
    (0x6F0, 0x6F9),
    (0x7C0, 0x7C9),
    (0x966, 0x96F),
    (0x9E6, 0x9EF),
    (0xA66, 0xA6F),
    (0xAE6, 0xAEF),
    (0xB66, 0xB6F),
    (0xBE6, 0xBEF),
    (0xC66, 0xC6F),
    (0xCE6, 0xCEF),
    (0xD66, 0xD6F),
    (0xDE6, 0xDEF),
    (0xE50, 0xE59),
    (0xED0, 0xED9),
    (0xF20, 0xF29),
    (0x1040, 0x1049),
    (0x1090, 0x1099),
    (0x17E0, 0x17E9),
    (0x1810, 0x1819),
    (0x1946, 0x194F),
    (0x19D0, 0x19D9),
    (0x1A80, 0x1A89),
    (0x1A90, 0x1A99),
    (0x1B50, 0x1B59),
    (0x1BB0, 0x1BB9),
    (0x1C40, 0x1C49),
    (0x1C50, 0x1C59),
    (0xA620, 0xA629),
    (0xA8D0, 0xA8D9),
    (0xA900, 0xA909),
    (0xA9D0, 0xA9D9),
    (0xA9F0, 0xA9F9),
    (0xAA50, 0xAA59),
    (0xABF0, 0xABF9),
    (0xFF10, 0xFF19),
    (0x104A0, 0x104A9),
    (0x10D30, 0x10D39),
    (0x11066, 0x1106F),
    (0x110F0, 0x110F9),
    (0x11136, 0x1113F),
    (0x111D0, 0x111D9),
    (0x112F0, 0x112F9),
    (0x11450, 0x11459),
    (0x114D0, 0x114D9),
    (0x11650, 0x11659),
    (0x116C0, 0x116C9),
    (0x11730, 0x11739),
    (0x118E0, 0x118E9),
    (0x11950, 0x11959),
    (0x11C50, 0x11C59),
    (0x11D50, 0x11D59),
    (0x11DA0, 0x11DA9),
    (0x16A60, 0x16A69),
    (0x16AC0, 0x16AC9),
    (0x16B50, 0x16B59),
    (0x1D7CE, 0x1D7FF),
    (0x1E140, 0x1E149),
    (0x1E2F0, 0x1E2F9),
    (0x1E950, 0x1E959),
    (0x1FBF0, 0x1FBF9),
];

/// Python's `\d` and `int()` digit: the value of a Unicode decimal digit (category Nd).
pub(crate) fn decimal(c: char) -> Option<u32> {
    let cp = u32::from(c);
    if cp < 0x80 {
        return c.to_digit(10);
    }
    let i = DECIMAL_DIGITS.partition_point(|&(_, end)| end < cp);
    match DECIMAL_DIGITS.get(i) {
        Some(&(start, _)) if start <= cp => Some((cp - start) % 10),
        _ => None,
    }
}

/// A value seen through Python's regex classes, one byte per character: ASCII as it is, a
/// Unicode decimal digit as `0`, other Python whitespace as a space, anything else as 0xFF;
/// `at[i]` is the byte offset of character `i` in the value (and its length at the end).
struct Shadow {
    s: Vec<u8>,
    at: Vec<usize>,
}

impl Shadow {
    fn of(v: &str) -> Shadow {
        let mut s = Vec::with_capacity(v.len());
        let mut at = Vec::with_capacity(v.len() + 1);
        for (i, c) in v.char_indices() {
            at.push(i);
            s.push(if c.is_ascii() {
                c as u8
            } else if decimal(c).is_some() {
                b'0'
            } else if is_py_space(c) {
                b' '
            } else {
                0xFF
            });
        }
        at.push(v.len());
        Shadow { s, at }
    }
}

fn digits(s: &[u8], n: usize) -> bool {
    s.len() >= n && s[..n].iter().all(u8::is_ascii_digit)
}

/// `\d{4}(?:-\d{2}(?:-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2}:\d{2})?)?)?\Z`
fn is_canonical_dt(s: &[u8]) -> bool {
    if !digits(s, 4) {
        return false;
    }
    let mut s = &s[4..];
    for _ in 0..2 {
        if s.is_empty() {
            return true;
        }
        if s[0] != b'-' || !digits(&s[1..], 2) {
            return false;
        }
        s = &s[3..];
    }
    if s.is_empty() {
        return true;
    }
    // T\d{2}:\d{2}:\d{2}
    if s.len() < 9 || s[0] != b'T' || !digits(&s[1..], 2) || s[3] != b':' || !digits(&s[4..], 2) {
        return false;
    }
    if s[6] != b':' || !digits(&s[7..], 2) {
        return false;
    }
    s = &s[9..];
    if s.first() == Some(&b'.') {
        let n = s[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        s = &s[1 + n..];
    }
    s.len() == 6
        && (s[0] == b'+' || s[0] == b'-')
        && digits(&s[1..], 2)
        && s[3] == b':'
        && digits(&s[4..], 2)
}

fn canonical(v: &str) -> bool {
    if v.is_ascii() {
        is_canonical_dt(v.as_bytes())
    } else {
        is_canonical_dt(&Shadow::of(v).s)
    }
}

/// `_W3C_DT` (case-insensitive) rewritten to ISO 8601, or None when it does not match.
fn w3c(v: &str) -> Option<String> {
    if v.is_ascii() {
        w3c_in(v.as_bytes(), |a, b| &v[a..b])
    } else {
        let shadow = Shadow::of(v);
        w3c_in(&shadow.s, |a, b| &v[shadow.at[a]..shadow.at[b]])
    }
}

/// `w3c` on the value as seen by `s` (one byte per character); `text(a, b)` is characters
/// `a..b` of the value itself.
fn w3c_in<'v>(s: &[u8], text: impl Fn(usize, usize) -> &'v str) -> Option<String> {
    // (\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})
    if s.len() < 16
        || !digits(s, 4)
        || s[4] != b'-'
        || !digits(&s[5..], 2)
        || s[7] != b'-'
        || !digits(&s[8..], 2)
        || !matches!(s[10], b'T' | b't' | b' ')
        || !digits(&s[11..], 2)
        || s[13] != b':'
        || !digits(&s[14..], 2)
    {
        return None;
    }
    let mut out = String::with_capacity(32);
    out.push_str(text(0, 10));
    out.push('T');
    out.push_str(text(11, 16));
    let mut i = 16;
    // (?::(\d{2})(\.\d+)?)?
    if s.get(i) == Some(&b':') && digits(&s[i + 1..], 2) {
        out.push_str(text(i, i + 3));
        i += 3;
        if s.get(i) == Some(&b'.') {
            let n = s[i + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            if n > 0 {
                out.push_str(text(i, i + 1 + n));
                i += 1 + n;
            }
        }
    } else {
        out.push_str(":00");
    }
    // \s*
    while s
        .get(i)
        .is_some_and(|&b| b.is_ascii() && is_py_space(char::from(b)))
    {
        i += 1;
    }
    let r = &s[i..];
    // (Z|[+-]\d{2}:?\d{2})?\Z
    if r.is_empty() {
        return Some(out);
    }
    if r == b"Z" || r == b"z" {
        out.push_str("+00:00");
        return Some(out);
    }
    if (r[0] == b'+' || r[0] == b'-') && digits(&r[1..], 2) {
        let colon = usize::from(r.get(3) == Some(&b':'));
        let mm = &r[3 + colon..];
        if mm.len() == 2 && digits(mm, 2) {
            out.push_str(text(i, i + 3));
            out.push(':');
            out.push_str(text(i + 3 + colon, i + 5 + colon));
            return Some(out);
        }
    }
    None
}

/// `normalize_lastmod`: W3C datetime forms become ISO 8601 (`Z` → `+00:00`, seconds filled in);
/// anything else comes back stripped; empty → None.
pub fn normalize_lastmod(raw: &str) -> Option<String> {
    normalized_lastmod(raw).map(Cow::into_owned)
}

/// `normalize_lastmod` as a `Short`: a value already in its canonical form, as most are, is
/// copied in place without an allocation.
pub fn normalize_lastmod_short(raw: &str) -> Option<Short> {
    normalized_lastmod(raw).map(|value| match value {
        Cow::Borrowed(value) => Short::new(value),
        Cow::Owned(value) => Short::from(value),
    })
}

/// The rule of both: the stripped value, borrowed when it is canonical or no W3C form.
fn normalized_lastmod(raw: &str) -> Option<Cow<'_, str>> {
    let value = py_strip(raw);
    if value.is_empty() {
        return None;
    }
    if canonical(value) {
        return Some(Cow::Borrowed(value));
    }
    Some(w3c(value).map_or(Cow::Borrowed(value), Cow::Owned))
}

/// Python's `float(s)` for the values it accepts that can be in 0..1 (inf and nan never are, so
/// rejecting them gives the same answer); underscores only between digits. Like CPython, a
/// Unicode decimal digit counts as its ASCII digit and any Python whitespace as a space.
fn py_float(s: &str) -> Option<f64> {
    let ascii: String;
    let s = if s.is_ascii() {
        s
    } else {
        ascii = s
            .chars()
            .map(|c| match decimal(c) {
                _ if c.is_ascii() => c,
                Some(d) => char::from(b'0' + d as u8),
                None if is_py_space(c) => ' ',
                None => '?',
            })
            .collect();
        &ascii
    };
    let s = py_strip(s);
    let b = s.as_bytes();
    if b.is_empty()
        || !b
            .iter()
            .all(|&c| c.is_ascii_digit() || b"+-._eE".contains(&c))
    {
        return None;
    }
    let mut plain = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i > 0 && b[i - 1].is_ascii_digit();
            let after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !before || !after {
                return None;
            }
        } else {
            plain.push(c as char);
        }
    }
    plain.parse::<f64>().ok()
}

/// A `<priority>` value: (value, whether it counts as bad). None text → (None, false).
pub fn priority(raw: Option<&str>) -> (Option<f64>, bool) {
    let Some(raw) = raw else { return (None, false) };
    match raw {
        "0" | "0.0" => return (Some(0.0), false),
        "1" | "1.0" => return (Some(1.0), false),
        _ => {}
    }
    if let [b'0', b'.', d] = raw.as_bytes() {
        if d.is_ascii_digit() {
            return (Some(f64::from(d - b'0') / 10.0), false);
        }
    }
    if py_strip(raw).is_empty() {
        return (None, false);
    }
    match py_float(raw) {
        Some(v) if (0.0..=1.0).contains(&v) => (Some(v), false),
        _ => (None, true),
    }
}

const CHANGEFREQ: [&str; 7] = [
    "always", "hourly", "daily", "weekly", "monthly", "yearly", "never",
];

/// A `<changefreq>` value: (value, whether it counts as unknown).
pub fn changefreq(raw: Option<&str>) -> (Option<&'static str>, bool) {
    let value = py_strip(raw.unwrap_or(""));
    if value.is_empty() {
        return (None, false);
    }
    if value.is_ascii() {
        let found = CHANGEFREQ.iter().find(|f| f.eq_ignore_ascii_case(value));
        return match found {
            Some(f) => (Some(f), false),
            None => (None, true),
        };
    }
    // Python lowercases with Unicode rules; the Kelvin sign is the one non-ASCII character that
    // lowercases into a letter of these words.
    let is = |word: &str| {
        let mut lower = value.chars().map(|c| {
            if c == '\u{212a}' {
                'k'
            } else {
                c.to_ascii_lowercase()
            }
        });
        word.chars().all(|w| lower.next() == Some(w)) && lower.next().is_none()
    };
    match CHANGEFREQ.iter().find(|&&f| is(f)) {
        Some(f) => (Some(f), false),
        None => (None, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lastmod_forms() {
        let cases = [
            ("2020", Some("2020")),
            ("2020-01", Some("2020-01")),
            ("2020-01-02", Some("2020-01-02")),
            (" 2020-01-02\n", Some("2020-01-02")),
            (
                "2020-01-02T03:04:05+01:00",
                Some("2020-01-02T03:04:05+01:00"),
            ),
            (
                "2020-01-02T03:04:05.123-01:00",
                Some("2020-01-02T03:04:05.123-01:00"),
            ),
            ("2020-01-02T03:04Z", Some("2020-01-02T03:04:00+00:00")),
            ("2020-01-02t03:04z", Some("2020-01-02T03:04:00+00:00")),
            (
                "2020-01-02 03:04:05.5 +0130",
                Some("2020-01-02T03:04:05.5+01:30"),
            ),
            ("2020-01-02T03:04:05", Some("2020-01-02T03:04:05")),
            ("2020-01-02T03:04:05.", Some("2020-01-02T03:04:05.")),
            ("2020-01-02T03:04:05+013", Some("2020-01-02T03:04:05+013")),
            ("2020-01-02T03:04:05Z", Some("2020-01-02T03:04:05+00:00")),
            ("yesterday", Some("yesterday")),
            ("  ", None),
            ("", None),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_lastmod(raw).as_deref(), want, "{raw:?}");
        }
    }

    #[test]
    fn priorities() {
        assert_eq!(priority(Some("0.5")), (Some(0.5), false));
        assert_eq!(priority(Some(" 0.5 ")), (Some(0.5), false));
        assert_eq!(priority(Some("0_1")), (Some(1.0), false));
        assert_eq!(priority(Some(".25")), (Some(0.25), false));
        assert_eq!(priority(Some("1e-1")), (Some(0.1), false));
        assert_eq!(priority(Some("1__0")), (None, true));
        assert_eq!(priority(Some("nan")), (None, true));
        assert_eq!(priority(Some("2")), (None, true));
        assert_eq!(priority(Some(" ")), (None, false));
        assert_eq!(priority(None), (None, false));
    }

    #[test]
    fn references() {
        let d = decode(
            b"a&amp;b&lt;&#65;&#x42;&eacute;&AMP;&#X41;&#65&#123456789;&",
            false,
        );
        assert_eq!(d.text, "a&b<AB&eacute;&AMP;&#X41;&#65&#123456789;&");
        assert!(!d.damaged);
        let d = decode(b"a&#0;b", false);
        assert_eq!(d.text, "ab");
        assert!(d.damaged);
        assert_eq!(decode(b"a\r\nb\rc", false).text, "a\nb\nc");
        assert_eq!(decode(b" a\r\n\tb&#10;", true).text, " a  b\n");
    }
}
