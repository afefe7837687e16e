//! The sitemap document scanner: bytes in (in chunks of any size), entries, child sitemaps and
//! malformed values out.
//!
//! The first bytes are sniffed for the document kind (urlset, sitemap index, RSS, Atom, a text
//! list of URLs, or not a sitemap); XML then goes through a streaming scanner (`xml`) that
//! matches elements by local name whatever their namespace, never expands an entity beyond XML's
//! five and character references, and never loads anything. Results are those of the Python
//! parser this replaces on well-formed input, and do not depend on how the input is split.
#![forbid(unsafe_code)]

mod decode;
pub mod rfc822;
pub mod values;
mod xml;

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use crate::entry::{Entry, Malformed};
use crate::urls::{self, Idna};
use decode::{Choice, Transcoder, Utf16};
pub use rfc822::normalize_rfc822;
pub use values::{normalize_lastmod, py_strip};

/// The kind of a document, as the first bytes tell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Urlset,
    SitemapIndex,
    Rss,
    Atom,
    Text,
    NotASitemap,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Urlset => "urlset",
            Kind::SitemapIndex => "sitemapindex",
            Kind::Rss => "rss",
            Kind::Atom => "atom",
            Kind::Text => "text",
            Kind::NotASitemap => "not-a-sitemap",
        }
    }
}

const SNIFF_BYTES: usize = 1024;
/// The kind is first sniffed once this much has arrived, and again each time the buffer
/// doubles: an XML root or a text sitemap's first line is usually within it, so a slow
/// server's first entries are read before a kilobyte has come.
const FIRST_SNIFF: usize = 64;
/// A prolog (DOCTYPE, comments) larger than this is hostile, not a sitemap.
const MAX_PROLOG: usize = 1 << 20;
/// No URL is this long: a text line longer than this is damage.
const MAX_URL_BYTES: usize = xml::MAX_VALUE;
/// Positional errors kept per document (the first ones say what went wrong).
pub(crate) const MAX_ERRORS: usize = 20;
const BOM: &[u8] = b"\xef\xbb\xbf";

/// What the scanner has produced, and the document's URL that values resolve against.
pub(crate) struct Out {
    base: String,
    entries: Vec<Entry>,
    sitemaps: Vec<String>,
    /// The `<lastmod>` of each child sitemap that has one, with its URL.
    sitemap_lastmods: Vec<(String, String)>,
    malformed: Vec<Malformed>,
    notes: Vec<String>,
    errors: Vec<String>,
    damaged: bool,
    bad_priority: u64,
    bad_changefreq: u64,
    recovered: u64,
    clean: urls::CleanCheck,
}

impl Out {
    fn malformed(&mut self, raw: &str, reason: &'static str) {
        self.malformed.push(Malformed {
            raw: values::cut_chars(raw, 2000).to_owned(),
            reason,
        });
    }

    /// A URL value as the Python parser's `_resolve` took it: stripped, resolved against the
    /// document's URL, normalized (not for child sitemaps); a value that cannot be used is
    /// recorded as malformed, with why.
    fn resolve(
        &mut self,
        raw: Option<String>,
        normalize: bool,
        idna: &mut dyn Idna,
    ) -> Option<String> {
        let Some(raw) = raw else {
            self.malformed("", "entry without a URL");
            return None;
        };
        // A clean value comes back borrowed: reuse the String when it is the whole of it.
        let found = match urls::resolve_loc_cow(&raw, &self.base, normalize, idna, &mut self.clean)
        {
            None => None,
            Some(Cow::Owned(url)) => Some(Err(url)),
            Some(Cow::Borrowed(s)) => {
                Some(Ok((s.as_ptr() as usize - raw.as_ptr() as usize, s.len())))
            }
        };
        match found {
            Some(Err(url)) => Some(url),
            Some(Ok((start, len))) => {
                if start == 0 && len == raw.len() {
                    Some(raw)
                } else {
                    Some(raw[start..start + len].to_owned())
                }
            }
            None => {
                let value = py_strip(&raw);
                let reason = if value.is_empty() {
                    "empty URL"
                } else {
                    "cannot be resolved to an http(s) URL"
                };
                let value = value.to_owned();
                self.malformed(&value, reason);
                None
            }
        }
    }
}

enum Stage {
    Sniff,
    Text,
    Xml(Box<xml::Xml>),
    Ignore,
}

/// One sitemap document, fed in chunks.
pub struct Scanner {
    out: Out,
    kind: Option<Kind>,
    stage: Stage,
    sniff: Vec<u8>,
    sniff_at: usize,
    utf16: Option<Utf16>,
    /// The HTTP charset (used when the XML declaration names no encoding).
    charset: Option<String>,
    /// Whether the encoding is settled (a byte order mark, the declaration or the charset).
    decided: bool,
    /// Decodes a document in an encoding other than UTF-8 and UTF-16 as it arrives.
    front: Option<Transcoder>,
    /// Bytes that were not of the `front` encoding were read as U+FFFD.
    front_bad: bool,
    /// Notes (false) and errors (true) about the encoding, told once the kind is known.
    told: Vec<(bool, String)>,
    line: Vec<u8>,
    line_bytes: usize,
    cut: bool,
    closed: bool,
    scratch: Vec<u8>,
    utf8: Utf8Check,
}

/// Whether the bytes of a UTF-8 document are UTF-8, checked as they stream by: values with bad
/// bytes are read with U+FFFD, and the document is marked damaged (at close, so the error is the
/// same however the bytes were split).
#[derive(Default)]
struct Utf8Check {
    carry: Vec<u8>, // the start of a character cut by the end of the last chunk (≤ 3 bytes)
    bad: bool,
}

impl Utf8Check {
    /// Check the next chunk; the chunk as text when it is UTF-8 on its own (no character cut
    /// at either end, the usual case), so that its fields are sliced from it, not each
    /// validated again.
    fn feed<'a>(&mut self, data: &'a [u8]) -> Option<&'a str> {
        if self.bad {
            return std::str::from_utf8(data).ok();
        }
        if self.carry.is_empty() {
            return match std::str::from_utf8(data) {
                Ok(text) => Some(text),
                Err(e) => {
                    if e.error_len().is_none() {
                        self.carry = data[e.valid_up_to()..].to_vec();
                    } else {
                        self.bad = true;
                    }
                    None
                }
            };
        }
        let joined = [self.carry.as_slice(), data].concat();
        match std::str::from_utf8(&joined) {
            Ok(_) => self.carry.clear(),
            Err(e) if e.error_len().is_none() => self.carry = joined[e.valid_up_to()..].to_vec(),
            Err(_) => self.bad = true,
        }
        None
    }

    fn ended_well(&self) -> bool {
        !self.bad && self.carry.is_empty()
    }
}

/// Python's `bytes.isspace()` set (what `bytes.strip()` removes).
fn is_bytes_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

fn bytes_strip(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|&b| !is_bytes_space(b))
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|&b| !is_bytes_space(b))
        .map_or(start, |e| e + 1);
    &s[start..end.max(start)]
}

fn is_sniff_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn starts_with_http(s: &[u8]) -> bool {
    let lower = |n: usize| s.len() >= n && s[..n].eq_ignore_ascii_case(&b"https://"[..n]);
    (s.len() >= 7 && s[..7].eq_ignore_ascii_case(b"http://")) || lower(8)
}

/// What the prolog says: the spans of DOCTYPE declarations to cut, and the root's prefix and
/// name ("" for none, "!DOCTYPE" for an unfinished DOCTYPE).
struct Prolog {
    cuts: Vec<(usize, usize)>,
    root: String,
}

fn is_re_space(b: u8) -> bool {
    is_bytes_space(b)
}

fn is_re_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `<!DOCTYPE[^\[>]*(\[.*?\]\s*)?>` (case-insensitive) at `at`: the end of the match.
fn doctype_end(body: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 9;
    while i < body.len() && body[i] != b'[' && body[i] != b'>' {
        i += 1;
    }
    match body.get(i) {
        Some(b'>') => Some(i + 1),
        Some(b'[') => {
            let mut j = i + 1;
            loop {
                let k = j + memchr::memchr(b']', &body[j..])?;
                let mut e = k + 1;
                while e < body.len() && is_re_space(body[e]) {
                    e += 1;
                }
                if body.get(e) == Some(&b'>') {
                    return Some(e + 1);
                }
                j = k + 1;
            }
        }
        _ => None,
    }
}

/// The Python parser's `_strip_prolog`: None means "need more bytes".
fn strip_prolog(body: &[u8], final_: bool) -> Option<Prolog> {
    // Beyond the first MiB the answer is given as if the body ended there, so that it does not
    // depend on how the bytes were split.
    let more = !final_ && body.len() < MAX_PROLOG;
    let body = &body[..body.len().min(MAX_PROLOG)];
    let mut pos = 0;
    let mut cuts = Vec::new();
    let done = |cuts: Vec<(usize, usize)>, root: &str| {
        Some(Prolog {
            cuts,
            root: root.to_owned(),
        })
    };
    loop {
        let Some(k) = memchr::memchr(b'<', &body[pos..]) else {
            return if more { None } else { done(cuts, "") };
        };
        let lt = pos + k;
        let head = &body[lt..(lt + 9).min(body.len())];
        let doctype_start = b"<!DOCTYPE".len() >= head.len()
            && b"<!DOCTYPE"[..head.len()].eq_ignore_ascii_case(head);
        if more && head.len() < 9 && (b"<!--".starts_with(head) || doctype_start) {
            return None;
        }
        if body[lt..].starts_with(b"<?") || body[lt..].starts_with(b"<!--") {
            let close: &[u8] = if body[lt + 1] == b'?' { b"?>" } else { b"-->" };
            let Some(end) = memchr::memmem::find(&body[lt..], close) else {
                return if more { None } else { done(cuts, "") };
            };
            pos = lt + end + close.len();
            continue;
        }
        if head.len() == 9 && head.eq_ignore_ascii_case(b"<!DOCTYPE") {
            let Some(end) = doctype_end(body, lt) else {
                return if more { None } else { done(cuts, "!DOCTYPE") };
            };
            cuts.push((lt, end));
            pos = end;
            continue;
        }
        // <\s*(?:([A-Za-z_][\w.-]*):)?([A-Za-z_][\w.-]*)
        let mut j = lt + 1;
        while j < body.len() && is_re_space(body[j]) {
            j += 1;
        }
        let name_at = |at: usize| -> usize {
            if at < body.len() && (body[at].is_ascii_alphabetic() || body[at] == b'_') {
                let mut e = at + 1;
                while e < body.len() && (is_re_word(body[e]) || body[e] == b'.' || body[e] == b'-')
                {
                    e += 1;
                }
                e
            } else {
                at
            }
        };
        let e1 = name_at(j);
        if e1 == j {
            if more && body[lt + 1..].iter().all(|&b| is_sniff_ws(b)) {
                return None;
            }
            return done(cuts, "");
        }
        let (root, end) = if body.get(e1) == Some(&b':') && name_at(e1 + 1) > e1 + 1 {
            let e2 = name_at(e1 + 1);
            (&body[e1 + 1..e2], e2)
        } else {
            (&body[j..e1], e1)
        };
        if more && (end == body.len() || &body[end..] == b":") {
            return None;
        }
        return done(cuts, &String::from_utf8_lossy(root));
    }
}

/// The `encoding` pseudo-attribute of an XML declaration at the start of `body`.
fn declared_encoding(body: &[u8]) -> Option<String> {
    if !body.starts_with(b"<?xml") || !body.get(5).is_some_and(|&b| is_sniff_ws(b)) {
        return None;
    }
    let end = memchr::memmem::find(body, b"?>")?;
    let decl = &body[5..end];
    let at = memchr::memmem::find(decl, b"encoding")?;
    let mut rest = &decl[at + 8..];
    rest = &rest[rest.iter().take_while(|&&b| is_sniff_ws(b)).count()..];
    rest = rest.strip_prefix(b"=")?;
    rest = &rest[rest.iter().take_while(|&&b| is_sniff_ws(b)).count()..];
    let q = *rest.first()?;
    if q != b'"' && q != b'\'' {
        return None;
    }
    let close = memchr::memchr(q, &rest[1..])?;
    Some(String::from_utf8_lossy(&rest[1..1 + close]).into_owned())
}

impl Scanner {
    /// `url`: the document's final URL (relative values resolve against it).
    pub fn new(url: &str) -> Self {
        Self::with_charset(url, None)
    }

    /// `charset`: the HTTP Content-Type's charset, used when the document does not declare its
    /// encoding (a byte order mark, then the XML declaration, win over it).
    pub fn with_charset(url: &str, charset: Option<&str>) -> Self {
        Scanner {
            out: Out {
                base: url.to_owned(),
                entries: Vec::new(),
                sitemaps: Vec::new(),
                sitemap_lastmods: Vec::new(),
                malformed: Vec::new(),
                notes: Vec::new(),
                errors: Vec::new(),
                damaged: false,
                bad_priority: 0,
                bad_changefreq: 0,
                recovered: 0,
                clean: urls::CleanCheck::default(),
            },
            kind: None,
            stage: Stage::Sniff,
            sniff: Vec::new(),
            sniff_at: FIRST_SNIFF,
            utf16: None,
            charset: charset.map(str::to_owned),
            decided: false,
            front: None,
            front_bad: false,
            told: Vec::new(),
            line: Vec::new(),
            line_bytes: 0,
            cut: false,
            closed: false,
            scratch: Vec::new(),
            utf8: Utf8Check::default(),
        }
    }

    pub fn kind(&self) -> Option<Kind> {
        self.kind
    }

    pub fn take_entries(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.out.entries)
    }

    pub fn take_sitemaps(&mut self) -> Vec<String> {
        std::mem::take(&mut self.out.sitemaps)
    }

    /// `(url, lastmod)` of the child sitemaps taken so far that have a `<lastmod>`.
    pub fn take_sitemap_lastmods(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.out.sitemap_lastmods)
    }

    pub fn take_malformed(&mut self) -> Vec<Malformed> {
        std::mem::take(&mut self.out.malformed)
    }

    pub fn notes(&self) -> &[String] {
        &self.out.notes
    }

    pub fn errors(&self) -> &[String] {
        &self.out.errors
    }

    pub fn damaged(&self) -> bool {
        self.out.damaged || !self.out.errors.is_empty()
    }

    /// Entries produced so far and not yet taken.
    pub fn pending_entries(&self) -> usize {
        self.out.entries.len()
    }

    /// The body was cut short (size cap, timeout, reset): call before `close()`.
    pub fn note_truncated(&mut self) {
        self.cut = true;
    }

    pub fn feed(&mut self, data: &[u8], idna: &mut dyn Idna) {
        if self.closed || data.is_empty() {
            return;
        }
        if let Some(utf16) = self.utf16.as_mut() {
            let mut buf = std::mem::take(&mut self.scratch);
            buf.clear();
            utf16.decode(data, &mut buf);
            self.accept(&buf, idna);
            self.scratch = buf;
        } else if let Some(front) = self.front.as_mut() {
            let mut buf = std::mem::take(&mut self.scratch);
            buf.clear();
            self.front_bad |= front.decode(data, false, &mut buf);
            self.accept(&buf, idna);
            self.scratch = buf;
        } else {
            self.accept(data, idna);
        }
    }

    fn accept(&mut self, data: &[u8], idna: &mut dyn Idna) {
        if self.kind.is_none() {
            self.sniff.extend_from_slice(data);
            if !self.decided
                && (self.sniff.starts_with(b"\xff\xfe") || self.sniff.starts_with(b"\xfe\xff"))
            {
                // UTF-16 (legal XML, and seen from Windows tools) becomes UTF-8 as it arrives,
                // so every later step sees ASCII-compatible bytes.
                let mut utf16 = Utf16::new();
                let raw = std::mem::take(&mut self.sniff);
                utf16.decode(&raw, &mut self.sniff);
                self.utf16 = Some(utf16);
                self.decided = true;
            }
            if self.sniff.len() < self.sniff_at {
                return;
            }
            if !self.decided && !self.decide(false) {
                // Each try reads the buffer: trying again once it has doubled keeps it linear.
                self.sniff_at = 2 * self.sniff.len();
                return;
            }
            let head = self
                .sniff
                .iter()
                .position(|&b| !(is_sniff_ws(b) || BOM.contains(&b)))
                .map_or(&[][..], |p| &self.sniff[p..]);
            // Before a kilobyte, only what the first bytes already settle: an XML prolog (the
            // prolog reader says when it needs more) or a complete first line of text.
            let settled = head.first() == Some(&b'<') || memchr::memchr(b'\n', head).is_some();
            if (head.len() >= SNIFF_BYTES || (settled && head.len() >= 8))
                && self.start(false, idna)
            {
                return;
            }
            // Each try reads the whole buffer: trying again only once it has doubled keeps a
            // long prolog trickled in small chunks linear.
            self.sniff_at = 2 * self.sniff.len();
            return;
        }
        self.route(data, idna);
    }

    fn route(&mut self, data: &[u8], idna: &mut dyn Idna) {
        match self.stage {
            Stage::Text => self.text_feed(data, idna),
            Stage::Xml(_) => {
                let filtered = decode::drop_controls(data);
                self.xml_feed(&filtered, idna);
            }
            _ => {}
        }
    }

    fn xml_feed(&mut self, data: &[u8], idna: &mut dyn Idna) {
        let Stage::Xml(x) = &mut self.stage else {
            return;
        };
        let text = if self.utf16.is_none() && self.front.is_none() {
            self.utf8.feed(data)
        } else {
            std::str::from_utf8(data).ok()
        };
        x.feed(data, text, &mut self.out, idna);
    }

    /// Decide the kind from the first bytes; false: need more bytes.
    fn start(&mut self, final_: bool, idna: &mut dyn Idna) -> bool {
        let buffered = std::mem::take(&mut self.sniff);
        let mut body: &[u8] = buffered.strip_prefix(BOM).unwrap_or(&buffered);
        body = &body[body.iter().take_while(|&&b| is_sniff_ws(b)).count()..];
        if body.is_empty() {
            if final_ {
                self.not_a_sitemap("empty body");
            }
            self.sniff = buffered;
            return final_;
        }
        if body[0] != b'<' {
            let first = bytes_strip(body.split(|&b| b == b'\n').next().unwrap_or(b""));
            if starts_with_http(first) {
                self.kind = Some(Kind::Text);
                self.stage = Stage::Text;
                self.tell_encoding();
                self.text_feed(body, idna);
            } else {
                self.not_a_sitemap("not XML and not a list of URLs");
            }
            return true;
        }
        let filtered = decode::drop_controls(body).into_owned();
        let Some(prolog) = strip_prolog(&filtered, final_) else {
            self.sniff = buffered;
            return false;
        };
        if !prolog.cuts.is_empty() {
            self.out
                .notes
                .push("DOCTYPE declaration ignored (sitemaps never need one)".to_owned());
        }
        let kind = match prolog.root.to_ascii_lowercase().as_str() {
            "urlset" => Some(Kind::Urlset),
            "sitemapindex" => Some(Kind::SitemapIndex),
            "rss" => Some(Kind::Rss),
            "feed" => Some(Kind::Atom),
            _ => None,
        };
        let Some(kind) = kind else {
            let why = if prolog.root.eq_ignore_ascii_case("html") {
                "HTML page".to_owned()
            } else if prolog.root.is_empty() {
                "no root element".to_owned()
            } else {
                format!("root element <{}>", prolog.root)
            };
            self.not_a_sitemap(&why);
            return true;
        };
        self.kind = Some(kind);
        self.tell_encoding();
        self.stage = Stage::Xml(Box::new(xml::Xml::new(kind)));
        let mut kept = Vec::with_capacity(filtered.len());
        let mut rest = 0;
        for &(a, b) in &prolog.cuts {
            kept.extend_from_slice(&filtered[rest..a]);
            rest = b;
        }
        kept.extend_from_slice(&filtered[rest..]);
        self.xml_feed(&kept, idna);
        true
    }

    /// Settle how the bytes become UTF-8 from the first bytes (`sniff`, still raw); false:
    /// need more. A byte order mark wins (UTF-16 is handled before this), then the XML
    /// declaration's `encoding`, then the HTTP charset. From here on the bytes are decoded as they
    /// arrive, so every later step reads UTF-8; UTF-8 itself is never decoded.
    fn decide(&mut self, final_: bool) -> bool {
        let buf = &self.sniff;
        let head = &buf[buf.iter().take_while(|&&b| is_sniff_ws(b)).count()..];
        // Leading whitespace is waited out; a declaration not ended within a kilobyte is none.
        let wait = !final_ && head.len() < SNIFF_BYTES;
        if wait && (BOM.starts_with(buf) || buf == b"\xff" || buf == b"\xfe") {
            return false; // perhaps the start of a byte order mark
        }
        self.decided = true;
        if buf.starts_with(BOM) {
            return true;
        }
        const DECL: &[u8] = b"<?xml ";
        if wait && head.len() < DECL.len() && DECL[..head.len()] == *head {
            self.decided = false;
            return false;
        }
        let mut declared = None;
        if head.starts_with(b"<?xml") {
            let head = decode::drop_controls(head);
            match memchr::memmem::find(&head, b"?>") {
                Some(_) => declared = declared_encoding(&head),
                None if wait => {
                    self.decided = false;
                    return false;
                }
                None => {}
            }
        }
        let Some(label) = declared.or_else(|| self.charset.clone()) else {
            return true;
        };
        match decode::choose(&label) {
            Choice::Utf8 => {}
            Choice::Unknown => self.told.push((
                false,
                format!("encoding {label:?} not supported: read as UTF-8"),
            )),
            // UTF-16 without a byte order mark is not what it says (a strict parser rejects
            // it); these bytes are most likely UTF-8, and are read as such.
            Choice::Utf16WithoutBom => self.told.push((
                true,
                format!("encoding {label:?} declared without a byte order mark: read as UTF-8"),
            )),
            Choice::Decode(mut front) => {
                let raw = std::mem::take(&mut self.sniff);
                self.front_bad |= front.decode(&raw, final_, &mut self.sniff);
                self.front = Some(front);
            }
        }
        true
    }

    /// The encoding's notes and errors, once the document is known to be a sitemap.
    fn tell_encoding(&mut self) {
        for (error, what) in std::mem::take(&mut self.told) {
            if error {
                self.out.errors.push(what);
            } else {
                self.out.notes.push(what);
            }
        }
    }

    fn not_a_sitemap(&mut self, why: &str) {
        self.kind = Some(Kind::NotASitemap);
        self.stage = Stage::Ignore;
        self.out.notes.push(format!("not a sitemap: {why}"));
    }

    // -- text sitemaps ------------------------------------------------------------------------

    /// Complete lines are read at once; the unfinished last one is kept (up to one byte over the
    /// limit, which shows the excess) until it ends.
    fn text_feed(&mut self, data: &[u8], idna: &mut dyn Idna) {
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', data) {
            self.hold_line(&data[start..nl]);
            let line = std::mem::take(&mut self.line);
            self.line_bytes = 0;
            self.text_line(&line, idna);
            self.line = line;
            self.line.clear();
            start = nl + 1;
        }
        self.hold_line(&data[start..]);
    }

    fn hold_line(&mut self, piece: &[u8]) {
        let room = (MAX_URL_BYTES + 1).saturating_sub(self.line_bytes);
        if room > 0 && !piece.is_empty() {
            let n = room.min(piece.len());
            self.line.extend_from_slice(&piece[..n]);
            self.line_bytes += n;
        }
    }

    fn text_line(&mut self, line: &[u8], idna: &mut dyn Idna) {
        let stripped = bytes_strip(line);
        if stripped.is_empty() {
            return;
        }
        let raw = String::from_utf8_lossy(stripped);
        if line.len() > MAX_URL_BYTES {
            self.out.malformed(&raw, "line too long for a URL");
            return;
        }
        if !starts_with_http(raw.as_bytes()) {
            self.out.malformed(&raw, "not an absolute URL");
            return;
        }
        if let Some(url) = self.out.resolve(Some(raw.into_owned()), true, idna) {
            self.out.entries.push(Entry {
                url,
                ..Entry::default()
            });
        }
    }

    fn end_text(&mut self, idna: &mut dyn Idna) {
        let line = std::mem::take(&mut self.line);
        self.line_bytes = 0;
        if !self.cut {
            self.text_line(&line, idna);
        } else if !bytes_strip(&line).is_empty() {
            // The body stopped inside this line: a URL cut short is still a URL, and a wrong one.
            let raw = String::from_utf8_lossy(bytes_strip(&line)).into_owned();
            self.out.malformed(&raw, "entry cut off");
            self.out
                .errors
                .push("document ended inside an entry".to_owned());
        }
    }

    // -- the end ------------------------------------------------------------------------------

    /// The document is complete (or was cut, see `note_truncated`): flush what is buffered.
    pub fn close(&mut self, idna: &mut dyn Idna) {
        if self.closed {
            return;
        }
        if let Some(utf16) = self.utf16.as_mut() {
            let mut rest = Vec::new();
            utf16.finish(&mut rest);
            if !rest.is_empty() {
                self.accept(&rest, idna);
            }
        } else if let Some(front) = self.front.as_mut() {
            let mut rest = Vec::new();
            self.front_bad |= front.decode(b"", true, &mut rest);
            if !rest.is_empty() {
                self.accept(&rest, idna);
            }
        }
        if self.kind.is_none() {
            if !self.decided {
                self.decide(true);
            }
            self.start(true, idna);
        }
        match &mut self.stage {
            Stage::Text => self.end_text(idna),
            Stage::Xml(x) => {
                x.close(&mut self.out);
                let bad = match &self.front {
                    Some(front) if self.front_bad => Some(front.name()),
                    Some(_) => None,
                    None => (!self.utf8.ended_well()).then_some("UTF-8"),
                };
                if let Some(name) = bad {
                    self.out.damaged = true;
                    if self.out.errors.len() < MAX_ERRORS {
                        let what = format!("bytes that are not {name} (read as U+FFFD)");
                        self.out.errors.push(what);
                    }
                }
            }
            _ => {}
        }
        let out = &mut self.out;
        if out.recovered > 0 {
            out.notes
                .push(format!("recovered {} URLs after XML damage", out.recovered));
        }
        if out.bad_priority > 0 {
            out.notes.push(format!(
                "{} priority values outside 0-1 or not numbers",
                out.bad_priority
            ));
        }
        if out.bad_changefreq > 0 {
            out.notes
                .push(format!("{} unknown changefreq values", out.bad_changefreq));
        }
        self.closed = true;
    }
}
