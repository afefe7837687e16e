//! The least work a sitemap walk can do on this machine, as the walk benchmark measures it:
//! gunzip each urlset and put every `<loc>` value into a hash set. No XML beyond finding the
//! tag, no other field, no URL rule, no output, no network, no start-up to speak of.
//!
//! `sitescout-floor PLACEHOLDER ORIGIN FILE...` prints one JSON line: the distinct `<loc>`s and
//! the seconds of CPU spent inflating and scanning. Reading the files and putting the server's
//! origin in place of the generator's placeholder (what the benchmark's server does as it
//! sends) happen outside the clock, so the floor holds the same URLs the walkers see.
#![forbid(unsafe_code)]

use std::collections::HashSet;
use std::io::Read;
use std::time::Instant;

/// The `<loc>` values of a urlset, whitespace around them trimmed.
fn locs(doc: &[u8]) -> impl Iterator<Item = &[u8]> {
    let open = memchr::memmem::Finder::new(b"<loc>");
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + open.find(&doc[at..])? + b"<loc>".len();
        let end = start + memchr::memchr(b'<', &doc[start..])?;
        at = end;
        Some(doc[start..end].trim_ascii())
    })
}

fn replace(data: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut at = 0;
    for hit in memchr::memmem::find_iter(data, from) {
        out.extend_from_slice(&data[at..hit]);
        out.extend_from_slice(to);
        at = hit + from.len();
    }
    out.extend_from_slice(&data[at..]);
    out
}

/// This thread's CPU time in seconds (Linux's schedstat), or None where it cannot be read.
fn thread_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// `work`'s result, its CPU seconds (its wall seconds where the CPU clock cannot be read) and
/// its wall seconds.
fn timed<T>(work: impl FnOnce() -> T) -> (T, f64, f64) {
    let (cpu, wall) = (thread_cpu(), Instant::now());
    let out = work();
    let wall = wall.elapsed().as_secs_f64();
    let cpu = match (cpu, thread_cpu()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    (out, cpu, wall)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [placeholder, origin, files @ ..] = args.as_slice() else {
        return Err("usage: sitescout-floor PLACEHOLDER ORIGIN FILE...".into());
    };
    let mut seen: HashSet<Box<[u8]>> = HashSet::new();
    let (mut inflate_cpu, mut cpu, mut wall, mut bytes) = (0.0, 0.0, 0.0, 0);
    let mut doc = Vec::new();
    for file in files {
        let raw = std::fs::read(file)?;
        doc.clear();
        let (done, spent, took) =
            timed(|| flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut doc));
        done?;
        (inflate_cpu, cpu, wall) = (inflate_cpu + spent, cpu + spent, wall + took);
        let doc = replace(&doc, placeholder.as_bytes(), origin.as_bytes());
        bytes += doc.len();
        let ((), spent, took) = timed(|| {
            for loc in locs(&doc) {
                seen.insert(loc.into());
            }
        });
        (cpu, wall) = (cpu + spent, wall + took);
    }
    println!(
        "{{\"urls\": {}, \"parse_s\": {wall:.6}, \"parse_cpu\": {cpu:.6}, \
         \"inflate_cpu\": {inflate_cpu:.6}, \"bytes\": {bytes}}}",
        seen.len(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loc_trimmed_and_nothing_else() {
        let doc = b"<urlset><url><loc> http://a/1\n</loc><lastmod>x</lastmod></url>\
            <url><loc>http://a/2?x=1&amp;y=2</loc><xhtml:link href=\"http://a/3\"/></url>\
            <url><loc>http://a/4";
        let got: Vec<&[u8]> = locs(doc).collect();
        assert_eq!(got, [&b"http://a/1"[..], b"http://a/2?x=1&amp;y=2"]);
    }

    #[test]
    fn the_placeholder_becomes_the_origin_everywhere() {
        assert_eq!(
            replace(b"P/a P/b", b"P", b"http://h:1"),
            b"http://h:1/a http://h:1/b"
        );
        assert_eq!(replace(b"none", b"P", b"x"), b"none");
    }
}
