//! A batch of inventory rows and their encodings (JSON lines, CSV, plain URLs).
//!
//! The CLI writes batches straight from here, so `sitescout urls` builds no Python object per
//! URL. The encodings are byte-for-byte those of the Python writers (`json.encoder`'s
//! `encode_basestring`, `repr(float)`, the csv module's minimal quoting).
#![forbid(unsafe_code)]

use std::io::Write;
use std::sync::Arc;

use crate::entry::{boxed_if_any, Entry, Short};
use crate::scope::{Lower, Place, Scope};
use crate::seen::SeenSet;

/// Where a row's URL was found: a sitemap, the link crawl, an llms.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    #[default]
    Sitemap,
    Bfs,
    Llms,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Sitemap => "sitemap",
            Source::Bfs => "bfs",
            Source::Llms => "llms.txt",
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "sitemap" => Some(Source::Sitemap),
            "bfs" => Some(Source::Bfs),
            "llms.txt" => Some(Source::Llms),
            _ => None,
        }
    }
}

/// What rows from the link crawl and llms.txt carry besides a sitemap row's fields: boxed, so a
/// sitemap row that has none of it costs one pointer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extra {
    pub title: Option<String>,
    pub canonical: Option<String>,
    /// The markdown copy an llms.txt links to.
    pub md_url: Option<String>,
    /// Set when a walk merges sources: every source that listed the URL, in order.
    pub sources: Vec<Source>,
}

/// What an hreflang alternate's row says of it: its language and the page that lists it
/// (boxed: a page's row, nine in ten, has neither).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlternateOf {
    pub hreflang: Option<Short>,
    pub page: Option<String>,
}

/// One inventory row: a page entry or, with `alternate_of` set, an hreflang alternate of one.
#[derive(Debug, Clone)]
pub struct Row {
    pub entry: Entry,
    pub sitemap: Arc<str>,
    pub depth: u32,
    pub source: Source,
    pub alternate: Option<Box<AlternateOf>>,
    pub extra: Option<Box<Extra>>,
}

impl Row {
    pub fn hreflang(&self) -> Option<&str> {
        self.alternate.as_ref().and_then(|a| a.hreflang.as_deref())
    }

    pub fn alternate_of(&self) -> Option<&str> {
        self.alternate.as_ref().and_then(|a| a.page.as_deref())
    }

    pub fn title(&self) -> Option<&str> {
        self.extra.as_ref().and_then(|x| x.title.as_deref())
    }

    pub fn md_url(&self) -> Option<&str> {
        self.extra.as_ref().and_then(|x| x.md_url.as_deref())
    }

    pub fn canonical(&self) -> Option<&str> {
        self.extra.as_ref().and_then(|x| x.canonical.as_deref())
    }

    pub fn sources(&self) -> &[Source] {
        self.extra.as_ref().map_or(&[], |x| x.sources.as_slice())
    }

    pub fn extra_mut(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Box::default)
    }
}

#[derive(Debug, Default, Clone)]
pub struct Rows(pub Vec<Row>);

/// `take_batches` makes room for at most this many rows and a quarter more in what stays
/// (about 360 KiB of rows).
const MAX_ROOM: usize = 2048;

impl Rows {
    pub fn from_document(entries: Vec<Entry>, sitemap: &str, depth: u32) -> Self {
        let sitemap: Arc<str> = Arc::from(sitemap);
        Rows(
            entries
                .into_iter()
                .map(|entry| Row {
                    entry,
                    sitemap: Arc::clone(&sitemap),
                    depth,
                    source: Source::Sitemap,
                    alternate: None,
                    extra: None,
                })
                .collect(),
        )
    }

    /// Keep the rows whose URL was not seen before (adding them); returns how many went.
    pub fn retain_new(&mut self, seen: &mut SeenSet) -> usize {
        let fresh = self.fresh(seen);
        self.keep(fresh)
    }

    /// Keep the rows whose flag is set (one per row, in order); returns how many went.
    fn keep(&mut self, flags: Vec<bool>) -> usize {
        let mut flags = flags.into_iter();
        let before = self.0.len();
        self.0.retain(|_| flags.next().unwrap_or(false));
        before - self.0.len()
    }

    /// Whether each row's URL is new to `seen` (now added), in order. A row with a markdown
    /// copy (an llms.txt link) is new only when that is new too: a sitemap that listed the copy
    /// listed the page.
    ///
    /// Without markdown copies, every URL is hashed first and the hashes then added in a loop
    /// of their own: each addition reads a random slot of a table of megabytes, nearly always a
    /// cache miss, and a loop that does nothing else lets the processor wait for several at
    /// once (with the hashing between them, that read took 8 % of a 1M-URL walk's samples in
    /// `perf`; so, 5 %). A loop before it only reads each hash's first slot: no addition waits
    /// on another's branch there, so more misses overlap (`retain_new_with_alternates` 0.92x).
    fn fresh(&self, seen: &mut SeenSet) -> Vec<bool> {
        if self.0.iter().any(|row| row.md_url().is_some()) {
            // A copy may be another row's page: added in the rows' order, as listed.
            return self
                .0
                .iter()
                .map(|row| {
                    let new = seen.add(&row.entry.url);
                    match row.md_url() {
                        Some(md) => seen.add(md) && new,
                        None => new,
                    }
                })
                .collect();
        }
        let hashes: Vec<u64> = self.0.iter().map(|row| seen.hash(&row.entry.url)).collect();
        for &h in &hashes {
            std::hint::black_box(seen.touch(h));
        }
        hashes.into_iter().map(|h| seen.add_hash(h)).collect()
    }

    /// Keep the rows of the scope's site under its base path: how many of the site's rows were
    /// examined and how many of them matched (other sites' rows go uncounted).
    pub fn retain_under(&mut self, scope: &Scope, lower: &mut dyn Lower) -> (usize, usize) {
        let (mut examined, mut matched) = (0, 0);
        self.0
            .retain(|row| match scope.place(row.entry.url.as_bytes(), lower) {
                Place::OtherSite => false,
                Place::Outside => {
                    examined += 1;
                    false
                }
                Place::Under => {
                    examined += 1;
                    matched += 1;
                    true
                }
            });
        (examined, matched)
    }

    /// Append a row found outside a sitemap's urlset (an llms.txt link, a crawled page) or made
    /// by hand: no lastmod, priority or changefreq.
    pub fn push(&mut self, url: String, sitemap: &str, depth: u32, source: Source, extra: Extra) {
        self.0.push(Row {
            entry: Entry {
                url,
                ..Entry::default()
            },
            sitemap: Arc::from(sitemap),
            depth,
            source,
            alternate: None,
            extra: boxed_if_any(extra),
        });
    }

    /// `retain_new`, then the alternates of every row, the dropped ones included (a page seen
    /// before may still list alternates nobody listed yet): the count dropped and the alternates.
    pub fn retain_new_with_alternates(
        &mut self,
        seen: &mut SeenSet,
        held: &mut SeenSet,
    ) -> (usize, Rows) {
        let fresh = self.fresh(seen);
        let alternates = self.alternates(seen, held);
        (self.keep(fresh), alternates)
    }

    /// The hreflang alternates of these rows, as rows of their own, whose URL is neither in
    /// `seen` (the pages, and the alternates handed on) nor in `held` (the alternates waiting);
    /// those returned are added to `held`.
    ///
    /// Whether each alternate is in `seen` is read in a loop of its own first, as in `fresh`:
    /// each is a read of a large table that nearly always misses the cache.
    pub fn alternates(&self, seen: &SeenSet, held: &mut SeenSet) -> Rows {
        let listed = || {
            self.0
                .iter()
                .flat_map(|row| row.entry.alternates().iter().map(move |alt| (row, alt)))
        };
        let hashes: Vec<u64> = listed().map(|(_, alt)| seen.hash(&alt.url)).collect();
        if hashes.is_empty() {
            return Rows::default();
        }
        let known: Vec<bool> = hashes.iter().map(|&h| seen.contains_hash(h)).collect();
        let mut out = Vec::new();
        for ((row, alt), known) in listed().zip(known) {
            if !known && held.add(&alt.url) {
                out.push(Row {
                    entry: Entry {
                        url: alt.url.clone(),
                        ..Entry::default()
                    },
                    sitemap: Arc::clone(&row.sitemap),
                    depth: row.depth,
                    source: Source::Sitemap,
                    alternate: Some(Box::new(AlternateOf {
                        hreflang: Some(Short::new(&alt.hreflang)),
                        page: Some(row.entry.url.clone()),
                    })),
                    extra: None,
                });
            }
        }
        Rows(out)
    }

    /// Move every row of `other` to the end of these (`other` is left empty); into an empty
    /// batch without the room for them, the rows are not moved at all.
    pub fn append(&mut self, other: &mut Rows) {
        if self.0.is_empty() && self.0.capacity() < other.0.len() {
            std::mem::swap(&mut self.0, &mut other.0);
            other.0.clear();
        } else {
            self.0.append(&mut other.0);
        }
    }

    pub fn pages(&self) -> usize {
        self.0.iter().filter(|r| r.alternate_of().is_none()).count()
    }

    pub fn split_off(&mut self, at: usize) -> Rows {
        Rows(self.0.split_off(at.min(self.0.len())))
    }

    /// Every whole run of `size` rows from the front, in order; what is left (fewer than
    /// `size`) stays, with room for `size` and a quarter more (the emitter's batch is filled
    /// by appends of a document piece's rows, and growing it step by step moved every row at
    /// each step). The usual case, one run, is handed on as it is: only the rows past it move.
    /// More runs move each row once, each its own `Rows` sized to fit, where splitting one off
    /// the front at a time would move the rest again every time. The run handed on as it is
    /// keeps its room (usually a quarter more than its rows): shrinking it left the allocator
    /// holes that raised a 1M-URL walk's peak by 2-3 MiB.
    pub fn take_batches(&mut self, size: usize) -> Vec<Rows> {
        let size = size.max(1);
        let whole = self.0.len() / size * size;
        if whole == 0 {
            return Vec::new();
        }
        let room = size.min(MAX_ROOM);
        let mut rest = Vec::with_capacity(room + room / 4);
        rest.extend(self.0.drain(whole..));
        let front = std::mem::replace(&mut self.0, rest);
        if whole == size {
            return vec![Rows(front)];
        }
        let mut rows = front.into_iter();
        (0..whole / size)
            .map(|_| Rows(rows.by_ref().take(size).collect()))
            .collect()
    }

    pub fn to_jsonl(&self) -> String {
        text(self.jsonl_bytes())
    }

    pub fn to_csv(&self) -> String {
        text(self.csv_bytes())
    }

    pub fn to_txt(&self) -> String {
        text(self.txt_bytes())
    }

    /// The rows as JSON lines, UTF-8: built as bytes, so no piece is checked to be text again
    /// (a lastmod kept in place was, at every read).
    pub fn jsonl_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut tail = JsonTail::default();
        for (i, row) in self.0.iter().enumerate() {
            json_line(&mut out, row, &mut tail);
            if i == 0 {
                // Room for all the lines at the first one's length and an eighth more: lines
                // differ by a few bytes, and growing the text step by step copied it each time.
                out.reserve(out.len() * (self.0.len() - 1) / 8 * 9);
            }
        }
        out
    }

    pub fn csv_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len() * 120);
        for row in &self.0 {
            csv_row(&mut out, row);
        }
        out
    }

    pub fn txt_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len() * 64);
        for row in &self.0 {
            out.extend_from_slice(row.entry.url.as_bytes());
            out.push(b'\n');
        }
        out
    }
}

/// Encoded rows as text: they are made of the rows' text and ASCII, so always UTF-8.
fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The page links of an llms.txt, held while the sitemaps are walked (`--source all`): a row
/// whose URL (or markdown URL) one lists is marked as listed by both, gets the link's markdown
/// URL and, when it has none, its title; the links so listed are remembered, so that the pass
/// over llms.txt links no sitemap listed leaves them out.
#[derive(Debug, Default)]
pub struct LlmsIndex {
    links: Vec<(String, Option<String>, Option<String>)>,
    by_url: std::collections::HashMap<String, usize>,
    listed: std::collections::HashSet<String>,
}

impl LlmsIndex {
    pub fn add(&mut self, url: String, md_url: Option<String>, title: Option<String>) {
        let at = self.links.len();
        self.by_url.insert(url.clone(), at);
        if let Some(md) = &md_url {
            self.by_url.entry(md.clone()).or_insert(at);
        }
        self.links.push((url, md_url, title));
    }

    pub fn contains(&self, url: &str) -> bool {
        self.by_url.contains_key(url)
    }

    /// Note the link `url` (or its markdown URL) names as listed by a sitemap.
    pub fn mark_listed(&mut self, url: &str) {
        if let Some(&at) = self.by_url.get(url) {
            self.listed.insert(self.links[at].0.clone());
        }
    }

    /// Whether the link whose page URL is `url` was listed by a sitemap.
    pub fn is_listed(&self, url: &str) -> bool {
        self.listed.contains(url)
    }

    /// Set every row's `sources` (its own source, and llms.txt when the index lists it).
    pub fn mark(&mut self, rows: &mut Rows) {
        for row in &mut rows.0 {
            let own = row.source;
            match self.by_url.get(&row.entry.url) {
                None => row.extra_mut().sources = vec![own],
                Some(&at) => {
                    let (link, md_url, title) = &self.links[at];
                    if !self.listed.contains(link) {
                        self.listed.insert(link.clone());
                    }
                    let extra = row.extra_mut();
                    extra.sources = vec![own, Source::Llms];
                    extra.md_url.clone_from(md_url);
                    if extra.title.is_none() {
                        extra.title.clone_from(title);
                    }
                }
            }
        }
    }
}

/// `json.encoder.encode_basestring` of the UTF-8 text `s`: quotes, backslash and control
/// characters escaped, the rest (non-ASCII included) as it is.
pub fn json_str(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    // Nearly every value (URLs, dates) needs no escape: one branch-free pass decides.
    if !s.iter().fold(false, |any, &b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    }) {
        out.extend_from_slice(s);
        out.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&s[start..i]);
        if esc.is_empty() {
            let _ = write!(out, "\\u{:04x}", b);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

fn json_opt(out: &mut Vec<u8>, s: Option<&[u8]>) {
    match s {
        Some(s) => json_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// `repr(float)`: the shortest round-tripping digits, scientific below 1e-4 and from 1e16 on.
pub fn py_float(out: &mut Vec<u8>, v: f64) {
    if v.is_nan() {
        out.extend_from_slice(b"nan");
        return;
    }
    if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"inf" } else { b"-inf" });
        return;
    }
    if v == 0.0 {
        out.extend_from_slice(if v.is_sign_negative() {
            b"-0.0"
        } else {
            b"0.0"
        });
        return;
    }
    if hundredths(out, v) {
        return;
    }
    py_float_digits(out, v);
}

/// A priority is nearly always a tenth or a hundredth in 0..1, whose shortest digits are its
/// own: written directly, where the general way formats the number twice. False (nothing
/// written) for any other value.
fn hundredths(out: &mut Vec<u8>, v: f64) -> bool {
    let k = (v * 100.0).round();
    // `k / 100.0` is the double nearest k/100, as is the one "0.kk" reads back as: equal, v is
    // that number and "0.kk" (one digit fewer when k is a multiple of 10) is its repr.
    if !(1.0..=100.0).contains(&k) || k / 100.0 != v {
        return false;
    }
    let k = k as u8;
    if k == 100 {
        out.extend_from_slice(b"1.0");
    } else {
        out.extend_from_slice(b"0.");
        out.push(b'0' + k / 10);
        if !k.is_multiple_of(10) {
            out.push(b'0' + k % 10);
        }
    }
    true
}

/// `repr(float)` of a finite, non-zero value, by the shortest digits Rust finds.
fn py_float_digits(out: &mut Vec<u8>, v: f64) {
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..16).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "{mantissa}e{sign}{:02}", exp.abs());
        return;
    }
    let fixed = format!("{v}");
    out.extend_from_slice(fixed.as_bytes());
    if !fixed.contains('.') {
        out.extend_from_slice(b".0");
    }
}

/// The end of a sitemap row's JSON line before its extras (`,"sitemap":…,"depth":…`), the same
/// for every row of a document: encoded once per run of rows that share it.
#[derive(Default)]
struct JsonTail {
    sitemap: Option<Arc<str>>,
    depth: u32,
    text: Vec<u8>,
}

impl JsonTail {
    fn push(&mut self, out: &mut Vec<u8>, row: &Row) {
        let same = self.depth == row.depth
            && self
                .sitemap
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(s, &row.sitemap));
        if !same {
            self.text.clear();
            self.text.extend_from_slice(b",\"sitemap\":");
            json_str(&mut self.text, row.sitemap.as_bytes());
            self.text.extend_from_slice(b",\"depth\":");
            push_int(&mut self.text, row.depth);
            self.sitemap = Some(Arc::clone(&row.sitemap));
            self.depth = row.depth;
        }
        out.extend_from_slice(&self.text);
    }
}

fn json_line(out: &mut Vec<u8>, row: &Row, tail: &mut JsonTail) {
    let e = &row.entry;
    out.extend_from_slice(b"{\"url\":");
    json_str(out, e.url.as_bytes());
    out.extend_from_slice(b",\"lastmod\":");
    json_opt(out, e.lastmod.as_ref().map(Short::as_bytes));
    out.extend_from_slice(b",\"priority\":");
    match e.priority {
        Some(p) => py_float(out, p),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"changefreq\":");
    json_opt(out, e.changefreq.as_deref().map(str::as_bytes));
    match row.alternate_of() {
        None => out.extend_from_slice(b",\"hreflang\":null,\"alternate_of\":null"),
        Some(page) => {
            out.extend_from_slice(b",\"hreflang\":");
            json_opt(out, row.hreflang().map(str::as_bytes));
            out.extend_from_slice(b",\"alternate_of\":");
            json_str(out, page.as_bytes());
        }
    }
    tail.push(out, row);
    // Sitemap rows keep the original shape; crawl and llms.txt rows add their source and title,
    // and a markdown copy or merged sources are written when there are some.
    let (md_url, sources) = (row.md_url(), row.sources());
    if row.source != Source::Sitemap {
        out.extend_from_slice(b",\"source\":");
        json_str(out, row.source.as_str().as_bytes());
        out.extend_from_slice(b",\"title\":");
        json_opt(out, row.title().map(str::as_bytes));
    }
    if let Some(md) = md_url {
        out.extend_from_slice(b",\"md_url\":");
        json_str(out, md.as_bytes());
    }
    if !sources.is_empty() {
        out.extend_from_slice(b",\"sources\":[");
        for (i, source) in sources.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            json_str(out, source.as_str().as_bytes());
        }
        out.push(b']');
    }
    out.extend_from_slice(b"}\n");
}

fn push_int(out: &mut Vec<u8>, n: u32) {
    if n < 10 {
        out.push(b'0' + n as u8);
    } else {
        let _ = write!(out, "{n}");
    }
}

/// One field as the csv module writes it with minimal quoting and "\n" line ends.
fn csv_field(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n')) {
        out.push(b'"');
        for &b in s.as_bytes() {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(s.as_bytes());
    }
}

fn csv_row(out: &mut Vec<u8>, row: &Row) {
    let e = &row.entry;
    csv_field(out, &e.url);
    out.push(b',');
    csv_field(out, e.lastmod.as_deref().unwrap_or(""));
    out.push(b',');
    if let Some(p) = e.priority {
        py_float(out, p);
    }
    out.push(b',');
    csv_field(out, e.changefreq.as_deref().unwrap_or(""));
    out.push(b',');
    csv_field(out, row.hreflang().unwrap_or(""));
    out.push(b',');
    csv_field(out, row.alternate_of().unwrap_or(""));
    out.push(b',');
    csv_field(out, &row.sitemap);
    let _ = write!(out, ",{},{},", row.depth, row.source.as_str());
    csv_field(out, row.title().unwrap_or(""));
    out.push(b',');
    csv_field(out, row.md_url().unwrap_or(""));
    out.push(b',');
    for (i, source) in row.sources().iter().enumerate() {
        if i > 0 {
            out.push(b';');
        }
        out.extend_from_slice(source.as_str().as_bytes());
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float(v: f64) -> String {
        let mut s = Vec::new();
        py_float(&mut s, v);
        text(s)
    }

    fn general(v: f64) -> String {
        let mut s = Vec::new();
        py_float_digits(&mut s, v);
        text(s)
    }

    #[test]
    fn floats_read_like_python_repr() {
        assert_eq!(float(0.5), "0.5");
        assert_eq!(float(1.0), "1.0");
        assert_eq!(float(0.0), "0.0");
        assert_eq!(float(0.00001), "1e-05");
        assert_eq!(float(0.0001), "0.0001");
        assert_eq!(float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(float(1.5e-7), "1.5e-07");
        assert_eq!(float(1e16), "1e+16");
    }

    #[test]
    fn tenths_and_hundredths_read_as_the_general_way_writes_them() {
        for k in 0..=100u32 {
            for v in [
                f64::from(k) / 100.0,
                f64::from(k) / 10.0,
                f64::from(k) * 0.01,
            ] {
                let general = if v == 0.0 {
                    "0.0".to_owned()
                } else {
                    general(v)
                };
                assert_eq!(float(v), general, "{v:?}");
            }
        }
        for v in [
            0.015,
            0.333,
            1.01,
            0.1 + 0.2,
            0.994999,
            0.995,
            5.0,
            100.0,
            1e-7,
        ] {
            assert_eq!(float(v), general(v), "{v:?}");
        }
    }

    #[test]
    fn json_lines_of_rows_from_many_documents_are_each_rows_own() {
        // Two rows per document: the second's end is the first's.
        let mk = |u: &str, sitemap: &str, depth| {
            let entry = |url: String| Entry {
                url,
                ..Entry::default()
            };
            Rows::from_document(
                vec![entry(u.into()), entry(format!("{u}2"))],
                sitemap,
                depth,
            )
        };
        let mut rows = Rows::default();
        for (u, sitemap, depth) in [
            ("a", "s1", 1),
            ("b", "s1", 1),
            ("c", "s1", 2),
            ("d", "s\"2", 2),
            ("e", "s1", 2),
            ("f", "s1", 1),
        ] {
            rows.append(&mut mk(u, sitemap, depth));
        }
        let alone: String = rows
            .0
            .iter()
            .map(|row| {
                let mut line = Vec::new();
                json_line(&mut line, row, &mut JsonTail::default());
                text(line)
            })
            .collect();
        assert_eq!(rows.to_jsonl(), alone);
        assert!(alone.contains(",\"sitemap\":\"s\\\"2\",\"depth\":2}"));
    }

    #[test]
    fn json_strings_escape_like_encode_basestring() {
        let mut s = Vec::new();
        json_str(&mut s, "a\"b\\c\n\u{1}é\u{7f}".as_bytes());
        assert_eq!(text(s), "\"a\\\"b\\\\c\\n\\u0001é\u{7f}\"");
    }

    #[test]
    fn dedup_and_alternates() {
        let mut seen = SeenSet::default();
        let mut held = SeenSet::default();
        let mk = |u: &str| Entry {
            url: u.into(),
            more: boxed_if_any(crate::entry::More {
                alternates: vec![crate::entry::Alternate {
                    hreflang: "de".into(),
                    url: format!("{u}/de"),
                }],
                ..crate::entry::More::default()
            }),
            ..Entry::default()
        };
        let mut rows = Rows::from_document(vec![mk("a"), mk("b"), mk("a")], "s", 2);
        assert_eq!(rows.retain_new(&mut seen), 1);
        let alts = rows.alternates(&seen, &mut held);
        assert_eq!(alts.0.len(), 2);
        assert_eq!(alts.pages(), 0);
        assert_eq!(alts.0[1].alternate_of(), Some("b"));
        assert_eq!(alts.0[1].hreflang(), Some("de"));
        assert_eq!(rows.alternates(&seen, &mut held).0.len(), 0);
        let mut again = Rows::from_document(vec![mk("a"), mk("c")], "s", 2);
        let (dropped, alts) = again.retain_new_with_alternates(&mut seen, &mut held);
        assert_eq!(dropped, 1);
        assert_eq!(alts.0.len(), 1); // c/de: a's alternate was listed already
        let mut fresh = SeenSet::default();
        let mut none_held = SeenSet::default();
        let mut twice = Rows::from_document(vec![mk("x"), mk("x")], "s", 2);
        assert!(fresh.add("x"));
        let (dropped, alts) = twice.retain_new_with_alternates(&mut fresh, &mut none_held);
        assert_eq!((dropped, alts.0.len()), (2, 1)); // x was seen, its alternate was not

        // An alternate that is a page already (in `seen`) is not made a row.
        let mut paged = Rows::from_document(
            vec![
                mk("p"),
                Entry {
                    url: "p/de".into(),
                    ..Entry::default()
                },
            ],
            "s",
            2,
        );
        let (dropped, alts) = paged.retain_new_with_alternates(&mut fresh, &mut none_held);
        assert_eq!((dropped, alts.0.len()), (0, 0));
        let tail = rows.split_off(1);
        assert_eq!((rows.0.len(), tail.0.len()), (1, 1));
    }

    #[test]
    fn take_batches_keeps_the_order_and_the_rest() {
        let mut rows = numbered(0, 7);
        let batches = rows.take_batches(3);
        let urls: Vec<Vec<&str>> = batches
            .iter()
            .map(|b| b.0.iter().map(|r| r.entry.url.as_str()).collect())
            .collect();
        assert_eq!(urls, vec![vec!["u0", "u1", "u2"], vec!["u3", "u4", "u5"]]);
        assert_eq!(rows.0.len(), 1);
        assert_eq!(rows.0[0].entry.url, "u6");
        assert!(rows.take_batches(3).is_empty());
        assert_eq!(rows.take_batches(1).len(), 1);
        assert!(rows.0.is_empty());
    }

    #[test]
    fn a_row_stays_small() {
        // Rows are moved between the scanner and the output; the README gives this size.
        assert_eq!(std::mem::size_of::<Row>(), 144);
    }

    fn numbered(from: usize, n: usize) -> Rows {
        let entries = (from..from + n)
            .map(|i| Entry {
                url: format!("u{i}"),
                ..Entry::default()
            })
            .collect();
        Rows::from_document(entries, "s", 1)
    }

    #[test]
    fn a_batch_filled_by_appends_goes_whole_and_what_stays_keeps_room() {
        let mut pending = Rows::default();
        for from in [0, 3, 6, 9] {
            pending.append(&mut numbered(from, 3));
        }
        let batches = pending.take_batches(8);
        assert_eq!(batches.len(), 1);
        let urls: Vec<&str> = batches[0].0.iter().map(|r| r.entry.url.as_str()).collect();
        assert_eq!(urls, ["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"]);
        let urls: Vec<&str> = pending.0.iter().map(|r| r.entry.url.as_str()).collect();
        assert_eq!(urls, ["u8", "u9", "u10", "u11"]);
        let room = pending.0.capacity();
        assert_eq!(room, 10);
        pending.append(&mut numbered(12, 6));
        assert_eq!(pending.0.capacity(), room);
        assert_eq!(pending.0[9].entry.url, "u17");

        // An empty batch with room takes rows into it; without, it takes the other's vector.
        let mut roomy = Rows(Vec::with_capacity(8));
        roomy.append(&mut numbered(0, 3));
        assert_eq!((roomy.0.len(), roomy.0.capacity()), (3, 8));
        let mut bare = Rows::default();
        let mut other = numbered(0, 3);
        let cap = other.0.capacity();
        bare.append(&mut other);
        assert_eq!((bare.0.capacity(), other.0.len()), (cap, 0));

        // The room is bounded, however large the batches.
        let mut big = numbered(0, 3 * MAX_ROOM + 1);
        assert_eq!(big.take_batches(3 * MAX_ROOM).len(), 1);
        assert_eq!(big.0.capacity(), MAX_ROOM + MAX_ROOM / 4);
    }

    #[test]
    fn llms_rows_and_the_index() {
        let mut index = LlmsIndex::default();
        index.add("a".into(), Some("a.md".into()), Some("A".into()));
        index.add("b".into(), None, None);
        let mut rows = Rows::from_document(
            vec![Entry {
                url: "a.md".into(),
                ..Entry::default()
            }],
            "s",
            1,
        );
        rows.push("c".into(), "s", 0, Source::Bfs, Extra::default());
        index.mark(&mut rows);
        assert_eq!(rows.0[0].sources(), [Source::Sitemap, Source::Llms]);
        assert_eq!(
            (rows.0[0].md_url(), rows.0[0].title()),
            (Some("a.md"), Some("A"))
        );
        assert_eq!(rows.0[1].sources(), [Source::Bfs]);
        assert!(index.is_listed("a") && !index.is_listed("a.md") && !index.is_listed("b"));
        index.mark_listed("b");
        assert!(index.is_listed("b"));
        // An llms.txt link whose markdown copy was seen is not new, its page URL now seen too.
        let mut seen = SeenSet::default();
        assert!(seen.add("x.md"));
        let mut llms = Rows::default();
        let md = |m: &str| Extra {
            md_url: Some(m.into()),
            ..Extra::default()
        };
        llms.push("x".into(), "l", 1, Source::Llms, md("x.md"));
        llms.push("y".into(), "l", 1, Source::Llms, md("y.md"));
        assert_eq!(llms.retain_new(&mut seen), 1);
        assert!(!seen.add("x") && !seen.add("y.md"));
        let mut line = Vec::new();
        json_line(&mut line, &llms.0[0], &mut JsonTail::default());
        assert!(
            text(line).ends_with(",\"source\":\"llms.txt\",\"title\":null,\"md_url\":\"y.md\"}\n")
        );
    }
}
