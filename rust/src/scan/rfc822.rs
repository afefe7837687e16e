//! RSS dates: `pubDate` values (RFC 822 / RFC 2822) read exactly as the Python parser read them,
//! `email.utils.parsedate_to_datetime(value).isoformat()` (CPython 3.11's `_parsedate_tz`, step
//! by step, quirks included), the W3C forms of `normalize_lastmod` when that fails, and the
//! value itself when both do.
//!
//! The quirks kept, as `email._parseaddr` has them: two-digit years (and a negative year taken
//! from the zone's place) map 69-99 to 19xx and the rest to 20xx; `-0000` (and any other zero
//! written with a minus) and a zone that is neither a known name nor a number give no offset at
//! all (a naive datetime: `isoformat` writes none), so `+02:00` and the military letters other
//! than `Z` do too; an offset's last two digits are minutes even past 59 (`+0099` is `+01:39`);
//! the weekday is never checked; `.` may separate the parts of the time; a month name may come
//! before the day; the year and the time may trade places; text after the zone is ignored.
//! Python's `int()` reads the numbers: any Unicode decimal digit, a sign, `_` between digits,
//! and at most 4,300 digits (the interpreter's default limit; more is a ValueError).
//!
//! One deliberate difference: where Python's `datetime` or `timedelta` raises OverflowError (a
//! year or an offset too large for a C integer, e.g. `Tue, 10 Jun 99999999999 04:00:00 GMT`),
//! `normalize_rfc822` raised it to its caller instead of falling back; here such a value is
//! unparseable like any other out-of-range date.
#![forbid(unsafe_code)]

use super::values::{decimal, is_py_space, normalize_lastmod, py_strip};

const MONTHS: [&str; 24] = [
    "jan",
    "feb",
    "mar",
    "apr",
    "may",
    "jun",
    "jul",
    "aug",
    "sep",
    "oct",
    "nov",
    "dec",
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// `_parseaddr._timezones`: hours and minutes as a number (`-500` is five hours west).
const ZONES: [(&str, i128); 14] = [
    ("UT", 0),
    ("UTC", 0),
    ("GMT", 0),
    ("Z", 0),
    ("AST", -400),
    ("ADT", -300),
    ("EST", -500),
    ("EDT", -400),
    ("CST", -600),
    ("CDT", -500),
    ("MST", -700),
    ("MDT", -600),
    ("PST", -800),
    ("PDT", -700),
];

/// Code points that are digits to `str.isdigit()` without being decimal (Numeric_Type=Digit,
/// Unicode 14: superscripts, circled and parenthesized digits, ...): `int()` refuses them.
const DIGIT_ONLY: [(u32, u32); 20] = [
    (0xB2, 0xB3),
    (0xB9, 0xB9),
    (0x1369, 0x1371),
    (0x19DA, 0x19DA),
    (0x2070, 0x2070),
    (0x2074, 0x2079),
    (0x2080, 0x2089),
    (0x2460, 0x2468),
    (0x2474, 0x247C),
    (0x2488, 0x2490),
    (0x24EA, 0x24EA),
    (0x24F5, 0x24FD),
    (0x24FF, 0x24FF),
    (0x2776, 0x277E),
    (0x2780, 0x2788),
    (0x278A, 0x2792),
    (0x10A40, 0x10A43),
    (0x10E60, 0x10E68),
    (0x11052, 0x1105A),
    (0x1F100, 0x1F10A),
];

/// Python's `str.isdigit()` for one character.
fn is_py_digit(c: char) -> bool {
    let cp = u32::from(c);
    decimal(c).is_some() || DIGIT_ONLY.iter().any(|&(a, b)| (a..=b).contains(&cp))
}

/// `s.lower() == name` for an ASCII `name`: only ASCII letters lowercase into ASCII ones (the
/// Kelvin sign becomes `k`, which no name here holds).
fn lower_is(s: &str, name: &str) -> bool {
    s.len() == name.len()
        && s.bytes()
            .zip(name.bytes())
            .all(|(a, b)| a.to_ascii_lowercase() == b)
}

/// `s.upper()` when it is ASCII and short enough to name a zone; None otherwise. Of the
/// characters that uppercase into ASCII, only `ſ` (S) and the `ﬅ`/`ﬆ` ligatures (ST) can help
/// spell a zone name.
fn zone_upper(s: &str) -> Option<String> {
    let mut out = String::with_capacity(4);
    for c in s.chars() {
        match c {
            _ if c.is_ascii() => out.push(c.to_ascii_uppercase()),
            '\u{17f}' => out.push('S'),
            '\u{fb05}' | '\u{fb06}' => out.push_str("ST"),
            _ => return None,
        }
        if out.len() > 3 {
            return None;
        }
    }
    Some(out)
}

/// What no field here can reach: larger values are held at this (Python has no bound, and any
/// of them is out of every range checked below).
const HUGE: i128 = 1_000_000_000_000_000_000_000_000_000;

/// Python's `int(s)` (base 10), None where it raises ValueError; magnitudes beyond `HUGE` are
/// held at it. `s` holds no whitespace here (the value was split on it).
fn py_int(s: &str) -> Option<i128> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut value: i128 = 0;
    let mut count = 0usize;
    let mut after_digit = false;
    for c in digits.chars() {
        if c == '_' {
            if !after_digit {
                return None;
            }
            after_digit = false;
            continue;
        }
        let d = decimal(c)?;
        value = (value * 10 + i128::from(d)).min(HUGE);
        count += 1;
        after_digit = true;
    }
    // Empty, a trailing `_`, or over the interpreter's default limit of 4,300 digits.
    if !after_digit || count > 4300 {
        return None;
    }
    Some(if negative { -value } else { value })
}

fn days_in_month(year: i128, month: i128) -> i128 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// The fields `_parsedate_tz` reads: year, month, day, hour, minute, second and the offset in
/// seconds (None: no zone, a naive datetime). None where it returns None (or raises).
#[allow(clippy::type_complexity)]
fn parsedate_tz(value: &str) -> Option<([i128; 6], Option<i128>)> {
    let mut data: Vec<&str> = value.split(is_py_space).filter(|t| !t.is_empty()).collect();
    let first = *data.first()?;
    // The FWS after the comma after the day-of-week is optional.
    if first.ends_with(',') || DAYS.iter().any(|d| lower_is(first, d)) {
        data.remove(0);
    } else if let Some(i) = first.rfind(',') {
        data[0] = &first[i + 1..];
    }
    if data.len() == 3 {
        // RFC 850 date, deprecated: `10-Jun-03`.
        let stuff: Vec<&str> = data[0].split('-').collect();
        if stuff.len() == 3 {
            data.splice(0..1, stuff);
        }
    }
    if data.len() == 4 {
        let s = data[3];
        match s.find('+').or_else(|| s.find('-')) {
            Some(i) if i > 0 => {
                data.splice(3..4, [&s[..i], &s[i..]]);
            }
            _ => data.push(""), // dummy zone
        }
    }
    if data.len() < 5 {
        return None;
    }
    let (mut dd, mut mm, mut yy, mut tm, mut tz) = (data[0], data[1], data[2], data[3], data[4]);
    if dd.is_empty() || mm.is_empty() || yy.is_empty() {
        return None;
    }
    let month_of = |s: &str| MONTHS.iter().position(|m| lower_is(s, m));
    let month = match month_of(mm) {
        Some(i) => i,
        None => {
            // Python lowercases the day it swaps in: no difference to `int()` or the comma.
            (dd, mm) = (mm, dd);
            month_of(mm)?
        }
    };
    let month = (month % 12 + 1) as i128;
    dd = dd.strip_suffix(',').unwrap_or(dd);
    if yy.find(':').is_some_and(|i| i > 0) {
        (yy, tm) = (tm, yy);
    }
    if yy.is_empty() {
        return None; // `yy[-1]` raises IndexError, which the caller catches
    }
    if let Some(cut) = yy.strip_suffix(',') {
        yy = cut;
        if yy.is_empty() {
            return None;
        }
    }
    if !yy.chars().next().is_some_and(is_py_digit) {
        (yy, tz) = (tz, yy);
    }
    if tm.is_empty() {
        return None; // `tm[-1]` raises IndexError, which the caller catches
    }
    tm = tm.strip_suffix(',').unwrap_or(tm);
    let parts: Vec<&str> = tm.split(':').collect();
    let (thh, tmm, tss) = match parts[..] {
        [h, m] => (h, m, "0"),
        [h, m, s] => (h, m, s),
        [one] if one.contains('.') => match one.split('.').collect::<Vec<_>>()[..] {
            [h, m] => (h, m, "0"),
            [h, m, s] => (h, m, s),
            _ => return None,
        },
        _ => return None,
    };
    let mut year = py_int(yy)?;
    let day = py_int(dd)?;
    let hour = py_int(thh)?;
    let minute = py_int(tmm)?;
    let second = py_int(tss)?;
    // Two-digit years, as POSIX reads them.
    if year < 100 {
        year += if year > 68 { 1900 } else { 2000 };
    }
    let mut offset = None;
    match zone_upper(tz).and_then(|z| ZONES.iter().find(|(name, _)| *name == z)) {
        Some(&(_, hhmm)) => offset = Some(hhmm),
        None => {
            if let Some(n) = py_int(tz) {
                // `-0000`: UTC, with no claim about the local zone.
                if !(n == 0 && tz.starts_with('-')) {
                    offset = Some(n);
                }
            }
        }
    }
    let offset = offset.map(|hhmm| {
        let (sign, n) = if hhmm < 0 { (-1, -hhmm) } else { (1, hhmm) };
        sign * ((n / 100) * 3600 + (n % 100) * 60)
    });
    Some(([year, month, day, hour, minute, second], offset))
}

/// `email.utils.parsedate_to_datetime(value).isoformat()`; None where that raises (the
/// OverflowError of a huge year or offset included).
pub fn parsedate_isoformat(value: &str) -> Option<String> {
    let ([year, month, day, hour, minute, second], offset) = parsedate_tz(value)?;
    // `datetime.timezone` takes offsets strictly within a day; `datetime` its usual ranges.
    if offset.is_some_and(|o| o.abs() >= 86_400)
        || !(1..=9999).contains(&year)
        || !(1..=days_in_month(year, month)).contains(&day)
        || !(0..24).contains(&hour)
        || !(0..60).contains(&minute)
        || !(0..60).contains(&second)
    {
        return None;
    }
    let mut out = format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if let Some(o) = offset {
        let sign = if o < 0 { '-' } else { '+' };
        let o = o.abs();
        out.push_str(&format!("{sign}{:02}:{:02}", o / 3600, o % 3600 / 60));
    }
    Some(out)
}

/// An RSS `pubDate` as ISO 8601 (`parsedate_isoformat`); else the W3C forms as
/// `normalize_lastmod` reads them; else the stripped value; None when blank.
pub fn normalize_rfc822(raw: &str) -> Option<String> {
    let value = py_strip(raw);
    if value.is_empty() {
        return None;
    }
    parsedate_isoformat(value).or_else(|| normalize_lastmod(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_dates() {
        let cases = [
            ("Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00+00:00"),
            (
                "Tue, 10 Jun 2003 04:00:00 +0200",
                "2003-06-10T04:00:00+02:00",
            ),
            (
                "Tue, 10 Jun 2003 04:00:00 -0500",
                "2003-06-10T04:00:00-05:00",
            ),
            ("Tue, 10 Jun 2003 04:00:00 EST", "2003-06-10T04:00:00-05:00"),
            ("Tue, 10 Jun 2003 04:00:00 pdt", "2003-06-10T04:00:00-07:00"),
            ("Tue, 10 Jun 2003 04:00:00 UT", "2003-06-10T04:00:00+00:00"),
            ("Tue, 10 Jun 2003 04:00:00 Z", "2003-06-10T04:00:00+00:00"),
            ("Tue, 10 Jun 2003 04:00:00 A", "2003-06-10T04:00:00"),
            ("Tue, 10 Jun 2003 04:00:00 -0000", "2003-06-10T04:00:00"),
            (
                "Tue, 10 Jun 2003 04:00:00 +0000",
                "2003-06-10T04:00:00+00:00",
            ),
            ("Tue, 10 Jun 2003 04:00:00 +02:00", "2003-06-10T04:00:00"),
            (
                "Tue, 10 Jun 2003 04:00:00 +0099",
                "2003-06-10T04:00:00+01:39",
            ),
            ("10 Jun 2003 04:00 GMT", "2003-06-10T04:00:00+00:00"),
            ("Tue,10 Jun 03 04:00:00 GMT", "2003-06-10T04:00:00+00:00"),
            ("Tue, 10 Jun 69 04:00:00 GMT", "1969-06-10T04:00:00+00:00"),
            ("Tue, 10 Jun 68 04:00:00 GMT", "2068-06-10T04:00:00+00:00"),
            ("tuesday, 10 june 2003 4.5 gmt", "2003-06-10T04:05:00+00:00"),
            ("Jun 10 2003 04:00:00+0100", "2003-06-10T04:00:00+01:00"),
            ("10-Jun-03 04:00 GMT", "2003-06-10T04:00:00+00:00"),
            ("10 Jun 04:00 2003 GMT", "2003-06-10T04:00:00+00:00"),
            ("10 Jun GMT 04:00 -5", "1995-06-10T04:00:00+00:00"),
            (
                "10 Jun 2003 04:00 +\u{662}\u{660}\u{660}",
                "2003-06-10T04:00:00+02:00",
            ),
            ("10 Jun 2003 04:00 E\u{17f}T", "2003-06-10T04:00:00-05:00"),
            ("1_0 Jun 2003 04:00", "2003-06-10T04:00:00"),
            // Unparseable: the value (W3C forms normalized), or None when blank.
            (
                "Tue, 31 Jun 2003 04:00:00 GMT",
                "Tue, 31 Jun 2003 04:00:00 GMT",
            ),
            (
                "Tue, 10 Jun 2003 04:00:60 GMT",
                "Tue, 10 Jun 2003 04:00:60 GMT",
            ),
            (
                "Tue, 10 Jun 2003 04:00:00 +2400",
                "Tue, 10 Jun 2003 04:00:00 +2400",
            ),
            (
                "Tue, 10 Jun 99999999999 04:00:00 GMT",
                "Tue, 10 Jun 99999999999 04:00:00 GMT",
            ),
            ("10 Jun \u{b2}003 04:00 2003", "10 Jun \u{b2}003 04:00 2003"),
            (" 2020-01-02T03:04Z ", "2020-01-02T03:04:00+00:00"),
            ("yesterday", "yesterday"),
        ];
        for (raw, want) in cases {
            assert_eq!(normalize_rfc822(raw).as_deref(), Some(want), "{raw:?}");
        }
        assert_eq!(normalize_rfc822(" \u{3000}\n"), None);
        assert_eq!(normalize_rfc822(""), None);
    }

    #[test]
    fn python_ints() {
        assert_eq!(py_int("+0200"), Some(200));
        assert_eq!(py_int("-1_0"), Some(-10));
        assert_eq!(py_int("\u{661}\u{662}"), Some(12));
        for bad in ["", "+", "_1", "1_", "1__0", "\u{b2}", "1a", "--1"] {
            assert_eq!(py_int(bad), None, "{bad:?}");
        }
        assert_eq!(py_int(&"0".repeat(4300)), Some(0));
        assert_eq!(py_int(&"0".repeat(4301)), None);
        assert_eq!(py_int(&"9".repeat(60)), Some(HUGE));
    }
}
