//! The streaming XML scanner: markup tokens in, items out.
//!
//! Bytes arrive in chunks of any size; the only state carried between chunks is the lexer state,
//! a tag cut by the chunk's end (bounded), the text of the field being read (bounded) and the
//! open elements (bounded depth). Each byte is looked at a bounded number of times, so the work
//! is linear however the input is split, and results do not depend on the split.
//!
//! Recovery: markup never spans a `<` (XML forbids it inside tags and attribute values), so a
//! broken tag ends where the next one starts. An end tag naming an ancestor closes what is open
//! above it; one naming nothing open is dropped. An item that saw damage is abandoned and yields
//! only the URL of a `<loc>` it held whole; an item the body ended inside is reported cut off.
//! Nesting past the depth limit closes everything under the outermost element, so what follows
//! is read again. Error positions count bytes of the whole stream, never of a chunk.
//!
//! Several `<loc>`s, in a urlset or a sitemap index (no URL is lost silently, none invented):
//! - A `<url>` (`<sitemap>`) start tag directly inside an open `<url>` (`<sitemap>`) means the
//!   open one's end tag is missing: the open one ends there, is read as if its end tag stood
//!   there (an entry with its own fields, or a child sitemap), and the new one is the next item.
//!   The same when the open one's parent ends (`<url><loc>A</loc></urlset>`). The document
//!   counts as damaged (an error where the open one ends). A `<url>` is never valid inside a
//!   `<url>`, so reading them as siblings keeps every URL with the fields written beside it; a
//!   new start tag deeper inside (in an unclosed `<loc>`, say) opens an item of its own inside
//!   the open one, as any damage does.
//! - Within one item, the entry's URL is its first `<loc>` that is not blank (else its first
//!   `<loc>`); each further non-blank `<loc>` is recorded as malformed with its value ("extra
//!   `<loc>` in one `<url>`"), as soon as its element ends. Which URL the other fields describe
//!   cannot be told, so only the first gets them; the others are not dropped unseen.
#![forbid(unsafe_code)]

use std::collections::HashMap;

use memchr::{memchr, memchr2, memchr3};

use super::rfc822::normalize_rfc822;
use super::values::{self, cut_chars, decode, plain_text, py_strip};
use super::{Kind, Out};
use crate::entry::{boxed_if_any, Alternate, Entry, Image, More, News, Short, Video};
use crate::urls::{self, Idna};

/// libxml2's default limit: deeper documents are hostile, not sitemaps.
const MAX_DEPTH: usize = 256;
/// Longer element names are damage (no sitemap vocabulary comes close).
const MAX_NAME: usize = 1024;
/// A value longer than any URL is damage; keeping it would let one value hold memory.
pub const MAX_VALUE: usize = 1 << 16;
/// A tag holds a few URL-sized attribute values at most.
pub(super) const MAX_TAG: usize = 4 * MAX_VALUE + 4096;
const MAX_ATTRS: usize = 256;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    Other,
    Root,
    Item,
    Loc,
    Lastmod,
    Priority,
    Changefreq,
    Link,
    Guid,
    PubDate,
    Updated,
    Published,
    Image,
    Video,
    News,
    ImageField(u8),
    VideoField(u8),
    NewsField(u8),
}

impl Role {
    fn collects(self) -> bool {
        !matches!(
            self,
            Role::Other | Role::Root | Role::Item | Role::Image | Role::Video | Role::News
        )
    }
}

const IMAGE_FIELDS: [&[u8]; 3] = [b"loc", b"title", b"caption"];
const VIDEO_FIELDS: [&[u8]; 5] = [
    b"content_loc",
    b"player_loc",
    b"thumbnail_loc",
    b"title",
    b"description",
];
const NEWS_FIELDS: [&[u8]; 4] = [b"title", b"publication_date", b"language", b"name"];

fn field_index(fields: &[&[u8]], name: &[u8]) -> Option<u8> {
    fields.iter().position(|f| *f == name).map(|i| i as u8)
}

struct Frame {
    name_start: u32,
    name_len: u32,
    role: Role,
    ns_mark: u32,
    damage_mark: u64,
    had_child: bool,
}

/// What one item (`url`, `sitemap`, `item`, `entry`) has shown so far. Kept small: it is
/// created and consumed once per URL; what few items use lives in `Rare`.
#[derive(Default)]
struct Item {
    damaged: bool,
    /// Whether the entry's `loc` was whole: its own end tag, no child element, no damage inside.
    loc_clean: bool,
    /// Whether `link` came whole from its element (salvage takes only such a value).
    link_clean: bool,
    guid_perma: bool,
    link_seen: bool,
    /// The entry's `loc` child's text (outer None: no `loc` child): the first that is not
    /// blank, else the first (see `Xml::deliver`).
    loc: Option<Option<String>>,
    lastmod: Option<Short>,
    priority: Option<f64>,
    changefreq: Option<&'static str>,
    bad_priority: u32,
    bad_changefreq: u32,
    alternates: Vec<(String, String)>,
    /// RSS `link`/`guid`; Atom `link href`.
    link: Option<String>,
    /// RSS `pubDate`, Atom `updated`/`published` (normalized).
    date: Option<String>,
    rare: Option<Box<Rare>>,
}

#[derive(Default)]
struct Rare {
    /// The first `link` child's text when it is not empty (a cut item reports it).
    first_link: Option<String>,
    href_attr: Option<String>,
    images: Vec<Image>,
    videos: Vec<Video>,
    news: Option<News>,
    /// Fields of the `image:image` or `video:video` being read (last wins, as a dict would).
    cur: [Option<String>; 5],
    /// Fields of the `news:news` being read (first wins, in document order).
    news_frame: Option<usize>,
    news_claimed: [bool; 4],
    news_vals: [Option<String>; 4],
}

impl Item {
    fn rare(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// A `<lastmod>`, `<priority>` or `<changefreq>` value (None: the element was empty),
    /// read from the text as it lies: normalized, or parsed and kept or counted as bad.
    fn set_scalar(&mut self, role: Role, raw: Option<&str>) {
        match role {
            Role::Lastmod => {
                if let Some(raw) = raw {
                    self.lastmod = values::normalize_lastmod_short(raw);
                }
            }
            Role::Priority => {
                let (v, bad) = values::priority(raw);
                self.priority = v;
                self.bad_priority += u32::from(bad);
            }
            Role::Changefreq => {
                let (v, bad) = values::changefreq(raw);
                self.changefreq = v;
                self.bad_changefreq += u32::from(bad);
            }
            _ => {}
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Lex {
    Text,
    /// `carry` holds `<` and a few bytes that do not yet say what comes.
    Open,
    /// `carry` holds a tag cut by a chunk's end (`skip`: too long, dropped to its end).
    Tag {
        quote: u8,
        skip: bool,
    },
    Comment {
        dashes: u8,
        /// A `--` inside it was reported: one report per comment, however its bytes arrive.
        flagged: bool,
    },
    Pi {
        question: bool,
        /// How far its target name is checked: 0 before it, 1 inside it, 2 done.
        target: u8,
    },
    Cdata {
        brackets: u8,
    },
    /// `<!…>` that is not a comment or CDATA: a DOCTYPE or garbage inside the document.
    Decl,
}

enum Scan {
    End(usize),
    Broken(usize),
    More,
}

/// Finds the `>` ending a tag, outside quoted values; a `<` (which XML forbids in both) means
/// the tag is broken and the next markup starts there.
fn scan_tag(s: &[u8], quote: &mut u8) -> Scan {
    let mut i = 0;
    while i < s.len() {
        if *quote != 0 {
            match memchr2(*quote, b'<', &s[i..]) {
                None => return Scan::More,
                Some(k) => {
                    if s[i + k] == b'<' {
                        return Scan::Broken(i + k);
                    }
                    *quote = 0;
                    i += k + 1;
                }
            }
            continue;
        }
        match s[i] {
            b'>' => return Scan::End(i),
            b'<' => return Scan::Broken(i),
            b'"' | b'\'' => *quote = s[i],
            _ => {}
        }
        i += 1;
    }
    Scan::More
}

#[inline]
fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b':' || b >= 0x80
}

#[inline]
fn is_name_byte(b: u8) -> bool {
    is_name_start(b) || b.is_ascii_digit() || b == b'-' || b == b'.'
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn name_len(s: &[u8]) -> usize {
    if s.first().is_some_and(|&b| is_name_start(b)) {
        s.iter().take_while(|&&b| is_name_byte(b)).count()
    } else {
        0
    }
}

/// Whether two names are the same bytes: a name is a few bytes, which a loop compares faster
/// than a call to the C library's `memcmp` (`==` on slices) does (it was 3 % of a big walk).
#[inline]
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// (prefix, local name) of a qualified name.
fn split_qname(q: &[u8]) -> (&[u8], &[u8]) {
    match q.iter().position(|&b| b == b':') {
        Some(i) if i > 0 && i + 1 < q.len() => (&q[..i], &q[i + 1..]),
        _ => (&[], q),
    }
}

enum Open {
    Need,
    Tag,
    Pi,
    Comment,
    Cdata,
    Decl,
    Junk,
}

fn classify(s: &[u8]) -> Open {
    const COMMENT: &[u8] = b"<!--";
    const CDATA: &[u8] = b"<![CDATA[";
    match s.get(1) {
        None => Open::Need,
        Some(b'?') => Open::Pi,
        Some(b'/') => Open::Tag,
        Some(&b) if is_name_start(b) && b != b':' => Open::Tag,
        Some(b'!') => {
            if s.starts_with(COMMENT) {
                Open::Comment
            } else if s.starts_with(CDATA) {
                Open::Cdata
            } else if COMMENT.starts_with(s) || CDATA.starts_with(s) {
                Open::Need
            } else {
                Open::Decl
            }
        }
        Some(_) => Open::Junk,
    }
}

pub struct Xml {
    kind: Kind,
    item_name: &'static [u8],
    lex: Lex,
    carry: Vec<u8>,
    names: Vec<u8>,
    frames: Vec<Frame>,
    ns: Vec<u8>,
    ns_ends: Vec<u32>,
    /// How many in-scope declarations name each prefix: whether one is declared is one lookup,
    /// not a scan of every declaration in scope (up to 256 per element, 256 elements deep).
    ns_count: HashMap<Vec<u8>, u32>,
    /// The last prefix looked up in `ns_count` and whether it was declared, until a
    /// declaration enters or leaves scope: a document's prefixed tags nearly all repeat the
    /// one before (`xhtml:link`, or a hostile run of one undeclared prefix), and the keyed
    /// hash of each lookup was a third of such a run's cost.
    last_prefix: Option<(Vec<u8>, bool)>,
    root_seen: bool,
    root_closed: bool,
    extra_reported: bool,
    /// `]` ending the text read so far (at most 2): `]]>` may be split by a chunk's end.
    text_brackets: u8,
    /// Text before the root is reported once (a run of it may arrive in many chunks), as is
    /// anything after it (`extra_reported`).
    before_reported: bool,
    items: Vec<Item>,
    collecting: bool,
    has_text: bool,
    text: Vec<u8>,
    text_over: bool,
    damage: u64,
    attrs: Vec<[u32; 4]>,
    // Positions for error messages: the line and the offset of its start, as of the chunk
    // being read (whose offset is `offset`); `at` indexes that chunk, unless `use_mark` says the
    // error is about markup that started in an earlier chunk, whose `<` is at `mark`.
    lines: u64,
    line_start: u64,
    offset: u64,
    at: usize,
    use_mark: bool,
    mark: (u64, u64),
    /// Markup was left unfinished at this index of the chunk being read: `mark` is set from it
    /// when the chunk's lines are counted.
    mark_pending: Option<usize>,
}

impl Xml {
    pub fn new(kind: Kind) -> Self {
        let item_name: &'static [u8] = match kind {
            Kind::Urlset => b"url",
            Kind::SitemapIndex => b"sitemap",
            Kind::Rss => b"item",
            _ => b"entry",
        };
        Xml {
            kind,
            item_name,
            lex: Lex::Text,
            carry: Vec::new(),
            names: Vec::new(),
            frames: Vec::new(),
            ns: Vec::new(),
            ns_ends: Vec::new(),
            ns_count: HashMap::new(),
            last_prefix: None,
            root_seen: false,
            root_closed: false,
            extra_reported: false,
            before_reported: false,
            text_brackets: 0,
            items: Vec::new(),
            collecting: false,
            has_text: false,
            text: Vec::new(),
            text_over: false,
            damage: 0,
            attrs: Vec::new(),
            lines: 1,
            line_start: 0,
            offset: 0,
            at: 0,
            use_mark: false,
            mark: (1, 1),
            mark_pending: None,
        }
    }

    // -- positions and errors ---------------------------------------------------------------

    /// Where the error being reported is: every position is a byte of the whole (decoded)
    /// stream, so it does not depend on how the input was split. Markup errors point at the
    /// markup's `<`, text errors at the text's first significant byte.
    fn position(&self, data: &[u8]) -> (u64, u64) {
        if self.use_mark {
            return self.mark;
        }
        let upto = &data[..self.at.min(data.len())];
        let n = memchr::memchr_iter(b'\n', upto).count() as u64;
        let start = match memchr::memrchr(b'\n', upto) {
            Some(k) => self.offset + k as u64 + 1,
            None => self.line_start,
        };
        (self.lines + n, self.offset + upto.len() as u64 - start + 1)
    }

    fn error(&mut self, out: &mut Out, data: &[u8], what: &str) {
        out.damaged = true;
        if out.errors.len() < super::MAX_ERRORS {
            let (line, col) = self.position(data);
            out.errors.push(format!("line {line} col {col}: {what}"));
        }
    }

    /// An error that also spoils every item open around it.
    fn damage(&mut self, out: &mut Out, data: &[u8], what: &str) {
        self.damage += 1;
        for item in &mut self.items {
            item.damaged = true;
        }
        self.error(out, data, what);
    }

    /// Markup starting at `data[i]` continues in the next chunk.
    fn hold_mark(&mut self, i: usize) {
        self.mark_pending = Some(i);
    }

    fn end_chunk(&mut self, data: &[u8]) {
        let count = |s: &[u8]| memchr::memchr_iter(b'\n', s).count() as u64;
        let mut from = 0;
        if let Some(i) = self.mark_pending.take() {
            let i = i.min(data.len());
            self.lines += count(&data[..i]);
            if let Some(k) = memchr::memrchr(b'\n', &data[..i]) {
                self.line_start = self.offset + k as u64 + 1;
            }
            self.mark = (self.lines, self.offset + i as u64 - self.line_start + 1);
            from = i;
        }
        self.lines += count(&data[from..]);
        if let Some(k) = memchr::memrchr(b'\n', &data[from..]) {
            self.line_start = self.offset + (from + k) as u64 + 1;
        }
        self.offset += data.len() as u64;
    }

    // -- the lexer --------------------------------------------------------------------------

    /// `text`: `data` as text, when it is UTF-8 on its own.
    pub fn feed(&mut self, data: &[u8], text: Option<&str>, out: &mut Out, idna: &mut dyn Idna) {
        let n = data.len();
        let mut i = 0;
        while i < n {
            self.at = i;
            self.use_mark = false;
            i = match self.lex {
                Lex::Text => match self.text_end(data, i) {
                    (None, _) => {
                        self.chars(data, i, n, out);
                        n
                    }
                    (Some(k), blank) => {
                        if !blank {
                            self.chars(data, i, i + k, out);
                        }
                        self.text_brackets = 0;
                        self.at = i + k;
                        self.use_mark = false;
                        match self.item_tag(data, i + k, out, idna) {
                            Some(next) => next,
                            None => match self.plain_field(data, text, i + k, out) {
                                Some(next) => next,
                                None => self.open(data, i + k, out, idna),
                            },
                        }
                    }
                },
                Lex::Open => self.open_cont(data, out, idna),
                Lex::Tag { quote, skip } => self.tag_cont(data, i, quote, skip, out, idna),
                Lex::Comment { dashes, flagged } => self.comment(data, i, dashes, flagged, out),
                Lex::Pi { question, target } => self.pi(data, i, question, target, out),
                Lex::Cdata { brackets } => self.cdata(data, i, brackets),
                Lex::Decl => match memchr2(b'>', b'<', &data[i..]) {
                    None => n,
                    Some(k) => {
                        self.lex = Lex::Text;
                        if data[i + k] == b'>' {
                            i + k + 1
                        } else {
                            i + k
                        }
                    }
                },
            };
        }
        self.use_mark = false;
        self.end_chunk(data);
    }

    /// Where the text at `data[i]` ends: the offset of the next `<`, and whether the text is
    /// whitespace inside an element that does not collect it, which `chars` would only look
    /// at (the text between the tags of a sitemap, read here without a search).
    fn text_end(&self, data: &[u8], i: usize) -> (Option<usize>, bool) {
        let rest = &data[i..];
        if !self.collecting && !self.frames.is_empty() {
            let ws = rest.iter().take_while(|&&b| is_ws(b)).count();
            if rest.get(ws) == Some(&b'<') {
                return (Some(ws), true);
            }
        }
        (memchr(b'<', rest), false)
    }

    /// At a `<` in `data[i]`: what follows decides the state.
    fn open(&mut self, data: &[u8], i: usize, out: &mut Out, idna: &mut dyn Idna) -> usize {
        let rest = &data[i..];
        match classify(&rest[..rest.len().min(9)]) {
            Open::Need => {
                self.carry.clear();
                self.carry.extend_from_slice(rest);
                self.lex = Lex::Open;
                self.hold_mark(i);
                data.len()
            }
            Open::Tag => {
                let mut quote = 0;
                match scan_tag(&rest[1..], &mut quote) {
                    Scan::End(k) => {
                        if 1 + k > MAX_TAG {
                            self.damage(out, data, "tag too long");
                        } else {
                            self.tag(&rest[1..1 + k], out, data, idna);
                        }
                        i + k + 2
                    }
                    Scan::Broken(k) => {
                        if 1 + k > MAX_TAG {
                            self.damage(out, data, "tag too long");
                        }
                        self.damage(out, data, "tag not closed before the next '<'");
                        i + 1 + k
                    }
                    Scan::More => {
                        let skip = rest.len() > MAX_TAG;
                        self.hold_mark(i);
                        self.carry.clear();
                        if skip {
                            self.damage(out, data, "tag too long");
                        } else {
                            self.carry.extend_from_slice(rest);
                        }
                        self.lex = Lex::Tag { quote, skip };
                        data.len()
                    }
                }
            }
            Open::Pi => {
                self.lex = Lex::Pi {
                    question: false,
                    target: 0,
                };
                i + 2
            }
            Open::Comment => {
                self.lex = Lex::Comment {
                    dashes: 0,
                    flagged: false,
                };
                i + 4
            }
            Open::Cdata => {
                self.cdata_start();
                i + 9
            }
            Open::Decl => {
                self.damage(out, data, "markup declaration inside the document");
                self.lex = Lex::Decl;
                i + 2
            }
            Open::Junk => {
                self.damage(out, data, "'<' not starting any markup");
                i + 1
            }
        }
    }

    /// At a `<` in `data[i]`: the item's own tag written the plain way (`<url>` or `</url>`,
    /// whole in this chunk), handed to `start_tag` or `end_tag` as the general way would hand
    /// it, without looking for its end or its attributes. Two of these come with every entry.
    fn item_tag(
        &mut self,
        data: &[u8],
        i: usize,
        out: &mut Out,
        idna: &mut dyn Idna,
    ) -> Option<usize> {
        let name = self.item_name;
        let rest = &data[i + 1..];
        let end = rest.first() == Some(&b'/');
        let tag = &rest[usize::from(end)..];
        if tag.len() <= name.len() || tag[name.len()] != b'>' || !same(&tag[..name.len()], name) {
            return None;
        }
        if end {
            self.end_tag(name, out, data, idna);
        } else {
            self.attrs.clear();
            self.start_tag(&tag[..name.len()], name.len(), false, out, data, idna);
        }
        Some(i + 1 + usize::from(end) + name.len() + 1)
    }

    /// At a `<` in `data[i]`: a field of the open item written the plain way, whole in this
    /// chunk (`<loc>TEXT</loc>`: no attribute, prefix, reference, carriage return, `>` or
    /// space in the tags), read here in one step, with the effects the general way would have
    /// (the item's `had_child`, the text delivered as a whole, clean value). That is nearly
    /// every field of a big sitemap, and each was otherwise read as two tags through the
    /// element stack. None: anything else, left to the general way, which reads it the same.
    fn plain_field(
        &mut self,
        data: &[u8],
        whole: Option<&str>,
        i: usize,
        out: &mut Out,
    ) -> Option<usize> {
        if self.collecting || !matches!(self.kind, Kind::Urlset | Kind::SitemapIndex) {
            return None;
        }
        let top = self.frames.last()?;
        if top.role != Role::Item || self.frames.len() + 1 >= MAX_DEPTH {
            return None;
        }
        let in_news = self.items.last().is_none_or(|item| {
            item.rare
                .as_ref()
                .is_some_and(|rare| rare.news_frame.is_some())
        });
        if in_news {
            return None;
        }
        let rest = &data[i + 1..];
        // The longest name taken, `changefreq`, and its `>` (a loop: for so few bytes the
        // search's call cost more than it saved).
        let close = rest[..rest.len().min(11)].iter().position(|&b| b == b'>')?;
        let name = &rest[..close];
        if name.is_empty() || !name.iter().all(u8::is_ascii_lowercase) {
            return None;
        }
        let body = &rest[close + 1..];
        let end = memchr(b'<', body)?;
        let text = &body[..end];
        let after = &body[end..];
        // `</name>` right after: then the text is the element's whole content.
        if after.len() < name.len() + 3
            || after[1] != b'/'
            || !same(&after[2..2 + name.len()], name)
            || after[2 + name.len()] != b'>'
        {
            return None;
        }
        if text.is_empty() || text.len() > MAX_VALUE || memchr3(b'&', b'\r', b'>', text).is_some() {
            return None;
        }
        let start = i + 1 + close + 1;
        let text = match whole {
            Some(whole) => whole.get(start..start + end)?,
            None => std::str::from_utf8(text).ok()?,
        };
        // Under an item, outside news, `role_of` only looks the name up.
        let role = self.role_of(name);
        if !matches!(
            role,
            Role::Loc | Role::Lastmod | Role::Priority | Role::Changefreq
        ) {
            return None;
        }
        if let Some(top) = self.frames.last_mut() {
            top.had_child = true;
        }
        if role == Role::Loc {
            self.deliver(role, Some(text.to_owned()), true, out);
        } else if let Some(item) = self.items.last_mut() {
            item.set_scalar(role, Some(text));
        }
        Some(i + 1 + close + 1 + end + name.len() + 3)
    }

    /// `carry` holds the start of markup that the previous chunk did not finish.
    fn open_cont(&mut self, data: &[u8], out: &mut Out, idna: &mut dyn Idna) -> usize {
        self.use_mark = true;
        let mut probe = [0u8; 18];
        let have = self.carry.len();
        let take = data.len().min(9);
        probe[..have].copy_from_slice(&self.carry);
        probe[have..have + take].copy_from_slice(&data[..take]);
        let probe = &probe[..have + take];
        let (opener, lex) = match classify(probe) {
            Open::Need => {
                self.carry.extend_from_slice(data);
                return data.len();
            }
            Open::Tag => {
                // Only `<` is ever held for a tag: a name byte or `/` decides at once.
                self.lex = Lex::Tag {
                    quote: 0,
                    skip: false,
                };
                return self.tag_cont(data, 0, 0, false, out, idna);
            }
            Open::Pi => (
                2,
                Lex::Pi {
                    question: false,
                    target: 0,
                },
            ),
            Open::Comment => (
                4,
                Lex::Comment {
                    dashes: 0,
                    flagged: false,
                },
            ),
            Open::Cdata => {
                self.cdata_start();
                (9, Lex::Cdata { brackets: 0 })
            }
            Open::Decl => {
                self.damage(out, data, "markup declaration inside the document");
                (have.max(2), Lex::Decl)
            }
            Open::Junk => {
                self.damage(out, data, "'<' not starting any markup");
                (1, Lex::Text)
            }
        };
        self.carry.clear();
        self.lex = lex;
        opener.saturating_sub(have)
    }

    fn tag_cont(
        &mut self,
        data: &[u8],
        i: usize,
        mut quote: u8,
        skip: bool,
        out: &mut Out,
        idna: &mut dyn Idna,
    ) -> usize {
        // The tag started in an earlier chunk: what it did wrong is reported at its `<`.
        self.use_mark = true;
        match scan_tag(&data[i..], &mut quote) {
            Scan::End(k) => {
                self.lex = Lex::Text;
                if skip || self.carry.len() + k > MAX_TAG {
                    if !skip {
                        self.damage(out, data, "tag too long");
                    }
                    self.carry.clear();
                    return i + k + 1;
                }
                self.carry.extend_from_slice(&data[i..i + k]);
                let carry = std::mem::take(&mut self.carry);
                self.tag(&carry[1..], out, data, idna);
                self.carry = carry;
                self.carry.clear();
                i + k + 1
            }
            Scan::Broken(k) => {
                self.lex = Lex::Text;
                if !skip && self.carry.len() + k > MAX_TAG {
                    self.damage(out, data, "tag too long");
                }
                self.carry.clear();
                self.damage(out, data, "tag not closed before the next '<'");
                i + k
            }
            Scan::More => {
                let rest = &data[i..];
                let mut skip = skip;
                if !skip && self.carry.len() + rest.len() > MAX_TAG {
                    skip = true;
                    self.carry.clear();
                    self.damage(out, data, "tag too long");
                } else if !skip {
                    self.carry.extend_from_slice(rest);
                }
                self.lex = Lex::Tag { quote, skip };
                data.len()
            }
        }
    }

    fn comment(
        &mut self,
        data: &[u8],
        i: usize,
        dashes: u8,
        flagged: bool,
        out: &mut Out,
    ) -> usize {
        let end = self.comment_end(data, i, dashes, flagged);
        // `--` may only close a comment: a strict parser rejects the document otherwise (a
        // nested or unterminated `<!--` shows this way). Reported once per comment, so that
        // the errors do not depend on how the comment's bytes were split.
        if !flagged {
            if let Some(at) = double_dash(&data[i..end], dashes) {
                self.at = i + at;
                self.error(out, data, "'--' inside a comment");
                if let Lex::Comment { flagged, .. } = &mut self.lex {
                    *flagged = true;
                }
            }
        }
        end
    }

    fn comment_end(&mut self, data: &[u8], i: usize, dashes: u8, flagged: bool) -> usize {
        let s = &data[i..];
        let mut from = 0;
        let mut carried = dashes;
        loop {
            match memchr(b'>', &s[from..]) {
                None => {
                    let run = s[from..].iter().rev().take_while(|&&b| b == b'-').count();
                    let total = if run == s.len() - from {
                        run + carried as usize
                    } else {
                        run
                    };
                    self.lex = Lex::Comment {
                        dashes: total.min(2) as u8,
                        flagged,
                    };
                    return data.len();
                }
                Some(k) => {
                    let p = from + k;
                    let run = s[from..p].iter().rev().take_while(|&&b| b == b'-').count();
                    let total = if run == p - from {
                        run + carried as usize
                    } else {
                        run
                    };
                    if total >= 2 {
                        self.lex = Lex::Text;
                        return i + p + 1;
                    }
                    from = p + 1;
                    carried = 0;
                }
            }
        }
    }

    fn pi(&mut self, data: &[u8], i: usize, question: bool, target: u8, out: &mut Out) -> usize {
        let s = &data[i..];
        // A processing instruction starts with a name (its target); a strict parser rejects
        // the document otherwise. Each byte of the name is looked at once, across chunks.
        let mut target = target;
        let mut k = 0;
        while target < 2 && k < s.len() {
            let b = s[k];
            target = match target {
                0 if is_name_start(b) => 1,
                1 if is_name_byte(b) => 1,
                1 if is_ws(b) || b == b'?' => 2,
                _ => {
                    self.at = i + k;
                    self.error(out, data, "processing instruction without a target name");
                    2
                }
            };
            k += 1;
        }
        let mut from = 0;
        let mut carried = question;
        loop {
            match memchr(b'>', &s[from..]) {
                None => {
                    let last = s.last().copied();
                    let q = if s.len() > from {
                        last == Some(b'?')
                    } else {
                        carried
                    };
                    self.lex = Lex::Pi {
                        question: q,
                        target,
                    };
                    return data.len();
                }
                Some(k) => {
                    let p = from + k;
                    let q = if p > from { s[p - 1] == b'?' } else { carried };
                    if q {
                        self.lex = Lex::Text;
                        return i + p + 1;
                    }
                    from = p + 1;
                    carried = false;
                }
            }
        }
    }

    fn cdata_start(&mut self) {
        self.lex = Lex::Cdata { brackets: 0 };
        if self.collecting {
            self.has_text = true;
        }
    }

    /// CDATA content is literal text: it is kept with `&` escaped, so that decoding the field's
    /// raw text later gives it back unchanged. Up to two `]` that may start `]]>` wait for the
    /// next chunk.
    fn cdata(&mut self, data: &[u8], i: usize, held: u8) -> usize {
        let s = &data[i..];
        let held = held as usize;
        let mut from = 0;
        loop {
            match memchr(b'>', &s[from..]) {
                Some(k) => {
                    let p = from + k;
                    let run = s[..p].iter().rev().take_while(|&&b| b == b']').count();
                    let total = if run == p { run + held } else { run };
                    if total < 2 {
                        from = p + 1;
                        continue;
                    }
                    let content = held + p - 2;
                    self.cdata_emit(held, s, content);
                    self.lex = Lex::Text;
                    return i + p + 1;
                }
                None => {
                    let run = s.iter().rev().take_while(|&&b| b == b']').count();
                    let total = if run == s.len() { run + held } else { run };
                    let keep = total.min(2);
                    let content = held + s.len() - keep;
                    self.cdata_emit(held, s, content);
                    self.lex = Lex::Cdata {
                        brackets: keep as u8,
                    };
                    return data.len();
                }
            }
        }
    }

    /// Emit the first `len` bytes of `]`×`held` followed by `s`.
    fn cdata_emit(&mut self, held: usize, s: &[u8], len: usize) {
        if !self.collecting || len == 0 {
            return;
        }
        let from_held = held.min(len);
        let from_s = len - from_held;
        if self.text.len() + len > MAX_VALUE {
            self.text_over = true;
            return;
        }
        self.text.extend(std::iter::repeat_n(b']', from_held));
        let part = &s[..from_s];
        let mut rest = part;
        while let Some(k) = memchr(b'&', rest) {
            self.text.extend_from_slice(&rest[..k]);
            self.text.extend_from_slice(b"&amp;");
            rest = &rest[k + 1..];
        }
        self.text.extend_from_slice(rest);
    }

    /// Character data between markup: `data[from..to]`.
    fn chars(&mut self, data: &[u8], from: usize, to: usize, out: &mut Out) {
        let s = &data[from..to];
        if s.is_empty() {
            return;
        }
        self.cdata_end_in_text(data, from, to, out);
        if self.collecting {
            self.has_text = true;
            if self.text_over || self.text.len() + s.len() > MAX_VALUE {
                self.text_over = true;
            } else {
                self.text.extend_from_slice(s);
            }
        } else if self.frames.is_empty() {
            let reported = if self.root_closed {
                self.extra_reported
            } else {
                self.before_reported
            };
            if reported {
                return;
            }
            let Some(k) = s.iter().position(|&b| !is_ws(b)) else {
                return;
            };
            self.at = from + k;
            self.use_mark = false;
            if self.root_closed {
                self.extra_reported = true;
            } else {
                self.before_reported = true;
            }
            let what = if self.root_closed {
                "text after the root element"
            } else {
                "text before the root element"
            };
            self.damage(out, data, what);
        }
    }

    /// XML forbids `]]>` in text (it only ends a CDATA section): the value is still read, as it
    /// is, but the document is not well-formed. Reported at the `>`, which is in this chunk.
    fn cdata_end_in_text(&mut self, data: &[u8], from: usize, to: usize, out: &mut Out) {
        let s = &data[from..to];
        let mut pos = 0;
        let mut carried = self.text_brackets as usize;
        while let Some(k) = memchr(b'>', &s[pos..]) {
            let p = pos + k;
            let run = s[pos..p].iter().rev().take_while(|&&b| b == b']').count();
            let total = if run == p - pos { run + carried } else { run };
            if total >= 2 {
                self.at = from + p;
                self.use_mark = false;
                self.error(out, data, "']]>' in text");
            }
            pos = p + 1;
            carried = 0;
        }
        let rest = &s[pos..];
        let run = rest.iter().rev().take_while(|&&b| b == b']').count();
        let total = if run == rest.len() {
            run + carried
        } else {
            run
        };
        self.text_brackets = total.min(2) as u8;
    }

    // -- tags -------------------------------------------------------------------------------

    fn tag(&mut self, t: &[u8], out: &mut Out, data: &[u8], idna: &mut dyn Idna) {
        if t.first() == Some(&b'/') {
            let body = &t[1..];
            let n = name_len(body);
            if n == 0 || n > MAX_NAME || body[n..].iter().any(|&b| !is_ws(b)) {
                self.damage(out, data, "malformed end tag");
                return;
            }
            self.end_tag(&body[..n], out, data, idna);
            return;
        }
        let n = name_len(t);
        // `<loc&>` is no `<loc>`: a name must end at whitespace, `/` or `>`.
        let name_cut = t.get(n).is_some_and(|&b| !is_ws(b) && b != b'/');
        if n == 0 || n > MAX_NAME || name_cut {
            self.damage(out, data, "malformed start tag");
            return;
        }
        let (self_closing, ok) = self.parse_attrs(t, n);
        if !ok {
            self.damage(out, data, "malformed attributes");
        }
        self.start_tag(t, n, self_closing, out, data, idna);
    }

    /// Attributes of `t` (after its name) into `self.attrs` as ranges of `t`.
    fn parse_attrs(&mut self, t: &[u8], name_end: usize) -> (bool, bool) {
        self.attrs.clear();
        let mut i = name_end;
        let n = t.len();
        let self_closing = t.last() == Some(&b'/');
        let end = if self_closing { n - 1 } else { n };
        loop {
            let ws = t[i..end].iter().take_while(|&&b| is_ws(b)).count();
            i += ws;
            if i >= end {
                return (self_closing, true);
            }
            if ws == 0 || self.attrs.len() >= MAX_ATTRS {
                return (self_closing, false);
            }
            let nl = name_len(&t[i..end]);
            if nl == 0 {
                return (self_closing, false);
            }
            let name = (i, i + nl);
            i += nl;
            i += t[i..end].iter().take_while(|&&b| is_ws(b)).count();
            if t.get(i) != Some(&b'=') || i >= end {
                return (self_closing, false);
            }
            i += 1;
            i += t[i..end].iter().take_while(|&&b| is_ws(b)).count();
            let q = match t.get(i) {
                Some(&q) if (q == b'"' || q == b'\'') && i < end => q,
                _ => return (self_closing, false),
            };
            let Some(k) = memchr(q, &t[i + 1..end]) else {
                return (self_closing, false);
            };
            let value = (i + 1, i + 1 + k);
            i = value.1 + 1;
            self.attrs
                .push([name.0 as u32, name.1 as u32, value.0 as u32, value.1 as u32]);
        }
    }

    /// The raw value of attribute `name` of the tag `t` (as `parse_attrs` found it).
    fn attr_raw<'t>(&self, t: &'t [u8], name: &[u8]) -> Option<&'t [u8]> {
        self.attrs
            .iter()
            .find(|a| &t[a[0] as usize..a[1] as usize] == name)
            .map(|a| &t[a[2] as usize..a[3] as usize])
    }

    fn attr(&self, t: &[u8], name: &[u8]) -> Option<String> {
        self.attr_raw(t, name).map(|raw| decode(raw, true).text)
    }

    /// Whether attribute `name` is there and its value is `value` (`attr(..) == Some(value)`).
    fn attr_is(&self, t: &[u8], name: &[u8], value: &str) -> bool {
        self.attr_raw(t, name)
            .is_some_and(|raw| values::attr_equals(raw, value))
    }

    fn declared(&mut self, prefix: &[u8]) -> bool {
        if prefix == b"xml" {
            return true;
        }
        if let Some((last, answer)) = &self.last_prefix {
            if same(last, prefix) {
                return *answer;
            }
        }
        let answer = self.ns_count.contains_key(prefix);
        let mut last = self.last_prefix.take().map(|(v, _)| v).unwrap_or_default();
        last.clear();
        last.extend_from_slice(prefix);
        self.last_prefix = Some((last, answer));
        answer
    }

    fn start_tag(
        &mut self,
        t: &[u8],
        name_end: usize,
        self_closing: bool,
        out: &mut Out,
        data: &[u8],
        idna: &mut dyn Idna,
    ) {
        if self.collecting {
            // `child.text` is the text before the first child element.
            self.finish_text(false, out, data);
            if let Some(top) = self.frames.last_mut() {
                top.had_child = true;
            }
        } else if let Some(top) = self.frames.last_mut() {
            top.had_child = true;
        }
        let qname = &t[..name_end];
        let (prefix, local) = split_qname(qname);
        if self.ends_open_item(local) {
            // `<url><loc>A</loc><url>…`: the open item's end tag is missing (see the module's
            // notes); it ends here, read whole, before anything of the new one is pushed.
            let what = match self.kind {
                Kind::SitemapIndex => "<sitemap> inside an open <sitemap>: the open one ends here",
                _ => "<url> inside an open <url>: the open one ends here",
            };
            self.error(out, data, what);
            self.pop(true, out, data, idna);
        }
        if self.frames.len() >= MAX_DEPTH {
            // Nesting this deep is an unclosed element repeated, not a document: everything
            // under the outermost element is closed (its items abandoned) and what follows is
            // read from there, so an intact item after the damage still counts. Each element is
            // opened and closed once, so the work stays linear.
            self.damage(out, data, "elements nested too deeply");
            while self.frames.len() > 1 {
                self.pop(false, out, data, idna);
            }
        }
        if self.root_closed && self.frames.is_empty() && !self.extra_reported {
            self.extra_reported = true;
            self.damage(out, data, "content after the root element");
        }
        let ns_mark = self.ns_ends.len() as u32;
        for a in &self.attrs {
            let name = &t[a[0] as usize..a[1] as usize];
            if let Some(prefix) = name.strip_prefix(b"xmlns:") {
                self.ns.extend_from_slice(prefix);
                self.ns_ends.push(self.ns.len() as u32);
                *self.ns_count.entry(prefix.to_vec()).or_insert(0) += 1;
                self.last_prefix = None;
            }
        }
        if !prefix.is_empty() && !self.declared(prefix) {
            // libxml2 reports it; the element still counts by its local name (namespace-agnostic
            // matching is the point), unlike lxml, which named it `prefix:local`.
            self.error(out, data, "namespace prefix not declared");
        }
        let role = self.role_of(local);
        let name_start = self.names.len() as u32;
        self.names.extend_from_slice(qname);
        self.frames.push(Frame {
            name_start,
            name_len: qname.len() as u32,
            role,
            ns_mark,
            damage_mark: self.damage,
            had_child: false,
        });
        self.on_start(role, t, local);
        if role.collects() {
            self.collecting = true;
            self.has_text = false;
            self.text.clear();
            self.text_over = false;
        }
        if self_closing {
            self.pop(true, out, data, idna);
        }
    }

    /// Whether a start tag named `local` is an item directly inside an open item of a urlset or
    /// sitemap index: the open item's end tag is missing.
    fn ends_open_item(&self, local: &[u8]) -> bool {
        same(local, self.item_name) && self.open_item_on_top()
    }

    /// Whether the innermost open element is an item of a urlset or sitemap index.
    fn open_item_on_top(&self) -> bool {
        matches!(self.kind, Kind::Urlset | Kind::SitemapIndex)
            && self.frames.last().is_some_and(|f| f.role == Role::Item)
    }

    fn role_of(&mut self, local: &[u8]) -> Role {
        if !self.root_seen {
            self.root_seen = true;
            return Role::Root;
        }
        if same(local, self.item_name) {
            return Role::Item;
        }
        let parent = self.frames.last().map(|f| f.role);
        let kind = self.kind;
        let Some(item) = self.items.last_mut() else {
            return Role::Other;
        };
        if let Some(rare) = item.rare.as_mut().filter(|r| r.news_frame.is_some()) {
            if let Some(i) = field_index(&NEWS_FIELDS, local) {
                if !rare.news_claimed[i as usize] {
                    rare.news_claimed[i as usize] = true;
                    return Role::NewsField(i);
                }
            }
            return Role::Other;
        }
        match parent {
            Some(Role::Item) => {}
            Some(Role::Image) => {
                return field_index(&IMAGE_FIELDS, local).map_or(Role::Other, Role::ImageField)
            }
            Some(Role::Video) => {
                return field_index(&VIDEO_FIELDS, local).map_or(Role::Other, Role::VideoField)
            }
            _ => return Role::Other,
        }
        match (kind, local) {
            (_, b"loc") => Role::Loc,
            (_, b"link") => Role::Link,
            (Kind::Urlset | Kind::SitemapIndex, b"lastmod") => Role::Lastmod,
            (Kind::Urlset, b"priority") => Role::Priority,
            (Kind::Urlset, b"changefreq") => Role::Changefreq,
            (Kind::Urlset, b"image") => Role::Image,
            (Kind::Urlset, b"video") => Role::Video,
            (Kind::Urlset, b"news") => Role::News,
            (Kind::Rss, b"pubDate") => Role::PubDate,
            (Kind::Rss, b"guid") => Role::Guid,
            (Kind::Atom, b"updated") => Role::Updated,
            (Kind::Atom, b"published") => Role::Published,
            _ => Role::Other,
        }
    }

    /// What a start tag's attributes tell, for the few elements that carry data in them.
    fn on_start(&mut self, role: Role, t: &[u8], _local: &[u8]) {
        match role {
            Role::Item => {
                let mut item = Item::default();
                if !self.attrs.is_empty() {
                    if let Some(href) = self.attr(t, b"href") {
                        item.rare().href_attr = Some(href);
                    }
                }
                self.items.push(item);
            }
            Role::Link if self.kind == Kind::Urlset => {
                if !self.attr_is(t, b"rel", "alternate") {
                    return;
                }
                let hreflang = self.attr(t, b"hreflang");
                let href = self.attr(t, b"href");
                if let (Some(hreflang), Some(href)) = (hreflang, href) {
                    if !hreflang.is_empty() {
                        if let Some(item) = self.items.last_mut() {
                            item.alternates.push((hreflang, href));
                        }
                    }
                }
            }
            Role::Link if self.kind == Kind::Atom => {
                let rel = self.attr(t, b"rel");
                if rel.as_deref().unwrap_or("alternate") != "alternate" {
                    return;
                }
                let href = self.attr(t, b"href");
                if let Some(item) = self.items.last_mut() {
                    if item.link.as_deref().unwrap_or("").is_empty() {
                        item.link = href;
                        item.link_clean = true;
                    }
                }
            }
            Role::Guid => {
                let perma = !self.attr_is(t, b"isPermaLink", "false");
                if let Some(item) = self.items.last_mut() {
                    item.guid_perma = perma;
                }
            }
            Role::Image | Role::Video => {
                if let Some(item) = self.items.last_mut() {
                    item.rare().cur = Default::default();
                }
            }
            Role::News => {
                let depth = self.frames.len() - 1;
                if let Some(item) = self.items.last_mut() {
                    let rare = item.rare();
                    rare.news_frame = Some(depth);
                    rare.news_claimed = [false; 4];
                    rare.news_vals = Default::default();
                }
            }
            _ => {}
        }
    }

    fn end_tag(&mut self, name: &[u8], out: &mut Out, data: &[u8], idna: &mut dyn Idna) {
        let names = &self.names;
        let matches = |f: &Frame| {
            same(
                &names[f.name_start as usize..(f.name_start + f.name_len) as usize],
                name,
            )
        };
        match self.frames.last() {
            Some(top) if matches(top) => {
                self.pop(true, out, data, idna);
            }
            _ => match self.frames.iter().rposition(matches) {
                Some(k) if k + 2 == self.frames.len() && self.open_item_on_top() => {
                    // `<url><loc>A</loc></urlset>`: the item's end tag is missing and where it
                    // ends is plain: it is read whole, its parent closes by its own end tag.
                    let what = match self.kind {
                        Kind::SitemapIndex => {
                            "<sitemap> left open at its parent's end tag: it ends there"
                        }
                        _ => "<url> left open at its parent's end tag: it ends there",
                    };
                    self.error(out, data, what);
                    self.pop(true, out, data, idna);
                    self.pop(true, out, data, idna);
                }
                Some(k) => {
                    self.damage(out, data, "end tag does not match the open element");
                    while self.frames.len() > k {
                        self.pop(false, out, data, idna);
                    }
                }
                None => self.damage(out, data, "end tag without a start tag"),
            },
        }
    }

    /// Close the innermost element; `normal`: by its own end tag.
    fn pop(&mut self, normal: bool, out: &mut Out, data: &[u8], idna: &mut dyn Idna) {
        let Some(frame) = self.frames.last() else {
            return;
        };
        let clean = normal && frame.damage_mark == self.damage && !frame.had_child;
        if self.collecting {
            self.finish_text(clean, out, data);
        }
        let Some(frame) = self.frames.pop() else {
            return;
        };
        self.names.truncate(frame.name_start as usize);
        let mark = frame.ns_mark as usize;
        if mark < self.ns_ends.len() {
            self.last_prefix = None;
            let first = if mark == 0 {
                0
            } else {
                self.ns_ends[mark - 1] as usize
            };
            // Each declaration leaves scope once: the work stays linear in the input.
            let mut start = first;
            for &end in &self.ns_ends[mark..] {
                let prefix = &self.ns[start..end as usize];
                if let Some(count) = self.ns_count.get_mut(prefix) {
                    *count -= 1;
                    if *count == 0 {
                        self.ns_count.remove(prefix);
                    }
                }
                start = end as usize;
            }
            self.ns.truncate(first);
            self.ns_ends.truncate(mark);
        }
        match frame.role {
            Role::Root => self.root_closed = true,
            Role::Item => {
                if let Some(item) = self.items.pop() {
                    if normal && !item.damaged {
                        self.finish_item(item, out, idna);
                    } else {
                        self.abandon(item, out, idna);
                    }
                }
            }
            Role::Image => {
                let base = &out.base;
                if let Some(item) = self.items.last_mut() {
                    let rare = item.rare();
                    let [loc, title, caption, _, _] = std::mem::take(&mut rare.cur);
                    let url = loc
                        .filter(|l| !l.is_empty())
                        .and_then(|l| urls::resolve(&l, base, idna));
                    if let Some(url) = url {
                        rare.images.push(Image {
                            loc: url,
                            title: title.filter(|s| !s.is_empty()),
                            caption: caption.filter(|s| !s.is_empty()),
                        });
                    }
                }
            }
            Role::Video => {
                if let Some(item) = self.items.last_mut() {
                    let rare = item.rare();
                    let [c, p, th, ti, d] = std::mem::take(&mut rare.cur);
                    let f = |v: Option<String>| v.filter(|s| !s.is_empty());
                    rare.videos.push(Video {
                        content_loc: f(c),
                        player_loc: f(p),
                        thumbnail_loc: f(th),
                        title: f(ti),
                        description: f(d),
                    });
                }
            }
            Role::News => {
                if let Some(item) = self.items.last_mut() {
                    let rare = item.rare();
                    rare.news_frame = None;
                    let [title, date, language, name] = std::mem::take(&mut rare.news_vals);
                    let f = |v: Option<String>| v.filter(|s| !s.is_empty());
                    rare.news = Some(News {
                        title: f(title),
                        publication_date: f(date).and_then(|d| values::normalize_lastmod(&d)),
                        language: f(language),
                        publication_name: f(name),
                    });
                }
            }
            _ => {}
        }
    }

    /// The text of the innermost element is complete: hand it to the item.
    fn finish_text(&mut self, clean: bool, out: &mut Out, data: &[u8]) {
        self.collecting = false;
        let role = match self.frames.last() {
            Some(f) => f.role,
            None => return,
        };
        let text = if self.text_over {
            self.text_over = false;
            self.text.clear();
            self.damage(out, data, "value longer than 65536 bytes dropped");
            None
        } else if self.has_text {
            let scalar = matches!(role, Role::Lastmod | Role::Priority | Role::Changefreq);
            if let (true, Some(raw)) = (scalar, plain_text(&self.text)) {
                // Parsed where it lies: no string is made for a value read and dropped, and a
                // lastmod's is made once, normalized.
                if let Some(item) = self.items.last_mut() {
                    item.set_scalar(role, Some(raw));
                }
                self.text.clear();
                return;
            }
            let d = decode(&self.text, false);
            self.text.clear();
            if d.damaged {
                self.error(out, data, "invalid UTF-8 or character reference in a value");
            }
            Some(d.text)
        } else {
            None
        };
        let clean = clean && text.is_some();
        self.deliver(role, text, clean, out);
    }

    fn deliver(&mut self, role: Role, text: Option<String>, clean: bool, out: &mut Out) {
        let kind = self.kind;
        let Some(item) = self.items.last_mut() else {
            return;
        };
        match role {
            Role::Loc => {
                // The first non-blank `<loc>` is the entry's; a further one is recorded at once
                // (bounded memory however many there are). See the module's notes.
                let blank =
                    |t: &Option<String>| t.as_deref().is_none_or(|t| py_strip(t).is_empty());
                match &item.loc {
                    Some(held) if !blank(held) => {
                        if !blank(&text) && matches!(kind, Kind::Urlset | Kind::SitemapIndex) {
                            let reason = if kind == Kind::Urlset {
                                "extra <loc> in one <url> (the first is the entry)"
                            } else {
                                "extra <loc> in one <sitemap> (the first is the sitemap)"
                            };
                            out.malformed(py_strip(text.as_deref().unwrap_or("")), reason);
                        }
                    }
                    Some(_) if blank(&text) => {}
                    _ => {
                        item.loc = Some(text);
                        item.loc_clean = clean;
                    }
                }
            }
            Role::Lastmod | Role::Priority | Role::Changefreq => {
                item.set_scalar(role, text.as_deref());
            }
            Role::Link => {
                if !item.link_seen {
                    item.link_seen = true;
                    if let Some(t) = text.as_ref().filter(|t| !t.is_empty()) {
                        item.rare().first_link = Some(t.clone());
                    }
                }
                if kind == Kind::Rss && text.as_deref().is_some_and(|t| !t.is_empty()) {
                    item.link = text;
                    item.link_clean = clean;
                }
            }
            Role::Guid if item.link.is_none() && item.guid_perma => {
                item.link = text;
                item.link_clean = clean;
            }
            Role::PubDate => {
                if let Some(t) = text.filter(|t| !t.is_empty()) {
                    item.date = normalize_rfc822(&t);
                }
            }
            Role::Updated => {
                if let Some(d) = values::normalize_lastmod(text.as_deref().unwrap_or("")) {
                    item.date = Some(d);
                }
            }
            Role::Published if item.date.is_none() => {
                item.date = values::normalize_lastmod(text.as_deref().unwrap_or(""));
            }
            Role::ImageField(i) | Role::VideoField(i) => {
                item.rare().cur[i as usize] =
                    Some(py_strip(text.as_deref().unwrap_or("")).to_owned());
            }
            Role::NewsField(i) => {
                item.rare().news_vals[i as usize] =
                    Some(py_strip(text.as_deref().unwrap_or("")).to_owned());
            }
            _ => {}
        }
    }

    fn finish_item(&mut self, item: Item, out: &mut Out, idna: &mut dyn Idna) {
        out.bad_priority += u64::from(item.bad_priority);
        out.bad_changefreq += u64::from(item.bad_changefreq);
        let (images, videos, news) = match item.rare {
            Some(rare) => (rare.images, rare.videos, rare.news),
            None => (Vec::new(), Vec::new(), None),
        };
        match self.kind {
            Kind::Urlset => {
                let mut alternates = Vec::with_capacity(item.alternates.len());
                for (hreflang, href) in item.alternates {
                    if let Some(url) = out.resolve(Some(href), true, idna) {
                        let stripped = py_strip(&hreflang);
                        let hreflang = if stripped.len() == hreflang.len() {
                            hreflang
                        } else {
                            stripped.to_owned()
                        };
                        alternates.push(Alternate { hreflang, url });
                    }
                }
                if let Some(url) = out.resolve(item.loc.flatten(), true, idna) {
                    let more = boxed_if_any(More {
                        alternates,
                        images,
                        videos,
                        news,
                    });
                    out.entries.push(Entry {
                        url,
                        lastmod: item.lastmod,
                        priority: item.priority,
                        changefreq: item.changefreq.map(std::borrow::Cow::Borrowed),
                        more,
                    });
                }
            }
            Kind::SitemapIndex => {
                if let Some(url) = out.resolve(item.loc.flatten(), false, idna) {
                    if let Some(lastmod) = item.lastmod {
                        out.sitemap_lastmods
                            .push((url.clone(), lastmod.as_str().to_owned()));
                    }
                    out.sitemaps.push(url);
                }
            }
            _ => {
                if let Some(url) = out.resolve(item.link, true, idna) {
                    out.entries.push(Entry {
                        url,
                        lastmod: item.date.map(Short::from),
                        ..Entry::default()
                    });
                }
            }
        }
    }

    /// An item spoiled by damage: only a URL it held whole comes out.
    fn abandon(&mut self, item: Item, out: &mut Out, idna: &mut dyn Idna) {
        let raw = match self.kind {
            Kind::Urlset | Kind::SitemapIndex => item.loc.flatten().filter(|_| item.loc_clean),
            _ => item.link.filter(|_| item.link_clean),
        };
        let Some(raw) = raw else { return };
        let index = self.kind == Kind::SitemapIndex;
        if let Some(url) = out.resolve(Some(raw), !index, idna) {
            if index {
                out.sitemaps.push(url);
            } else {
                out.entries.push(Entry {
                    url,
                    ..Entry::default()
                });
            }
            out.recovered += 1;
        }
    }

    /// The end of the input.
    pub fn close(&mut self, out: &mut Out) {
        let data: &[u8] = &[];
        self.at = 0;
        self.use_mark = false;
        match self.lex {
            Lex::Text => {}
            Lex::Open | Lex::Tag { .. } => self.error(out, data, "document ended inside a tag"),
            Lex::Comment { .. } => self.error(out, data, "document ended inside a comment"),
            Lex::Pi { .. } => {
                self.error(out, data, "document ended inside a processing instruction")
            }
            Lex::Cdata { brackets } => {
                let held = brackets as usize;
                self.cdata_emit(held, &[], held);
                self.error(out, data, "document ended inside a CDATA section")
            }
            Lex::Decl => self.error(out, data, "document ended inside a declaration"),
        }
        self.lex = Lex::Text;
        self.carry = Vec::new();
        if self.collecting {
            self.finish_text(false, out, data);
        }
        if !self.items.is_empty() {
            self.error(out, data, "document ended inside an item");
            while let Some(item) = self.items.pop() {
                let rare = item.rare.unwrap_or_default();
                let raw = [item.loc.flatten(), rare.first_link, rare.href_attr]
                    .into_iter()
                    .flatten()
                    .find(|s| !s.is_empty())
                    .unwrap_or_default();
                out.malformed.push(crate::entry::Malformed {
                    raw: cut_chars(py_strip(&raw), 2000).to_owned(),
                    reason: "entry cut off",
                });
                out.errors.push("document ended inside an entry".to_owned());
            }
        } else if !self.root_seen {
            self.error(out, data, "no root element");
        } else if !self.root_closed {
            self.error(
                out,
                data,
                "document ended before the root element's end tag",
            );
        }
        self.frames.clear();
        self.names.clear();
    }
}

/// Where `--` not followed by `>` ends in `s`, a stretch of a comment's text that follows
/// `carried` dashes (the end of the stretch before); the position of the byte after the dashes.
fn double_dash(s: &[u8], carried: u8) -> Option<usize> {
    match carried {
        2.. if s.first().is_some_and(|&b| b != b'>') => return Some(0),
        1 if s.first() == Some(&b'-') && s.get(1).is_some_and(|&b| b != b'>') => return Some(1),
        _ => {}
    }
    memchr::memmem::find_iter(s, b"--")
        .map(|m| m + 2)
        .find(|&after| s.get(after).is_some_and(|&b| b != b'>'))
}
