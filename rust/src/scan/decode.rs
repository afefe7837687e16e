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

/// A single-byte encoding an XML declaration may name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SingleByte {
    Latin1,
    Windows1252,
}

const CP1252: [u16; 32] = [
    0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039,
    0x0152, 0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
];

impl SingleByte {
    /// The encoding a declared name selects; None: read as UTF-8.
    pub fn from_label(label: &str) -> Option<Self> {
        match label.to_ascii_lowercase().as_str() {
            "iso-8859-1" | "iso8859-1" | "iso_8859-1" | "latin1" | "latin-1" | "l1" => {
                Some(SingleByte::Latin1)
            }
            "windows-1252" | "cp1252" => Some(SingleByte::Windows1252),
            _ => None,
        }
    }

    pub fn decode(self, data: &[u8], out: &mut Vec<u8>) {
        out.reserve(data.len());
        for &b in data {
            if b < 0x80 {
                out.push(b);
                continue;
            }
            let c = match self {
                SingleByte::Windows1252 if b < 0xA0 => {
                    char::from_u32(u32::from(CP1252[usize::from(b - 0x80)])).unwrap_or('\u{fffd}')
                }
                _ => char::from(b),
            };
            push_char(out, c);
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
    // Blocks without an early exit: the compiler vectorizes this, unlike `any`.
    let clean = data
        .chunks(64)
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

    #[test]
    fn single_byte() {
        let mut out = Vec::new();
        SingleByte::Windows1252.decode(b"a\x80\x81\xe9", &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "a\u{20ac}\u{fffd}\u{e9}");
        let mut out = Vec::new();
        SingleByte::Latin1.decode(b"\x80\xff", &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "\u{80}\u{ff}");
    }
}
