//! Byte-stream filters applied before scanning: UTF-16 and single-byte encodings become UTF-8 as
//! they arrive, and the control characters XML forbids are dropped. Each keeps at most a few
//! bytes between calls, so results do not depend on how the input is split.
#![forbid(unsafe_code)]

/// `codecs.getincrementaldecoder("utf-16")("replace")` followed by `.encode()`: the byte order
/// comes from the BOM (which is consumed), unpaired surrogates and a dangling byte become U+FFFD.
pub struct Utf16 {
    big_endian: Option<bool>,
    pending: Vec<u8>,
    high: Option<u16>,
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

impl Utf16 {
    pub fn new() -> Self {
        Utf16 {
            big_endian: None,
            pending: Vec::new(),
            high: None,
        }
    }

    pub fn decode(&mut self, data: &[u8], out: &mut Vec<u8>) {
        let mut bytes: &[u8] = data;
        let joined;
        if !self.pending.is_empty() {
            let mut v = std::mem::take(&mut self.pending);
            v.extend_from_slice(data);
            joined = v;
            bytes = &joined;
        }
        if self.big_endian.is_none() {
            if bytes.len() < 2 {
                self.pending.extend_from_slice(bytes);
                return;
            }
            // Python's "utf-16" codec reads a BOM if there is one and assumes little-endian
            // otherwise; we only get here after seeing one.
            let be = bytes[..2] == [0xfe, 0xff];
            self.big_endian = Some(be);
            if bytes[..2] == [0xff, 0xfe] || be {
                bytes = &bytes[2..];
            }
        }
        let be = self.big_endian == Some(true);
        let mut units = bytes.chunks_exact(2);
        for pair in &mut units {
            let u = if be {
                u16::from_be_bytes([pair[0], pair[1]])
            } else {
                u16::from_le_bytes([pair[0], pair[1]])
            };
            self.unit(u, out);
        }
        self.pending.extend_from_slice(units.remainder());
    }

    fn unit(&mut self, u: u16, out: &mut Vec<u8>) {
        if let Some(high) = self.high.take() {
            if (0xDC00..0xE000).contains(&u) {
                let c = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(u) - 0xDC00);
                push_char(out, char::from_u32(c).unwrap_or('\u{fffd}'));
                return;
            }
            push_char(out, '\u{fffd}');
        }
        if (0xD800..0xDC00).contains(&u) {
            self.high = Some(u);
        } else if (0xDC00..0xE000).contains(&u) {
            push_char(out, '\u{fffd}');
        } else {
            push_char(out, char::from_u32(u32::from(u)).unwrap_or('\u{fffd}'));
        }
    }

    pub fn finish(&mut self, out: &mut Vec<u8>) {
        if self.high.take().is_some() || !self.pending.is_empty() {
            push_char(out, '\u{fffd}');
        }
        self.pending.clear();
    }
}

/// How a document's bytes become UTF-8, from the encoding label it declares (the XML
/// declaration, else the HTTP charset; a byte order mark wins over both and never gets here).
pub enum Choice {
    /// Read as it is: UTF-8 and ASCII (a subset of it) need no decoding step.
    Utf8,
    /// A UTF-16 label without a byte order mark: read as UTF-8 (the caller says why).
    Utf16WithoutBom,
    /// A label the WHATWG Encoding Standard does not know (or its "replacement" encoding,
    /// which would turn the whole document into one U+FFFD): read as UTF-8.
    Unknown,
    Decode(Transcoder),
}

/// Every label the WHATWG Encoding Standard knows, through `encoding_rs`, as browsers read
/// them: the ISO-8859-1 labels as windows-1252 (bytes 0x80-0x9F are the dashes, quotes and euro
/// sign a Windows tool wrote, never the C1 controls), and the ASCII labels as UTF-8 (no decoding
/// step: a byte over 0x7F in an "ASCII" document is far likelier UTF-8 than windows-1252).
pub fn choose(label: &str) -> Choice {
    let lower = label
        .trim_matches(|c: char| c.is_ascii_whitespace())
        .to_ascii_lowercase();
    if matches!(lower.as_str(), "us-ascii" | "ascii" | "ansi_x3.4-1968") {
        return Choice::Utf8;
    }
    match encoding_rs::Encoding::for_label(lower.as_bytes()) {
        None => Choice::Unknown,
        Some(e) if e == encoding_rs::REPLACEMENT => Choice::Unknown,
        Some(e) if e == encoding_rs::UTF_8 => Choice::Utf8,
        Some(e) if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE => {
            Choice::Utf16WithoutBom
        }
        // No BOM sniffing: a byte order mark was looked for before the label was read.
        Some(e) => Choice::Decode(Transcoder(e.new_decoder_without_bom_handling())),
    }
}

/// A streaming decoder to UTF-8: a character cut by the end of a chunk is kept until the next
/// one, so the output does not depend on how the input is split; work is linear in the input.
pub struct Transcoder(encoding_rs::Decoder);

impl Transcoder {
    /// The encoding's name, for messages.
    pub fn name(&self) -> &'static str {
        self.0.encoding().name()
    }

    /// Append `data` decoded to `out`; `last`: the input ends here (a cut character becomes
    /// U+FFFD). True if some bytes were not of the encoding (each read as U+FFFD).
    pub fn decode(&mut self, data: &[u8], last: bool, out: &mut Vec<u8>) -> bool {
        let decoder = &mut self.0;
        let mut src = data;
        let mut replaced = false;
        loop {
            let room = decoder
                .max_utf8_buffer_length(src.len())
                .unwrap_or(64 * 1024)
                .max(16);
            let at = out.len();
            out.resize(at + room, 0);
            let (result, read, written, bad) = decoder.decode_to_utf8(src, &mut out[at..], last);
            out.truncate(at + written);
            replaced |= bad;
            src = &src[read..];
            if result == encoding_rs::CoderResult::InputEmpty {
                return replaced;
            }
        }
    }
}

/// Whether `b` is a control character XML 1.0 forbids (tab, LF and CR are allowed).
#[inline]
pub fn is_control(b: u8) -> bool {
    b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r')
}

/// `data` without forbidden control characters; borrowed when there are none (the usual case).
pub fn drop_controls(data: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    // Blocks without an early exit: the compiler vectorizes this, unlike `any`. Each block ends
    // in a reduction and a branch, rare in blocks of 512 bytes.
    let clean = data
        .chunks(512)
        .all(|block| !block.iter().fold(false, |seen, &b| seen | is_control(b)));
    if clean {
        return std::borrow::Cow::Borrowed(data);
    }
    std::borrow::Cow::Owned(data.iter().copied().filter(|&b| !is_control(b)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(chunks: &[&[u8]]) -> String {
        let mut d = Utf16::new();
        let mut out = Vec::new();
        for c in chunks {
            d.decode(c, &mut out);
        }
        d.finish(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn utf16_like_python() {
        assert_eq!(
            utf16(&[b"\xff\xfe\x00\xd8a\x00", b"\x00\xd8"]),
            "\u{fffd}a\u{fffd}"
        );
        assert_eq!(utf16(&[b"\xff\xfea\x00b"]), "a\u{fffd}");
        assert_eq!(
            utf16(&[b"\xfe", b"\xff\x00", b"a\xd8\x3d\xde", b"\x00"]),
            "a\u{1f600}"
        );
        let whole = utf16(&[b"\xff\xfe<\x00u\x00>\x00"]);
        for cut in 0..8 {
            let data = b"\xff\xfe<\x00u\x00>\x00";
            assert_eq!(utf16(&[&data[..cut], &data[cut..]]), whole);
        }
    }

    fn decoded(label: &str, chunks: &[&[u8]]) -> (String, bool) {
        let Choice::Decode(mut t) = choose(label) else {
            panic!("{label} is not decoded");
        };
        let mut out = Vec::new();
        let mut bad = false;
        for c in chunks {
            bad |= t.decode(c, false, &mut out);
        }
        bad |= t.decode(b"", true, &mut out);
        (String::from_utf8(out).unwrap(), bad)
    }

    #[test]
    fn labels() {
        assert!(matches!(choose(" UTF-8 "), Choice::Utf8));
        assert!(matches!(choose("US-ASCII"), Choice::Utf8));
        assert!(matches!(choose("utf-16"), Choice::Utf16WithoutBom));
        assert!(matches!(choose("no-such-encoding"), Choice::Unknown));
        assert!(matches!(choose("ISO-2022-KR"), Choice::Unknown));
        for (label, name) in [
            ("Shift_JIS", "Shift_JIS"),
            ("sjis", "Shift_JIS"),
            ("EUC-JP", "EUC-JP"),
            ("gb2312", "GBK"),
            ("big5", "Big5"),
            ("cp1251", "windows-1251"),
            ("koi8-r", "KOI8-R"),
            ("latin2", "ISO-8859-2"),
            ("windows-1252", "windows-1252"),
            ("latin1", "windows-1252"),
            ("ISO-8859-1", "windows-1252"),
        ] {
            let Choice::Decode(t) = choose(label) else {
                panic!("{label}");
            };
            assert_eq!(t.name(), name);
        }
    }

    #[test]
    fn multibyte_split_anywhere() {
        // "日本" in Shift_JIS, then a lone lead byte at the end.
        let sjis: &[u8] = b"/\x93\xfa\x96\x7b/";
        let whole = decoded("shift_jis", &[sjis]);
        assert_eq!(whole, ("/\u{65e5}\u{672c}/".to_owned(), false));
        for cut in 0..=sjis.len() {
            assert_eq!(decoded("shift_jis", &[&sjis[..cut], &sjis[cut..]]), whole);
        }
        let ones: Vec<&[u8]> = sjis.chunks(1).collect();
        assert_eq!(decoded("shift_jis", &ones), whole);
        assert_eq!(
            decoded("shift_jis", &[b"a\x93"]),
            ("a\u{fffd}".to_owned(), true)
        );
        assert_eq!(
            decoded("koi8-r", &[b"\xf0\xd2\xc9"]),
            ("\u{41f}\u{440}\u{438}".to_owned(), false)
        );
        // windows-1252 as WHATWG reads it, and the ISO-8859-1 labels with it.
        assert_eq!(decoded("cp1252", &[b"a\x80\xe9"]).0, "a\u{20ac}\u{e9}");
        assert_eq!(decoded("iso-8859-1", &[b"\x80\xff"]).0, "\u{20ac}\u{ff}");
    }
}
