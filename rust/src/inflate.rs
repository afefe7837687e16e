//! gzip, zlib and raw deflate decoded as the bytes arrive, with bounded output per call.
//!
//! `push` hands over what the network gave; `pull_into(out)` decodes at most `out.len()` bytes
//! of it, so a gzip bomb is never inflated past what the caller asked for. A body may hold
//! several gzip members, with zero bytes padding after them; a "deflate" body may be raw deflate
//! instead of the zlib stream the RFC says (some servers send it so), which is noticed on its
//! first bytes.
#![forbid(unsafe_code)]

use flate2::{Decompress, FlushDecompress, Status};

/// Input read while a "deflate" body may still turn out to be raw deflate (no output yet): it
/// is kept, and read again from its start when it does. Any real zlib stream has given output
/// well before this.
const FALLBACK_KEEP: usize = 64 * 1024;

/// The stream kinds, by zlib's window bits (as Python's `zlib.decompressobj` takes them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// 31: gzip members.
    Gzip,
    /// 15: zlib streams, or raw deflate when the first one is not one.
    Zlib,
    /// -15: raw deflate.
    Raw,
}

impl Kind {
    pub fn from_wbits(wbits: i32) -> Option<Kind> {
        match wbits {
            31 => Some(Kind::Gzip),
            15 => Some(Kind::Zlib),
            -15 => Some(Kind::Raw),
            _ => None,
        }
    }

    fn decompressor(self) -> Decompress {
        match self {
            Kind::Gzip => Decompress::new_gzip(15),
            Kind::Zlib => Decompress::new(true),
            Kind::Raw => Decompress::new(false),
        }
    }
}

/// Why a compressed body cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub struct Corrupt(pub String);

pub struct Inflater {
    kind: Kind,
    d: Decompress,
    input: Vec<u8>,
    pos: usize,
    /// The first stream of a "deflate" body may still be raw deflate: `input` is kept whole.
    fallback: bool,
    /// A member has begun and its end marker is not seen yet.
    inside: bool,
    members: u64,
    /// The last pull filled its room: the decompressor may hold output with no input left.
    full: bool,
}

impl Inflater {
    pub fn new(kind: Kind) -> Inflater {
        Inflater {
            kind,
            d: kind.decompressor(),
            input: Vec::new(),
            pos: 0,
            fallback: kind == Kind::Zlib,
            inside: false,
            members: 0,
            full: false,
        }
    }

    /// Hand over the next bytes of the body.
    pub fn push(&mut self, data: &[u8]) {
        if !self.fallback {
            self.input.drain(..self.pos);
            self.pos = 0;
        }
        self.input.extend_from_slice(data);
    }

    /// Decode what was pushed into `out`, at most its length; how many bytes were written (0
    /// when it needs more input).
    pub fn pull_into(&mut self, out: &mut [u8]) -> Result<usize, Corrupt> {
        let mut written = 0;
        loop {
            if written >= out.len() {
                self.full = written > 0;
                break;
            }
            if self.members > 0 && !self.inside {
                let rest = &self.input[self.pos..];
                self.pos += rest.iter().take_while(|&&b| b == 0).count();
            }
            let has_input = self.pos < self.input.len();
            if !has_input && !self.full {
                break;
            }
            self.full = false;
            let (in_before, out_before) = (self.d.total_in(), self.d.total_out());
            let status = self.d.decompress(
                &self.input[self.pos..],
                &mut out[written..],
                FlushDecompress::None,
            );
            let status = match status {
                Ok(status) => status,
                Err(_) if self.fallback => {
                    // Not a zlib stream: read it again from its start as raw deflate.
                    self.fallback = false;
                    self.d = Kind::Raw.decompressor();
                    self.pos = 0;
                    continue;
                }
                Err(err) => {
                    let why = err.message().unwrap_or("invalid compressed data");
                    return Err(Corrupt(why.to_owned()));
                }
            };
            let used = usize::try_from(self.d.total_in() - in_before).unwrap_or(usize::MAX);
            let made = usize::try_from(self.d.total_out() - out_before).unwrap_or(usize::MAX);
            self.pos = (self.pos + used).min(self.input.len());
            written = (written + made).min(out.len());
            if has_input {
                self.inside = true;
            }
            if made > 0 || self.d.total_in() > FALLBACK_KEEP as u64 {
                self.fallback = false;
            }
            if status == Status::StreamEnd {
                self.d = self.kind.decompressor();
                self.inside = false;
                self.members += 1;
                self.fallback = false;
            } else if used == 0 && made == 0 {
                break;
            }
        }
        if !self.fallback && self.pos == self.input.len() {
            self.input.clear();
            self.pos = 0;
        }
        Ok(written)
    }

    /// Input is left, or output may be: the last pull stopped at its room.
    pub fn cut(&self) -> bool {
        self.pos < self.input.len() || self.full
    }

    /// No member is begun and unfinished: a body that stops here was whole.
    pub fn ended(&self) -> bool {
        !self.inside
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use flate2::Compression;
    use std::io::Write;

    fn text() -> Vec<u8> {
        let mut t = b"<urlset>".to_vec();
        for i in 0..500 {
            t.extend_from_slice(
                format!("<url><loc>https://example.com/p{i}</loc></url>").as_bytes(),
            );
        }
        t.extend_from_slice(b"</urlset>");
        t
    }

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn raw(data: &[u8]) -> Vec<u8> {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// At most `max` decoded bytes.
    fn pull(inf: &mut Inflater, max: usize) -> Result<Vec<u8>, Corrupt> {
        let mut out = vec![0; max];
        let n = inf.pull_into(&mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Push `body` in pieces of `step`, pulling at most `max` at a time, until all is out.
    fn decode(
        kind: Kind,
        body: &[u8],
        step: usize,
        max: usize,
    ) -> Result<(Vec<u8>, bool), Corrupt> {
        let mut inf = Inflater::new(kind);
        let mut out = Vec::new();
        for piece in body.chunks(step) {
            inf.push(piece);
            for _ in 0..100_000 {
                let got = pull(&mut inf, max)?;
                if got.is_empty() {
                    break;
                }
                out.extend_from_slice(&got);
            }
        }
        for _ in 0..100_000 {
            let got = pull(&mut inf, max)?;
            if got.is_empty() {
                break;
            }
            out.extend_from_slice(&got);
        }
        Ok((out, inf.ended()))
    }

    #[test]
    fn each_kind_in_any_pieces() {
        let t = text();
        let cases = [
            (Kind::Gzip, gzip(&t)),
            (Kind::Zlib, zlib(&t)),
            (Kind::Zlib, raw(&t)),
            (Kind::Raw, raw(&t)),
        ];
        for (kind, body) in cases {
            for step in [1, 2, 3, 7, 100, 4096, body.len()] {
                for max in [1, 13, 4096, 1 << 20] {
                    let got = decode(kind, &body, step, max).unwrap();
                    assert_eq!(got, (t.clone(), true), "{kind:?} step {step} max {max}");
                }
            }
        }
    }

    #[test]
    fn members_and_zero_padding() {
        let mut body = gzip(b"one ");
        body.extend_from_slice(&[0; 10]);
        body.extend_from_slice(&gzip(b"two"));
        body.extend_from_slice(&[0; 3]);
        for step in [1, 5, body.len()] {
            assert_eq!(
                decode(Kind::Gzip, &body, step, 64).unwrap(),
                (b"one two".to_vec(), true)
            );
        }
    }

    #[test]
    fn room_is_never_passed_and_the_cut_is_seen() {
        let mut inf = Inflater::new(Kind::Gzip);
        inf.push(&gzip(&text()));
        let got = pull(&mut inf, 100).unwrap();
        assert_eq!(got.len(), 100);
        assert!(inf.cut());
        assert!(!inf.ended());
    }

    #[test]
    fn half_a_member_has_not_ended() {
        let body = gzip(&text());
        let (out, ended) = decode(Kind::Gzip, &body[..body.len() / 2], 64, 4096).unwrap();
        assert!(text().starts_with(&out));
        assert!(!ended);
    }

    #[test]
    fn garbage_is_corrupt() {
        assert!(decode(Kind::Gzip, b"not gzip at all", 4, 64).is_err());
        let mut body = gzip(b"one");
        body.extend_from_slice(b"trailing");
        assert!(decode(Kind::Gzip, &body, 3, 64).is_err());
    }

    #[test]
    fn a_raw_fallback_is_seen_in_a_first_read_larger_than_what_is_kept() {
        let mut t = Vec::new();
        while t.len() < 3 * FALLBACK_KEEP {
            t.extend_from_slice(&text());
        }
        let mut e = DeflateEncoder::new(Vec::new(), Compression::none());
        e.write_all(&t).unwrap();
        let body = e.finish().unwrap();
        assert!(body.len() > FALLBACK_KEEP);
        assert_eq!(
            decode(Kind::Zlib, &body, body.len(), 1 << 20).unwrap(),
            (t, true)
        );
    }

    #[test]
    fn a_raw_fallback_is_read_from_its_first_byte_after_tiny_pieces() {
        let t = text();
        let body = raw(&t);
        assert_eq!(decode(Kind::Zlib, &body, 1, 1).unwrap(), (t, true));
    }
}
