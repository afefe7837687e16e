//! Filters that save fetches: page and child-sitemap URLs kept by include/exclude patterns
//! (the `regex` crate: linear time in the URL, so no pattern can stall a walk) and by their
//! `lastmod` against a `since` instant.
#![forbid(unsafe_code)]

use regex::RegexSet;

use crate::batch::Rows;

/// Include/exclude patterns and a `since` instant, built once per walk.
#[derive(Debug, Default)]
pub struct UrlFilter {
    include: Option<RegexSet>,
    exclude: Option<RegexSet>,
    /// Microseconds since the epoch, UTC; lastmods older than this are dropped.
    since: Option<i64>,
    /// Entries without a (readable) lastmod are dropped too when `since` is set.
    strict: bool,
}

/// A pattern that does not compile: its index among the includes (or excludes) and the error.
#[derive(Debug)]
pub struct BadPattern {
    pub exclude: bool,
    pub pattern: String,
    pub error: String,
}

fn set_of(patterns: &[String], exclude: bool) -> Result<Option<RegexSet>, BadPattern> {
    if patterns.is_empty() {
        return Ok(None);
    }
    for p in patterns {
        // Each alone first, so the error names the pattern that failed.
        if let Err(e) = regex::Regex::new(p) {
            return Err(BadPattern {
                exclude,
                pattern: p.clone(),
                error: e.to_string(),
            });
        }
    }
    RegexSet::new(patterns).map(Some).map_err(|e| BadPattern {
        exclude,
        pattern: patterns.join(" | "),
        error: e.to_string(),
    })
}

impl UrlFilter {
    pub fn new(
        include: &[String],
        exclude: &[String],
        since: Option<i64>,
        strict: bool,
    ) -> Result<Self, BadPattern> {
        Ok(UrlFilter {
            include: set_of(include, false)?,
            exclude: set_of(exclude, true)?,
            since,
            strict,
        })
    }

    /// Whether the filter can drop anything at all.
    pub fn active(&self) -> bool {
        self.include.is_some() || self.exclude.is_some() || self.since.is_some()
    }

    /// Kept when it matches any include (or there is none) and no exclude.
    pub fn keeps_url(&self, url: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(url))
            && !self.exclude.as_ref().is_some_and(|set| set.is_match(url))
    }

    /// Kept when not older than `since`; without a readable lastmod, kept unless strict.
    pub fn keeps_lastmod(&self, lastmod: Option<&str>) -> bool {
        let Some(since) = self.since else { return true };
        match lastmod.and_then(parse_instant) {
            Some(when) => when >= since,
            None => !self.strict,
        }
    }

    /// Keep the rows this filter keeps (URL, and lastmod when `dated`); returns how many went.
    pub fn retain(&self, rows: &mut Rows, dated: bool) -> usize {
        let before = rows.0.len();
        rows.0.retain(|row| {
            self.keeps_url(&row.entry.url)
                && (!dated || self.keeps_lastmod(row.entry.lastmod.as_deref()))
        });
        before - rows.0.len()
    }
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0i64, |n, d| {
        n.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    })
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An ISO 8601 / W3C datetime (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, then optionally `THH:MM`,
/// `:SS`, `.fraction`, and `Z` or `±HH:MM`; no zone means UTC) as microseconds since the epoch.
pub fn parse_instant(value: &str) -> Option<i64> {
    let s = value.trim().as_bytes();
    let (date, rest) = match s.iter().position(|&b| b == b'T' || b == b't' || b == b' ') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = date.split(|&b| b == b'-');
    let year = parts.next().filter(|p| p.len() == 4).and_then(digits)?;
    let month = match parts.next() {
        Some(p) if p.len() == 2 => digits(p)?,
        Some(_) => return None,
        None => 1,
    };
    let day = match parts.next() {
        Some(p) if p.len() == 2 => digits(p)?,
        Some(_) => return None,
        None => 1,
    };
    if parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut micros = days_from_civil(year, month, day) * 86_400_000_000;
    let Some(rest) = rest else {
        return Some(micros);
    };
    // The zone: `Z`, or `+HH:MM` / `-HH:MM` (also `+HHMM`, `+HH`) after the time.
    let (time, offset) = match rest
        .iter()
        .position(|&b| matches!(b, b'Z' | b'z' | b'+' | b'-'))
    {
        Some(i) => (&rest[..i], Some(&rest[i..])),
        None => (rest, None),
    };
    let (clock, frac) = match time.iter().position(|&b| b == b'.' || b == b',') {
        Some(i) => (&time[..i], Some(&time[i + 1..])),
        None => (time, None),
    };
    let mut hms = clock.split(|&b| b == b':');
    let h = hms.next().filter(|p| p.len() == 2).and_then(digits)?;
    let m = hms.next().filter(|p| p.len() == 2).and_then(digits)?;
    let sec = match hms.next() {
        Some(p) if p.len() == 2 => digits(p)?,
        Some(_) => return None,
        None => 0,
    };
    if hms.next().is_some() || h > 24 || m > 59 || sec > 60 {
        return None;
    }
    micros += ((h * 60 + m) * 60 + sec) * 1_000_000;
    if let Some(frac) = frac {
        digits(frac)?;
        let mut us = 0i64;
        for i in 0..6 {
            us = us * 10 + frac.get(i).map_or(0, |d| i64::from(d - b'0'));
        }
        micros += us;
    }
    match offset {
        None | Some(b"Z") | Some(b"z") => {}
        Some(zone) => {
            let sign = if zone[0] == b'-' { 1 } else { -1 };
            let z: Vec<u8> = zone[1..].iter().copied().filter(|&b| b != b':').collect();
            let (oh, om) = match z.len() {
                2 => (digits(&z)?, 0),
                4 => (digits(&z[..2])?, digits(&z[2..])?),
                _ => return None,
            };
            if oh > 23 || om > 59 {
                return None;
            }
            micros += sign * (oh * 60 + om) * 60_000_000;
        }
    }
    Some(micros)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entry::Entry;

    fn rows(items: &[(&str, Option<&str>)]) -> Rows {
        Rows::from_document(
            items
                .iter()
                .map(|(u, l)| Entry {
                    url: (*u).to_owned(),
                    lastmod: l.map(crate::entry::Short::new),
                    ..Entry::default()
                })
                .collect(),
            "https://e.test/sitemap.xml",
            1,
        )
    }

    #[test]
    fn instants_read_every_w3c_form() {
        let day = parse_instant("2025-06-01").unwrap();
        assert_eq!(day, parse_instant("2025-06-01T00:00:00+00:00").unwrap());
        assert_eq!(day, parse_instant("2025-06-01T02:00:00+02:00").unwrap());
        assert_eq!(day, parse_instant("2025-05-31T22:00-02:00").unwrap());
        assert_eq!(parse_instant("1970-01-01T00:00:01.5Z"), Some(1_500_000));
        assert_eq!(parse_instant("2025-06"), parse_instant("2025-06-01"));
        assert_eq!(parse_instant("yesterday"), None);
        assert_eq!(parse_instant("2025-13-01"), None);
    }

    #[test]
    fn rows_filter_by_pattern_and_since() {
        let since = parse_instant("2025-06-01T00:00:00+00:00");
        let patterns = vec!["/blog/".to_owned()];
        let filter = UrlFilter::new(&patterns, &["draft".to_owned()], since, false).unwrap();
        let mut batch = rows(&[
            ("https://e.test/blog/new", Some("2025-06-02")),
            (
                "https://e.test/blog/equal",
                Some("2025-06-01T00:00:00+00:00"),
            ),
            ("https://e.test/blog/old", Some("2025-05-31T23:59:59+00:00")),
            ("https://e.test/blog/undated", None),
            ("https://e.test/blog/draft", Some("2025-07-01")),
            ("https://e.test/shop/new", Some("2025-07-01")),
        ]);
        assert_eq!(filter.retain(&mut batch, true), 3);
        let kept: Vec<&str> = batch.0.iter().map(|r| r.entry.url.as_str()).collect();
        assert_eq!(
            kept,
            [
                "https://e.test/blog/new",
                "https://e.test/blog/equal",
                "https://e.test/blog/undated"
            ]
        );
        let strict = UrlFilter::new(&[], &[], since, true).unwrap();
        assert!(!strict.keeps_lastmod(None));
        assert!(UrlFilter::new(&["(".to_owned()], &[], None, false).is_err());
    }

    #[test]
    fn pathological_pattern_is_linear() {
        let filter = UrlFilter::new(&["(a+)+$".to_owned()], &[], None, false).unwrap();
        let url = format!("https://e.test/{}!", "a".repeat(100_000));
        let started = std::time::Instant::now();
        assert!(!filter.keeps_url(&url)); // the URL ends in `!`, not in `a`
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
