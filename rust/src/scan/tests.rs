//! Unit tests of the scanner: every field, sniffing, entities, chunking, damage, limits.
use super::*;
use crate::entry::{Alternate, Image};
use crate::urls::NoIdna;

pub(super) struct Result {
    pub kind: Option<Kind>,
    pub entries: Vec<Entry>,
    pub sitemaps: Vec<String>,
    pub malformed: Vec<Malformed>,
    pub notes: Vec<String>,
    pub errors: Vec<String>,
    pub damaged: bool,
}

pub(super) fn scan_chunks(chunks: &[&[u8]], truncated: bool) -> Result {
    scan_with_charset(chunks, truncated, None)
}

fn scan_with_charset(chunks: &[&[u8]], truncated: bool, charset: Option<&str>) -> Result {
    let mut s = Scanner::with_charset("https://ex.com/sitemap.xml", charset);
    let mut idna = NoIdna;
    let mut entries = Vec::new();
    let mut sitemaps = Vec::new();
    let mut malformed = Vec::new();
    for c in chunks {
        s.feed(c, &mut idna);
        entries.extend(s.take_entries());
        sitemaps.extend(s.take_sitemaps());
        malformed.extend(s.take_malformed());
    }
    if truncated {
        s.note_truncated();
    }
    s.close(&mut idna);
    entries.extend(s.take_entries());
    sitemaps.extend(s.take_sitemaps());
    malformed.extend(s.take_malformed());
    Result {
        kind: s.kind(),
        entries,
        sitemaps,
        malformed,
        notes: s.notes().to_vec(),
        errors: s.errors().to_vec(),
        damaged: s.damaged(),
    }
}

pub(super) fn scan(doc: &[u8]) -> Result {
    scan_chunks(&[doc], false)
}

fn urls_of(r: &Result) -> Vec<&str> {
    r.entries.iter().map(|e| e.url.as_str()).collect()
}

const NS: &str = r#"<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:video="http://www.google.com/schemas/sitemap-video/1.1" xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">"#;

fn urlset(body: &str) -> Vec<u8> {
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{NS}\n{body}\n</urlset>\n").into_bytes()
}

#[test]
fn basic_urlset() {
    let r = scan(&urlset("<url><loc>https://a.com/x</loc><lastmod>2020-01-02T03:04Z</lastmod><priority>0.5</priority><changefreq>Daily</changefreq></url>"));
    assert_eq!(r.kind, Some(Kind::Urlset));
    assert_eq!(urls_of(&r), ["https://a.com/x"]);
    let e = &r.entries[0];
    assert_eq!(e.lastmod.as_deref(), Some("2020-01-02T03:04:00+00:00"));
    assert_eq!(e.priority, Some(0.5));
    assert_eq!(e.changefreq.as_deref(), Some("daily"));
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(!r.damaged);
}

/// A realistic urlset of `n` URLs: date-only and offset `lastmod`s, hreflang on every tenth,
/// an `&amp;` query now and then, whitespace around some `<loc>`s.
pub(super) fn big_urlset(n: usize) -> Vec<u8> {
    let mut doc = String::with_capacity(n * 120);
    doc.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    doc.push_str(NS);
    doc.push('\n');
    for i in 0..n {
        doc.push_str("  <url>\n    <loc>");
        if i % 7 == 0 {
            doc.push_str("\n      ");
        }
        doc.push_str(&format!(
            "http://127.0.0.1:8080/section-{}/page-{i}",
            i % 97
        ));
        if i % 13 == 0 {
            doc.push_str(&format!("?id={i}&amp;view=full"));
        }
        if i % 7 == 0 {
            doc.push_str("\n    ");
        }
        doc.push_str("</loc>\n");
        if i % 2 == 0 {
            doc.push_str("    <lastmod>2024-03-15</lastmod>\n");
        } else {
            doc.push_str("    <lastmod>2024-03-15T10:20:30+02:00</lastmod>\n");
        }
        if i % 10 == 0 {
            doc.push_str(&format!(
                "    <xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"http://127.0.0.1:8080/de/page-{i}\"/>\n"
            ));
        }
        doc.push_str("  </url>\n");
    }
    doc.push_str("</urlset>\n");
    doc.into_bytes()
}

/// Speed figure, not a test of speed: `cargo test --release -- --ignored --nocapture speed`.
#[test]
#[ignore]
fn speed_1m_urls() {
    let doc = big_urlset(1_000_000);
    // CPU time of this thread (the machine is shared; wall time would measure the neighbours).
    let cpu = || -> f64 {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
            .map_or(0.0, |ns| ns / 1e9)
    };
    let start = cpu();
    let lts = memchr::memchr_iter(b'<', &doc).count();
    let copy = doc.clone();
    println!(
        "calibration: count {lts} '<' and copy the document: {:.3} s CPU",
        cpu() - start
    );
    drop(copy);
    for chunk in [65536, 16384, 1024, doc.len()] {
        let start = cpu();
        let mut s = Scanner::new("http://127.0.0.1:8080/sitemap.xml");
        let mut idna = NoIdna;
        let mut n = 0;
        for c in doc.chunks(chunk) {
            s.feed(c, &mut idna);
            n += s.take_entries().len();
        }
        s.close(&mut idna);
        n += s.take_entries().len();
        let t = cpu() - start;
        assert_eq!(n, 1_000_000);
        assert!(s.errors().is_empty(), "{:?}", s.errors());
        println!(
            "chunk {chunk}: {} MB in {:.3} s CPU: {:.0} ns per URL, {:.0} MB/s",
            doc.len() / 1_000_000,
            t,
            t * 1e9 / 1e6,
            doc.len() as f64 / t / 1e6
        );
    }
}

/// Everything a scan returns, in one comparable value (errors and their positions included).
fn summary(r: &Result) -> String {
    format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}",
        r.kind, r.entries, r.sitemaps, r.malformed, r.notes, r.errors, r.damaged
    )
}

fn mal(r: &Result) -> Vec<(&str, &str)> {
    r.malformed
        .iter()
        .map(|m| (m.raw.as_str(), m.reason))
        .collect()
}

#[test]
fn sniffing() {
    let cases: [(&[u8], Kind, &str); 12] = [
        (b"", Kind::NotASitemap, "not a sitemap: empty body"),
        (b" \r\n\t", Kind::NotASitemap, "not a sitemap: empty body"),
        (
            b"hello\nhttp://a.com/",
            Kind::NotASitemap,
            "not a sitemap: not XML and not a list of URLs",
        ),
        (
            b"<HTML><body/></HTML>",
            Kind::NotASitemap,
            "not a sitemap: HTML page",
        ),
        (
            b"<?xml version='1.0'?><foo:bar xmlns:foo='x'/>",
            Kind::NotASitemap,
            "not a sitemap: root element <bar>",
        ),
        (
            b"<!-- only a comment -->",
            Kind::NotASitemap,
            "not a sitemap: no root element",
        ),
        (
            b"<!-- unterminated",
            Kind::NotASitemap,
            "not a sitemap: no root element",
        ),
        (
            b"<!DOCTYPE x [ <!ENTITY a 'b'>",
            Kind::NotASitemap,
            "not a sitemap: root element <!DOCTYPE>",
        ),
        (b"\xef\xbb\xbf  <URLSET></URLSET>", Kind::Urlset, ""),
        (
            b"<sm:sitemapindex xmlns:sm='x'></sm:sitemapindex>",
            Kind::SitemapIndex,
            "",
        ),
        (
            b"<?xml version='1.0'?><!-- c --><?pi x?><rss></rss>",
            Kind::Rss,
            "",
        ),
        (b"\n HTTPS://a.com/x\n", Kind::Text, ""),
    ];
    for (doc, kind, note) in cases {
        let r = scan(doc);
        assert_eq!(r.kind, Some(kind), "{doc:?}");
        if note.is_empty() {
            assert!(r.notes.is_empty(), "{doc:?}: {:?}", r.notes);
        } else {
            assert_eq!(r.notes, [note], "{doc:?}");
        }
    }
    assert_eq!(
        scan(b"<feed xmlns='http://www.w3.org/2005/Atom'/>").kind,
        Some(Kind::Atom)
    );
    let html = scan(b"<!DOCTYPE html><html><body/></html>");
    assert_eq!(
        html.notes,
        [
            "DOCTYPE declaration ignored (sitemaps never need one)",
            "not a sitemap: HTML page"
        ]
    );
    // The DOCTYPE goes, its entities are never expanded, and a note says so.
    let r = scan(b"<?xml version='1.0'?><!DOCTYPE urlset [<!ENTITY x 'http://evil/'>]><urlset><url><loc>&x;a</loc></url></urlset>");
    assert_eq!(
        r.notes,
        ["DOCTYPE declaration ignored (sitemaps never need one)"]
    );
    assert_eq!(urls_of(&r), ["https://ex.com/&x;a"]);
    // A control character before `<` makes it neither XML nor a list of URLs.
    assert_eq!(scan(b"\x01<urlset/>").kind, Some(Kind::NotASitemap));
}

#[test]
fn encodings() {
    let mut utf16 = vec![0xff, 0xfe];
    for u in "<urlset><url><loc>http://a.com/\u{e9}</loc></url></urlset>".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    assert_eq!(urls_of(&scan(&utf16)), ["http://a.com/%C3%A9"]);
    let latin1 = b"<?xml version='1.0' encoding='ISO-8859-1'?><urlset><url><loc>http://a.com/\xe9</loc></url></urlset>";
    assert_eq!(urls_of(&scan(latin1)), ["http://a.com/%C3%A9"]);
    // As browsers read it: 0x96 in an "ISO-8859-1" document is windows-1252's en dash.
    let dash = b"<?xml version='1.0' encoding='latin1'?><urlset><url><loc>http://a.com/a\x96b</loc></url></urlset>";
    assert_eq!(urls_of(&scan(dash)), ["http://a.com/a%E2%80%93b"]);
    let cp1252 = b"<?xml version='1.0' encoding='windows-1252'?><urlset><url><loc>http://a.com/\x80</loc></url></urlset>";
    assert_eq!(urls_of(&scan(cp1252)), ["http://a.com/%E2%82%AC"]);
    let other = scan(b"<?xml version='1.0' encoding='x-no-such'?><urlset><url><loc>http://a.com/\xc3\xa9</loc></url></urlset>");
    assert_eq!(urls_of(&other), ["http://a.com/%C3%A9"]);
    assert_eq!(
        other.notes,
        ["encoding \"x-no-such\" not supported: read as UTF-8"]
    );
    // Invalid UTF-8 becomes U+FFFD; the entry stays, the document is marked damaged.
    let bad = scan(
        &urlset("<url><loc>http://a.com/\u{0}</loc></url>")
            .iter()
            .map(|&b| if b == 0 { 0xff } else { b })
            .collect::<Vec<u8>>(),
    );
    assert_eq!(urls_of(&bad), ["http://a.com/%EF%BF%BD"]);
    assert!(bad.damaged);
}

#[test]
fn text_semantics() {
    let cases = [
        (
            "<url><loc>http://a.com/<!--x-->b</loc></url>",
            Some("http://a.com/b"),
        ),
        (
            "<url><loc>http://a.com/x<?pi z?>b</loc></url>",
            Some("http://a.com/xb"),
        ),
        (
            "<url><loc>http://a.com/<b>x</b>y</loc></url>",
            Some("http://a.com/"),
        ),
        (
            "<url><loc>  <![CDATA[http://a.com/q]]>  </loc></url>",
            Some("http://a.com/q"),
        ),
        (
            "<url><loc>http://a.com/<![CDATA[&amp;]]>&amp;&eacute;&#65;&#x42;&AMP;</loc></url>",
            Some("http://a.com/&amp;&&eacute;AB&AMP;"),
        ),
        (
            "<url><loc>http://a.com/?a=1&b=2</loc></url>",
            Some("http://a.com/?a=1&b=2"),
        ),
        (
            "<url><loc>http://a.com/1</loc><loc>http://a.com/2</loc></url>",
            Some("http://a.com/1"),
        ),
    ];
    for (body, want) in cases {
        let r = scan(&urlset(body));
        assert_eq!(urls_of(&r).first().copied(), want, "{body}");
        assert!(!r.damaged, "{body}: {:?}", r.errors);
    }
    let r = scan(&urlset("<url><loc></loc></url><url><loc/></url><url><loc> </loc></url><url><loc><![CDATA[]]></loc></url><url><loc><!--c--></loc></url><url><loc>mailto:x</loc></url>"));
    assert_eq!(
        mal(&r),
        [
            ("", "entry without a URL"),
            ("", "entry without a URL"),
            ("", "empty URL"),
            ("", "empty URL"),
            ("", "entry without a URL"),
            ("mailto:x", "cannot be resolved to an http(s) URL"),
        ]
    );
    // A later empty <loc> takes nothing from an earlier good one, and is nothing to record.
    let r = scan(&urlset("<url><loc>http://a.com/1</loc><loc/></url>"));
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert!(r.malformed.is_empty());
}

#[test]
fn every_field() {
    let r = scan(&urlset(concat!(
        "<url><loc> /rel?utm_source=x&amp;k=v </loc><lastmod>2020-01-02 03:04:05.5 +0130</lastmod>",
        "<priority>0.5</priority><priority> 1_0 </priority><changefreq>x</changefreq>",
        "<xhtml:link rel=\"alternate\" hreflang=\" de\n\tx \" href=\"http://a.com/d&#10;e\"/>",
        "<xhtml:link rel=\"alternate\" hreflang=\"fr\" href=\"mailto:x\"/>",
        "<xhtml:link rel=\"canonical\" hreflang=\"it\" href=\"/it\"/>",
        "<xhtml:link rel=\"alternate\" hreflang=\"\" href=\"/none\"/>",
        "<image:image><image:loc> /i.png </image:loc><image:title>T</image:title><image:caption> </image:caption></image:image>",
        "<image:image><image:loc>mailto:x</image:loc></image:image>",
        "<video:video><video:title> V </video:title><video:content_loc>http://v/</video:content_loc></video:video>",
        "<news:news><news:publication><news:name>N</news:name><news:language>en</news:language></news:publication>",
        "<news:title>A<news:title>B</news:title></news:title><news:publication_date>2020-01-01T00:00Z</news:publication_date></news:news>",
        "</url>"
    )));
    assert!(!r.damaged, "{:?}", r.errors);
    let e = &r.entries[0];
    assert_eq!(e.url, "https://ex.com/rel?k=v");
    assert_eq!(e.lastmod.as_deref(), Some("2020-01-02T03:04:05.5+01:30"));
    assert_eq!(e.priority, None);
    assert_eq!(e.changefreq.as_deref(), None);
    assert_eq!(
        e.alternates(),
        [Alternate {
            hreflang: "de  x".into(),
            url: "http://a.com/de".into()
        }]
    );
    assert_eq!(
        e.images(),
        [Image {
            loc: "https://ex.com/i.png".into(),
            title: Some("T".into()),
            caption: None
        }]
    );
    assert_eq!(e.videos().len(), 1);
    assert_eq!(e.videos()[0].title.as_deref(), Some("V"));
    assert_eq!(e.videos()[0].content_loc.as_deref(), Some("http://v/"));
    let news = e.news().unwrap();
    assert_eq!(news.title.as_deref(), Some("A"));
    assert_eq!(news.publication_name.as_deref(), Some("N"));
    assert_eq!(news.language.as_deref(), Some("en"));
    assert_eq!(
        news.publication_date.as_deref(),
        Some("2020-01-01T00:00:00+00:00")
    );
    assert_eq!(
        mal(&r),
        [("mailto:x", "cannot be resolved to an http(s) URL")]
    );
    assert_eq!(
        r.notes,
        [
            "1 priority values outside 0-1 or not numbers",
            "1 unknown changefreq values"
        ]
    );
}

#[test]
fn index_rss_atom() {
    let r = scan(b"<sitemapindex><sitemap><loc>/s1.xml?utm_source=x</loc></sitemap><sitemap><loc>ftp://x</loc></sitemap></sitemapindex>");
    assert_eq!(r.sitemaps, ["https://ex.com/s1.xml?utm_source=x"]);
    assert_eq!(
        mal(&r),
        [("ftp://x", "cannot be resolved to an http(s) URL")]
    );
    let r = scan(b"<rss><channel><item><link>http://a.com/r</link><pubDate>Mon, 02 Jan 2006</pubDate></item><item><guid>http://a.com/g</guid><link></link></item><item><guid isPermaLink=\"false\">x</guid></item></channel></rss>");
    assert_eq!(urls_of(&r), ["http://a.com/r", "http://a.com/g"]);
    assert_eq!(r.entries[0].lastmod.as_deref(), Some("Mon, 02 Jan 2006"));
    assert_eq!(mal(&r), [("", "entry without a URL")]);
    let r = scan(b"<feed><entry><link rel='self' href='/self'/><link href='/a'/><link href='/b'/><updated>2020-01-01</updated><published>2019</published></entry><entry><link rel='alternate' href='/c'/><published>2020</published></entry></feed>");
    assert_eq!(urls_of(&r), ["https://ex.com/a", "https://ex.com/c"]);
    assert_eq!(r.entries[0].lastmod.as_deref(), Some("2020-01-01"));
    assert_eq!(r.entries[1].lastmod.as_deref(), Some("2020"));
}

#[test]
fn text_sitemaps() {
    let long = format!("http://a.com/{}\n", "x".repeat(70_000));
    let doc =
        format!("http://a.com/1\r\n\n  https://a.com/2  \nnot a url\n{long}http://a.com/last");
    let r = scan(doc.as_bytes());
    assert_eq!(r.kind, Some(Kind::Text));
    assert_eq!(
        urls_of(&r),
        ["http://a.com/1", "https://a.com/2", "http://a.com/last"]
    );
    assert_eq!(r.malformed[0].raw, "not a url");
    assert_eq!(r.malformed[0].reason, "not an absolute URL");
    assert_eq!(r.malformed[1].reason, "line too long for a URL");
    assert_eq!(r.malformed[1].raw.chars().count(), 2000);
    // Cut inside the last line: reported, not yielded.
    let r = scan_chunks(&[b"http://a.com/1\nhttp://a.com/2"], true);
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert_eq!(mal(&r), [("http://a.com/2", "entry cut off")]);
    assert_eq!(r.errors, ["document ended inside an entry"]);
    let r = scan_chunks(&[b"http://a.com/1\n"], true);
    assert!(r.malformed.is_empty() && r.errors.is_empty());
}

const CHUNK_DOCS: [&str; 6] = [
    "<?xml version='1.0'?><!DOCTYPE u [<!ENTITY a 'b'>]><!-- c --><urlset xmlns:x='y'><url><loc> http://a.com/&amp;<![CDATA[&]]]]>&#65;</loc><lastmod>2020-01-02T03:04Z</lastmod><x:link rel='alternate' hreflang='de' href='/d&#x26;e'/></url><!--x--><?p?></urlset>",
    "\u{feff}<urlset><url><loc>http://a.com/\r\n1</loc></url><url><loc>http://a.com/2</loc></url></urlset>",
    "<urlset><url><loc>http://a.com/1</loc></url><url><loc>http://a.com/2</lo",
    "<urlset><url><loc>http://a.com/1</loc></urll><url><loc>http://a.com/2</loc></url><url><lo<c>x</urlset>",
    "http://a.com/1\r\nhttp://a.com/2\nnope",
    "<rss><channel><item><link>http://a.com/r</link><pubDate>x</pubDate></item><item><guid>/g</guid></item></channel></rss>",
];

/// `doc` with a comment after the root's start tag that pushes the rest past the first KiB
/// (which is read whole to sniff the kind), so that small chunks reach the XML scanner small.
fn padded(doc: &[u8]) -> Vec<u8> {
    let root = [b"<urlset".as_slice(), b"<rss"]
        .iter()
        .find_map(|r| memchr::memmem::find(doc, r));
    let Some(at) = root else {
        return doc.to_vec();
    };
    let end = at + memchr::memchr(b'>', &doc[at..]).unwrap_or(0) + 1;
    [&doc[..end], b"<!--", &[b' '; 1100], b"-->", &doc[end..]].concat()
}

/// The result is the same for every split into two chunks, and in 1- and 3-byte chunks.
fn assert_split_invariant(doc: &[u8]) {
    let whole = summary(&scan(doc));
    for cut in 1..doc.len() {
        let two = summary(&scan_chunks(&[&doc[..cut], &doc[cut..]], false));
        assert_eq!(
            two,
            whole,
            "split at {cut} of {:?}",
            String::from_utf8_lossy(doc)
        );
    }
    for n in [1, 3] {
        let chunks: Vec<&[u8]> = doc.chunks(n).collect();
        assert_eq!(
            summary(&scan_chunks(&chunks, false)),
            whole,
            "{n}-byte chunks"
        );
    }
}

#[test]
fn chunking_does_not_matter() {
    for doc in CHUNK_DOCS {
        assert_split_invariant(&padded(doc.as_bytes()));
    }
    for doc in CHUNK_DOCS {
        let doc = doc.as_bytes();
        let whole = summary(&scan(doc));
        for cut in 1..doc.len() {
            let two = summary(&scan_chunks(&[&doc[..cut], &doc[cut..]], false));
            assert_eq!(
                two,
                whole,
                "split at {cut} of {:?}",
                String::from_utf8_lossy(doc)
            );
        }
        let bytes: Vec<&[u8]> = doc.chunks(1).collect();
        assert_eq!(summary(&scan_chunks(&bytes, false)), whole);
        let threes: Vec<&[u8]> = doc.chunks(3).collect();
        assert_eq!(summary(&scan_chunks(&threes, false)), whole);
    }
}

#[test]
fn damage_keeps_intact_items() {
    // A mismatched end tag spoils its item: only the whole <loc> survives, with a note.
    let r = scan(b"<urlset><url><loc>http://a.com/1</loc><lastmod>2020</lastmod></urll></url><url><loc>http://a.com/2</loc><lastmod>2021</lastmod></url></urlset>");
    assert_eq!(urls_of(&r), ["http://a.com/1", "http://a.com/2"]);
    assert_eq!(r.entries[0].lastmod, None);
    assert_eq!(r.entries[1].lastmod.as_deref(), Some("2021"));
    assert_eq!(r.notes, ["recovered 1 URLs after XML damage"]);
    assert!(r.damaged);
    assert!(r.errors[0].starts_with("line 1 col "), "{:?}", r.errors);
    // An unclosed quote, a stray `<`, garbage: the items after them are whole.
    let r = scan(b"<urlset><url><loc>http://a.com/1</loc><x a=\"b></url><url><loc>http://a.com/2</loc></url>< junk <url><loc>http://a.com/3</loc></url></urlset>");
    assert_eq!(
        urls_of(&r),
        ["http://a.com/1", "http://a.com/2", "http://a.com/3"]
    );
    // A <loc> cut by damage is not returned in part.
    let r = scan(b"<urlset><url><loc>http://a.com/pa<rt</loc></url><url><loc>http://a.com/2</loc></url></urlset>");
    assert_eq!(urls_of(&r), ["http://a.com/2"]);
    // A new item inside an unfinished one: the unfinished one ends there, both are whole.
    let r = scan(
        b"<urlset><url><loc>http://a.com/1</loc><url><loc>http://a.com/2</loc></url></urlset>",
    );
    assert_eq!(urls_of(&r), ["http://a.com/1", "http://a.com/2"]);
    assert!(r.damaged && r.notes.is_empty());
    // Content after the root still counts.
    let r = scan(b"<urlset></urlset><url><loc>http://a.com/9</loc></url>");
    assert_eq!(urls_of(&r), ["http://a.com/9"]);
    assert!(r.damaged);
}

/// `<url>` and `<sitemap>` holding several `<loc>`s, or left open before the next one: every
/// `<loc>` is an entry (child sitemap) or a malformed record, in any chunks (see `xml`'s notes).
#[test]
fn several_locs_in_one_item_or_an_unclosed_item() {
    const EXTRA_URL: &str = "extra <loc> in one <url> (the first is the entry)";
    const EXTRA_SM: &str = "extra <loc> in one <sitemap> (the first is the sitemap)";
    // Two <loc>s in one closed <url>: the first is the entry and keeps the fields.
    let doc = urlset(concat!(
        "<url><loc>http://a.com/1</loc><lastmod>2020-01-02</lastmod>",
        "<xhtml:link rel=\"alternate\" hreflang=\"de\" href=\"http://a.com/de/1\"/>",
        "<loc> http://a.com/2 </loc><loc>http://a.com/3</loc></url>",
        "<url><loc>http://a.com/4</loc></url>",
    ));
    let r = scan(&doc);
    assert_eq!(urls_of(&r), ["http://a.com/1", "http://a.com/4"]);
    assert_eq!(r.entries[0].lastmod.as_deref(), Some("2020-01-02"));
    assert_eq!(r.entries[0].alternates().len(), 1);
    assert_eq!(
        mal(&r),
        [("http://a.com/2", EXTRA_URL), ("http://a.com/3", EXTRA_URL)]
    );
    assert!(!r.damaged, "{:?}", r.errors);
    assert_split_invariant(&padded(&doc));
    // A blank first <loc> gives way to the first one with a value; blank extras are nothing.
    let r = scan(&urlset(
        "<url><loc> </loc><loc>http://a.com/1</loc><loc/><loc>http://a.com/2</loc></url>",
    ));
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert_eq!(mal(&r), [("http://a.com/2", EXTRA_URL)]);
    // An unclosed <url> before the next: it ends there, read whole with its fields.
    let doc = urlset(concat!(
        "<url><loc>http://a.com/1</loc><lastmod>2020-01-02</lastmod>\n",
        "<url><loc>http://a.com/2</loc><priority>0.5</priority></url>\n",
        "<url><loc>http://a.com/3</loc></url>",
    ));
    let r = scan(&doc);
    assert_eq!(
        urls_of(&r),
        ["http://a.com/1", "http://a.com/2", "http://a.com/3"]
    );
    assert_eq!(r.entries[0].lastmod.as_deref(), Some("2020-01-02"));
    assert_eq!(r.entries[1].priority, Some(0.5));
    assert!(r.malformed.is_empty() && r.notes.is_empty());
    assert_eq!(
        r.errors,
        ["line 4 col 1: <url> inside an open <url>: the open one ends here"]
    );
    assert_split_invariant(&padded(&doc));
    // The last one left open at the root's end tag: it ends there, read whole.
    let doc = b"<urlset><url><loc>http://a.com/1</loc><lastmod>2020</lastmod></urlset>";
    let r = scan(doc);
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert_eq!(r.entries[0].lastmod.as_deref(), Some("2020"));
    assert!(r.malformed.is_empty() && r.notes.is_empty());
    assert_eq!(
        r.errors,
        ["line 1 col 62: <url> left open at its parent's end tag: it ends there"]
    );
    assert_split_invariant(doc);
    // A run of them, none closed, then the document ends: the last one is cut off.
    let r = scan_chunks(
        &[b"<urlset><url><loc>http://a.com/1</loc><url><loc>http://a.com/2</loc><url><loc>http://a.com/3</loc>"],
        true,
    );
    assert_eq!(urls_of(&r), ["http://a.com/1", "http://a.com/2"]);
    assert_eq!(mal(&r), [("http://a.com/3", "entry cut off")]);
    // A sitemap index: the same two rules.
    let doc = concat!(
        "<sitemapindex><sitemap><loc>http://a.com/s1.xml</loc><loc>http://a.com/s2.xml</loc>",
        "</sitemap><sitemap><loc>http://a.com/s3.xml</loc><lastmod>2020</lastmod>",
        "<sitemap><loc>http://a.com/s4.xml</loc></sitemap></sitemapindex>"
    );
    let r = scan(doc.as_bytes());
    assert_eq!(
        r.sitemaps,
        [
            "http://a.com/s1.xml",
            "http://a.com/s3.xml",
            "http://a.com/s4.xml"
        ]
    );
    assert_eq!(mal(&r), [("http://a.com/s2.xml", EXTRA_SM)]);
    assert_eq!(
        r.errors,
        ["line 1 col 156: <sitemap> inside an open <sitemap>: the open one ends here"]
    );
    assert_split_invariant(doc.as_bytes());
    // Deeper inside the open item (an unclosed <loc>): an item of its own, as before.
    let r = scan(&urlset(
        "<url><loc>http://a.com/1<url><loc>http://a.com/2</loc></url></url></url>",
    ));
    assert_eq!(urls_of(&r), ["http://a.com/2"]);
    // RSS keeps its own reading: no extra-<loc> records there.
    let r = scan(b"<rss><channel><item><link>http://a.com/r</link><loc>x</loc><loc>y</loc></item></channel></rss>");
    assert_eq!(urls_of(&r), ["http://a.com/r"]);
    assert!(r.malformed.is_empty());
}

/// Damage on several lines, each kind of error once.
const DAMAGED_DOCS: [&str; 11] = [
    "<urlset>\n<url><loc>http://a.com/1</loc></url>\n]]]><url><loc>http://a.com/a]]>b</loc></url></urlset>",
    "<?xml version='1.0' encoding='UTF-16'?>\n<urlset>\n<url><loc>http://a.com/1</loc></url></urlset>",
    "<urlset>\n<url><loc>http://a.com/1</loc></url>\n<url><loc>http://a.com/b < x</loc></url>\n<url><loc>http://a.com/c</loc></url></urlset>",
    "<urlset>\n<url><loc>http://a.com/1</lo></url>\n<url><loc>http://a.com/c</loc></urlx>\n<url><loc>http://a.com/d</url></urlset>",
    "<urlset>\n<url><loc>http://a.com/1</loc></url></urlset>\n  \n x <url><loc>http://a.com/c</loc></url>",
    "<urlset>\n<url><loc>http://a.com/1</loc></url><!DOCTYPE x>\n<url><<loc>http://a.com/b</loc></url><url><loc>http://a.com/c</loc></url></urlset>",
    "<urlset>\n<url bad=\"><loc>http://a.com/b</loc></url>\n<url><loc>http://a.com/c</loc></url></urlset>",
    "<urlset>\n<url><loc>http://a.com/1</loc><x:y>z</x:y></url>\n<url a=\"1\" b><loc>http://a.com/c</loc></url></urlset>",
    "<urlset>\n<url><loc>http://a.com/1</loc></url>\n<url><loc>http://a.com/",
    "<urlset>\n<url><loc>http://a.com/1</loc></url>\n<url a='",
    "<urlset>\n<url><loc>http://a.com/1</loc></url>\n<url><!-- x",
];

#[test]
fn error_positions_do_not_depend_on_chunking() {
    for doc in DAMAGED_DOCS {
        let doc = padded(doc.as_bytes());
        let r = scan(&doc);
        assert!(!r.errors.is_empty(), "{:?}", String::from_utf8_lossy(&doc));
        assert_split_invariant(&doc);
    }
    // `]]>` in text: the values are read, the document is damaged.
    let r = scan(&padded(DAMAGED_DOCS[0].as_bytes()));
    assert_eq!(urls_of(&r), ["http://a.com/1", "http://a.com/a]]%3Eb"]);
    assert_eq!(r.errors.len(), 2, "{:?}", r.errors);
    // UTF-16 declared without a byte order mark: read as UTF-8, and not well-formed.
    let r = scan(DAMAGED_DOCS[1].as_bytes());
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert!(
        r.errors[0].contains("without a byte order mark"),
        "{:?}",
        r.errors
    );
    // A broken tag is reported at its `<`, however it arrived.
    let doc = b"<urlset>\n<url><loc>http://a.com/1</loc></url>\n  <url a=\"<url><loc>http://a.com/2</loc></url></urlset>";
    let r = scan(doc);
    assert_eq!(
        r.errors,
        ["line 3 col 3: tag not closed before the next '<'"]
    );
    assert_eq!(urls_of(&r), ["http://a.com/1", "http://a.com/2"]);
}

#[test]
fn a_tag_too_long_and_broken_is_reported_the_same_in_any_chunks() {
    // Just over the limit, broken by a `<`: "too long" once, then "not closed", however split.
    let doc = format!(
        "<urlset><x a=\"{}<url><loc>http://a.com/1</loc></url></urlset>",
        "y".repeat(xml::MAX_TAG)
    );
    let doc = doc.as_bytes();
    let whole = summary(&scan(doc));
    assert!(
        whole.contains("tag too long") && whole.contains("not closed"),
        "{whole}"
    );
    let lt = doc.len() - "<url><loc>http://a.com/1</loc></url></urlset>".len();
    for cut in [10, 20, lt - 1, lt, lt + 1, xml::MAX_TAG, 100_000] {
        let two = summary(&scan_chunks(&[&doc[..cut], &doc[cut..]], false));
        assert_eq!(two, whole, "split at {cut}");
    }
    let chunks: Vec<&[u8]> = doc.chunks(4096).collect();
    assert_eq!(summary(&scan_chunks(&chunks, false)), whole);
}

#[test]
fn deep_nesting_does_not_hide_what_follows() {
    // An unclosed element repeated far past the depth limit, then an intact item: it counts,
    // and nothing is invented from the bomb.
    let doc = format!(
        "<urlset><url><loc>http://a.com/a</loc></url>{}<url><loc>http://a.com/b</loc></url></urlset>",
        "<loc>".repeat(100_000)
    );
    let r = scan(doc.as_bytes());
    assert_eq!(urls_of(&r), ["http://a.com/a", "http://a.com/b"]);
    assert!(r.damaged);
    // The same inside an item: its whole <loc> is salvaged, the next item is whole.
    let doc = format!(
        "<urlset><url><loc>http://a.com/a</loc>{}</url><url><loc>http://a.com/b</loc><lastmod>2020</lastmod></url></urlset>",
        "<x>".repeat(1000)
    );
    let r = scan(doc.as_bytes());
    assert_eq!(urls_of(&r), ["http://a.com/a", "http://a.com/b"]);
    assert_eq!(r.entries[1].lastmod.as_deref(), Some("2020"));
    assert_eq!(r.notes, ["recovered 1 URLs after XML damage"]);
    assert_split_invariant(&padded(
        format!(
            "<urlset>{}\n<url><loc>http://a.com/b</loc></url></urlset>",
            "<loc>".repeat(600)
        )
        .as_bytes(),
    ));
}

#[test]
fn items_after_an_unclosed_attribute_value_come_out_as_they_arrive() {
    let mut s = Scanner::new("https://ex.com/sitemap.xml");
    let mut idna = NoIdna;
    let head = padded(b"<urlset><url a=\"");
    s.feed(&head, &mut idna);
    for i in 0..1000 {
        let item = format!("<url><loc>http://a.com/{i}</loc></url>");
        s.feed(item.as_bytes(), &mut idna);
        let got = s.take_entries();
        assert_eq!(got.len(), 1, "item {i}");
        assert_eq!(got[0].url, format!("http://a.com/{i}"));
    }
    s.feed(b"</urlset>", &mut idna);
    s.close(&mut idna);
    assert!(s.take_entries().is_empty());
    assert!(s.damaged());
}

#[test]
fn document_cut_short() {
    let r = scan(b"<urlset><url><loc>http://a.com/1</loc></url><url><loc>http://a.com/ab");
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert_eq!(mal(&r), [("http://a.com/ab", "entry cut off")]);
    assert!(r
        .errors
        .contains(&"document ended inside an entry".to_owned()));
    let r = scan(b"<urlset><url><loc>http://a.com/1</loc></url><url><loc>http://a.com/ab</lo");
    assert_eq!(mal(&r), [("http://a.com/ab", "entry cut off")]);
    let r = scan(b"<urlset><url><loc>http://a.com/1</loc></url><url>");
    assert_eq!(mal(&r), [("", "entry cut off")]);
    // After the last item, before the root's end tag: damaged, nothing malformed.
    let r = scan(b"<urlset><url><loc>http://a.com/1</loc></url>");
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert!(r.malformed.is_empty());
    assert!(r.damaged && !r.errors.is_empty());
}

#[test]
fn limits() {
    // A value longer than any URL is dropped as damage; the next item is whole.
    let doc = format!(
        "<urlset><url><loc>http://a.com/{}</loc></url><url><loc>http://a.com/2</loc></url></urlset>",
        "x".repeat(70_000)
    );
    let r = scan(doc.as_bytes());
    assert_eq!(urls_of(&r), ["http://a.com/2"]);
    assert!(r.damaged);
    // Nesting beyond the limit is damage, not a stack overflow or unbounded memory.
    let deep = format!(
        "<urlset>{}{}<url><loc>http://a.com/1</loc></url></urlset>",
        "<a>".repeat(10_000),
        "</a>".repeat(10_000)
    );
    let r = scan(deep.as_bytes());
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert!(r.damaged);
    // A long comment, CDATA and PI trickled in byte by byte: streamed, and what follows counts.
    let big = "x".repeat(300_000);
    let doc = format!("<urlset><!--{big}--><?p {big}?><url><loc><![CDATA[http://a.com/{}]]></loc></url><url><loc>http://a.com/2</loc></url></urlset>", &big[..100]);
    let bytes: Vec<&[u8]> = doc.as_bytes().chunks(1).collect();
    let r = scan_chunks(&bytes, false);
    assert_eq!(r.entries.len(), 2);
    assert!(!r.damaged, "{:?}", r.errors);
    // A tag longer than the limit is dropped whole.
    let doc = format!(
        "<urlset><x a=\"{}\"/><url><loc>http://a.com/1</loc></url></urlset>",
        "y".repeat(400_000)
    );
    let r = scan(doc.as_bytes());
    assert_eq!(urls_of(&r), ["http://a.com/1"]);
    assert!(r.damaged);
}

/// xorshift: deterministic pseudo-random bytes without a crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn mutated_documents_never_panic_and_ignore_chunking() {
    let seeds: Vec<Vec<u8>> = CHUNK_DOCS
        .iter()
        .map(|d| d.as_bytes().to_vec())
        .chain([urlset("<url><loc>http://a.com/1</loc><xhtml:link rel='alternate' hreflang='de' href='/d'/><image:image><image:loc>/i</image:loc></image:image><news:news><news:title>t</news:title></news:news></url>")])
        .chain(DAMAGED_DOCS.iter().map(|d| d.as_bytes().to_vec()))
        .map(|d| padded(&d))
        .collect();
    let pieces: [&[u8]; 16] = [
        b"<",
        b">",
        b"&",
        b"</url>",
        b"<url>",
        b"<loc>",
        b"</loc>",
        b"\"",
        b"<!--",
        b"-->",
        b"<![CDATA[",
        b"]]>",
        b"\xff",
        b"\x00",
        b"\r",
        b"<!DOCTYPE",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..1500 {
        let mut doc = seeds[round % seeds.len()].clone();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(doc.len() + 1);
            match rng.below(4) {
                0 => doc.truncate(at),
                1 => {
                    let p = pieces[rng.below(pieces.len())];
                    doc.splice(at..at, p.iter().copied());
                }
                2 => {
                    let end = (at + rng.below(20)).min(doc.len());
                    doc.drain(at..end);
                }
                _ => {
                    let b = (rng.next() & 0xff) as u8;
                    doc.insert(at, b);
                }
            }
        }
        let whole = summary(&scan(&doc));
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < doc.len() {
            let n = 1 + rng.below(7);
            chunks.push(&doc[at..(at + n).min(doc.len())]);
            at += n;
        }
        assert_eq!(
            summary(&scan_chunks(&chunks, false)),
            whole,
            "{:?}",
            String::from_utf8_lossy(&doc)
        );
    }
}

#[test]
fn bytes_that_are_not_utf8_mark_the_document_damaged_in_any_chunks() {
    let good = padded("<urlset><url><loc>https://x.com/é</loc></url></urlset>".as_bytes());
    let bad = padded(
        b"<urlset><url><loc>https://x.com/a</loc><lastmod>\xed\xa0\x80</lastmod></url></urlset>",
    );
    let cut = padded(b"<urlset><url><loc>https://x.com/a</loc></url></urlset>\xc3");
    for size in [1, 2, 3, 7, 5000] {
        let ok = scan_chunks(&good.chunks(size).collect::<Vec<_>>(), false);
        assert_eq!(urls_of(&ok), vec!["https://x.com/%C3%A9"]);
        assert!(ok.errors.is_empty(), "{size}: {:?}", ok.errors);
        for doc in [&bad, &cut] {
            let r = scan_chunks(&doc.chunks(size).collect::<Vec<_>>(), false);
            assert_eq!(urls_of(&r), vec!["https://x.com/a"]);
            assert!(
                r.errors.iter().any(|e| e.contains("not UTF-8")),
                "{size}: {:?}",
                r.errors
            );
        }
    }
}

#[test]
fn a_double_dash_inside_a_comment_is_damage_in_any_chunks() {
    let fine =
        padded(b"<urlset><!-- a - b --><!----><url><loc>https://x.com/a</loc></url></urlset>");
    let nested =
        padded(b"<urlset><!-- open <!-- inner --><url><loc>https://x.com/a</loc></url></urlset>");
    for size in [1, 2, 3, 5, 5000] {
        let ok = scan_chunks(&fine.chunks(size).collect::<Vec<_>>(), false);
        assert!(ok.errors.is_empty(), "{size}: {:?}", ok.errors);
        let r = scan_chunks(&nested.chunks(size).collect::<Vec<_>>(), false);
        assert_eq!(urls_of(&r), vec!["https://x.com/a"]);
        let whole = scan_chunks(&[&nested], false);
        assert_eq!(r.errors, whole.errors, "{size}");
        assert!(r.errors.iter().any(|e| e.contains("'--' inside a comment")));
    }
}

#[test]
fn a_start_tag_name_cut_by_garbage_opens_nothing_and_bad_pis_are_damage() {
    let cut = padded(b"<urlset><url><loc&>https://x.com/a</loc></url><url><loc>https://x.com/b</loc></url></urlset>");
    let pis =
        padded(b"<urlset><?<?pi data?><url><loc>https://x.com/b</loc></url><?ok fine?></urlset>");
    let fine = padded(b"<urlset><?pi data?><?p?><url><loc>https://x.com/b</loc></url></urlset>");
    for size in [1, 2, 3, 5000] {
        let r = scan_chunks(&cut.chunks(size).collect::<Vec<_>>(), false);
        assert_eq!(urls_of(&r), vec!["https://x.com/b"], "{size}");
        assert!(r.errors.iter().any(|e| e.contains("malformed start tag")));
        let r = scan_chunks(&pis.chunks(size).collect::<Vec<_>>(), false);
        assert_eq!(urls_of(&r), vec!["https://x.com/b"], "{size}");
        assert_eq!(r.errors, scan_chunks(&[&pis], false).errors, "{size}");
        assert!(r.errors.iter().any(|e| e.contains("without a target name")));
        let r = scan_chunks(&fine.chunks(size).collect::<Vec<_>>(), false);
        assert!(r.errors.is_empty(), "{size}: {:?}", r.errors);
    }
}

#[test]
fn declared_and_http_encodings() {
    // "/日本?q=東京" in Shift_JIS, fed whole and a byte at a time (which splits characters).
    let sjis: &[u8] = b"<?xml version=\"1.0\" encoding=\"Shift_JIS\"?>\n<urlset><url><loc>http://a.com/\x93\xfa\x96\x7b?q=\x93\x8c\x8b\x9e</loc></url></urlset>";
    let want = ["http://a.com/%E6%97%A5%E6%9C%AC?q=%E6%9D%B1%E4%BA%AC"];
    let ones: Vec<&[u8]> = sjis.chunks(1).collect();
    for r in [scan(sjis), scan_chunks(&ones, false)] {
        assert_eq!(urls_of(&r), want);
        assert!(
            r.notes.is_empty() && !r.damaged,
            "{:?} {:?}",
            r.notes,
            r.errors
        );
    }
    // Leading whitespace (more than a kilobyte) does not hide the declaration.
    let spaced = [vec![b' '; 3000].as_slice(), sjis].concat();
    let ones: Vec<&[u8]> = spaced.chunks(1).collect();
    assert_eq!(urls_of(&scan_chunks(&ones, false)), want);
    // KOI8-R "/при" from the HTTP charset when the declaration is silent; the declaration wins.
    let koi = b"<urlset><url><loc>http://a.com/\xf0\xd2\xc9</loc></url></urlset>";
    let r = scan_with_charset(&[koi], false, Some("koi8-r"));
    assert_eq!(urls_of(&r), ["http://a.com/%D0%9F%D1%80%D0%B8"]);
    let declared = [b"<?xml version='1.0' encoding='koi8-r'?>".as_slice(), koi].concat();
    let r = scan_with_charset(&[&declared], false, Some("shift_jis"));
    assert_eq!(urls_of(&r), ["http://a.com/%D0%9F%D1%80%D0%B8"]);
    // A byte order mark wins over both.
    let bom = [
        b"\xef\xbb\xbf<?xml version='1.0' encoding='koi8-r'?>".as_slice(),
        "<urlset><url><loc>http://a.com/\u{e9}</loc></url></urlset>".as_bytes(),
    ]
    .concat();
    let r = scan_with_charset(&[&bom[..1], &bom[1..]], false, Some("koi8-r"));
    assert_eq!(urls_of(&r), ["http://a.com/%C3%A9"]);
    // A text sitemap in the HTTP charset.
    let text = b"http://a.com/\xf0\xd2\xc9\nhttp://a.com/b\n";
    let r = scan_with_charset(&[text], false, Some("KOI8-R"));
    assert_eq!(
        urls_of(&r),
        ["http://a.com/%D0%9F%D1%80%D0%B8", "http://a.com/b"]
    );
    // Bytes that are not Shift_JIS: U+FFFD, and the document is damaged.
    let bad = [&sjis[..sjis.len() - 21], b"\x93</loc></url></urlset>"].concat();
    let r = scan(&bad);
    assert!(r.damaged);
    assert_eq!(r.errors, ["bytes that are not Shift_JIS (read as U+FFFD)"]);
}

/// Fields written the plain way are read in one step when they lie whole in a chunk
/// (`Xml::plain_field`); cut anywhere, or fed a byte at a time, they go the general way. Both
/// must give the same result, errors and their positions included, for the plain forms and for
/// every near miss the one step must leave to the general way.
#[test]
fn plain_fields_read_as_the_general_way_does() {
    let items = [
        "<url><loc>http://a.com/1</loc><lastmod>2020-01-02</lastmod><priority>0.5</priority><changefreq>daily</changefreq></url>",
        "<url>\n  <loc> http://a.com/2 </loc>\n  <lastmod>2020-01-02T03:04Z</lastmod>\n</url>",
        "<url><loc>http://a.com/3</loc><loc>http://a.com/extra</loc></url>",
        "<url><loc>   </loc><loc>http://a.com/4</loc></url>",
        "<url><loc></loc><lastmod></lastmod><priority></priority></url>",
        "<url><loc>http://a.com/5?a=1&amp;b=2</loc></url>",
        "<url><loc>http://a.com/6\r\n</loc><priority>2.0</priority><changefreq>often</changefreq></url>",
        "<url><loc>http://a.com/7]]></loc></url>",
        "<url><loc >http://a.com/8</loc ><lastmod\t>2021</lastmod></url>",
        "<url><loc a='b'>http://a.com/9</loc></url>",
        "<url><x:loc>http://a.com/10</x:loc><loc>http://a.com/10b</loc></url>",
        "<url><loc>http://a.com/11</lastmod></url>",
        "<url><loc>http://a.com/12<b/></loc></url>",
        "<url><loc>http://a.com/\u{e9}13</loc></url>",
        "<url><LOC>http://a.com/14</LOC><loc>http://a.com/14b</loc></url>",
        "<url><image:image><loc>http://a.com/i.png</loc></image:image><loc>http://a.com/15</loc></url>",
        "<url><news:news><loc>http://a.com/n</loc><news:title>T</news:title></news:news><loc>http://a.com/16</loc></url>",
        "<url><loc>http://a.com/17</loc><url><loc>http://a.com/18</loc></url>",
        "<url><priority>0.25</priority><loc>http://a.com/19</loc><lastmod>x</lastmod><lastmod>2022</lastmod></url>",
        // Damage after a whole `<loc>`: the item is abandoned, its clean URL salvaged.
        "<url><loc>http://a.com/20</loc><lastmod>2020</foo></url>",
    ];
    let doc = urlset(&items.concat());
    assert_split_invariant(&doc);
    let r = scan(&doc);
    assert_eq!(r.entries[0].lastmod.as_deref(), Some("2020-01-02"));
    assert_eq!(r.entries[0].priority, Some(0.5));
    assert_eq!(r.entries[0].changefreq.as_deref(), Some("daily"));
    assert_eq!(urls_of(&r)[1], "http://a.com/2");
    let index = br#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://a.com/s1.xml</loc><lastmod>2020-01-02</lastmod><priority>0.5</priority></sitemap><sitemap>
<loc>http://a.com/s2.xml</loc></sitemap></sitemapindex>"#;
    assert_split_invariant(index);
    assert_eq!(
        scan(index).sitemaps,
        ["http://a.com/s1.xml", "http://a.com/s2.xml"]
    );
    // Invalid UTF-8 in a value: left to the general way, which reports it.
    let mut bad = urlset("<url><loc>http://a.com/x").to_vec();
    let end = bad.len() - "</urlset>".len();
    bad.truncate(end);
    bad.extend_from_slice(b"\xff</loc></url></urlset>");
    assert_split_invariant(&bad);
}

/// The last prefix looked up is remembered until a declaration enters or leaves scope: a
/// prefix declared in between, and one gone out of scope since, are each read anew.
#[test]
fn a_remembered_prefix_follows_declarations_in_and_out_of_scope() {
    let doc =
        urlset("<url><p:x/><e xmlns:p='u:p'><p:x/><p:x/></e><p:x/><loc>http://a.com/1</loc></url>");
    let undeclared = |r: &Result| {
        r.errors
            .iter()
            .filter(|e| e.ends_with("namespace prefix not declared"))
            .count()
    };
    let r = scan(&doc);
    assert_eq!(undeclared(&r), 2, "{:?}", r.errors);
    assert_split_invariant(&doc);
}

#[test]
fn a_chunk_is_text_only_when_it_is_utf8_on_its_own() {
    let mut check = Utf8Check::default();
    assert_eq!(
        check.feed(b"<loc>caf\xc3\xa9</loc>"),
        Some("<loc>café</loc>")
    );
    // A character cut by the chunk's end: neither half is text, the check carries it over.
    assert_eq!(check.feed(b"<loc>caf\xc3"), None);
    assert_eq!(check.feed(b"\xa9</loc>"), None);
    assert!(check.ended_well());
    assert_eq!(check.feed(b"<loc>x</loc>"), Some("<loc>x</loc>"));
    // A byte that is never UTF-8 marks the document; later chunks are still text when whole.
    assert_eq!(check.feed(b"<loc>\xff</loc>"), None);
    assert!(!check.ended_well());
    assert_eq!(check.feed(b"<loc>y</loc>"), Some("<loc>y</loc>"));
}

#[test]
fn fields_read_the_same_from_text_chunks_and_cut_ones() {
    let doc = "<urlset><url><loc>https://ex.com/caf\u{e9}</loc><lastmod>2024-01-02</lastmod>\
               </url><url><loc>https://ex.com/\u{65e5}\u{672c}</loc></url></urlset>"
        .as_bytes();
    let whole = scan_chunks(&[doc], false);
    assert_eq!(whole.entries.len(), 2);
    assert_eq!(whole.entries[0].url, "https://ex.com/caf%C3%A9");
    // Every cut, each half-character included, gives the same entries.
    for at in 1..doc.len() {
        let cut = scan_chunks(&[&doc[..at], &doc[at..]], false);
        assert_eq!(cut.entries, whole.entries, "cut at {at}");
        assert_eq!(cut.damaged, whole.damaged, "cut at {at}");
    }
}
