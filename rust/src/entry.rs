//! What the scanner produces for one item of a sitemap document.
//!
//! An entry is moved several times between the scanner and the output (into its row, its
//! document's batch, the walk's batch) and a million of them are made in a big walk, so it is
//! kept small: what most entries lack (alternates, images, videos, news) is behind one box,
//! and a lastmod, nearly always short, is kept in place rather than allocated.
#![forbid(unsafe_code)]

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;

#[derive(Debug, Clone, PartialEq)]
pub struct Alternate {
    pub hreflang: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub loc: String,
    pub title: Option<String>,
    pub caption: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Video {
    pub content_loc: Option<String>,
    pub player_loc: Option<String>,
    pub thumbnail_loc: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct News {
    pub title: Option<String>,
    pub publication_date: Option<String>,
    pub language: Option<String>,
    pub publication_name: Option<String>,
}

/// What an entry lists besides its own fields: its hreflang alternates and the image, video
/// and news extensions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct More {
    pub alternates: Vec<Alternate>,
    pub images: Vec<Image>,
    pub videos: Vec<Video>,
    pub news: Option<News>,
}

/// How many bytes a `Short` keeps in place: a lastmod with seconds, fraction and offset
/// (`2024-01-15T10:00:00.123456+00:00`) is 32; the common forms are 10 and 25.
const INLINE: usize = 30;

/// A string that is kept in place when it is short (a lastmod), allocated otherwise.
#[derive(Clone)]
pub enum Short {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<str>),
}

impl Short {
    pub fn new(s: &str) -> Self {
        if s.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            Short::Inline {
                len: s.len() as u8,
                bytes,
            }
        } else {
            Short::Heap(s.into())
        }
    }

    /// The text's bytes, with no check that they are text (they were a whole `str`).
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Short::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Short::Heap(s) => s.as_bytes(),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            // Always valid: the bytes were a whole `str` (the check is a few word reads).
            Short::Inline { len, bytes } => std::str::from_utf8(&bytes[..usize::from(*len)])
                .expect("a Short holds the bytes of a str"),
            Short::Heap(s) => s,
        }
    }
}

impl Deref for Short {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Short {
    fn from(s: &str) -> Self {
        Short::new(s)
    }
}

impl From<String> for Short {
    fn from(s: String) -> Self {
        if s.len() <= INLINE {
            Short::new(&s)
        } else {
            Short::Heap(s.into_boxed_str())
        }
    }
}

impl PartialEq for Short {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Short {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// One page entry, its URL resolved and normalized.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    pub url: String,
    pub lastmod: Option<Short>,
    pub priority: Option<f64>,
    /// One of the sitemap protocol's values as the scanner reads them; any text for entries
    /// made elsewhere (`Batch.from_entries`).
    pub changefreq: Option<Cow<'static, str>>,
    /// None when the entry lists nothing more (most entries).
    pub more: Option<Box<More>>,
}

impl Entry {
    pub fn alternates(&self) -> &[Alternate] {
        self.more.as_ref().map_or(&[], |m| m.alternates.as_slice())
    }

    pub fn images(&self) -> &[Image] {
        self.more.as_ref().map_or(&[], |m| m.images.as_slice())
    }

    pub fn videos(&self) -> &[Video] {
        self.more.as_ref().map_or(&[], |m| m.videos.as_slice())
    }

    pub fn news(&self) -> Option<&News> {
        self.more.as_ref().and_then(|m| m.news.as_ref())
    }
}

/// `value` boxed only when it holds something: what most entries and rows lack (`More`, an
/// alternate's `AlternateOf`, a crawled row's `Extra`) costs them one empty pointer.
#[inline]
pub fn boxed_if_any<T: Default + PartialEq>(value: T) -> Option<Box<T>> {
    (value != T::default()).then(|| Box::new(value))
}

/// A value that could not be used, with why (the reasons are fixed strings users see).
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub raw: String,
    pub reason: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_stays_small() {
        assert_eq!(std::mem::size_of::<Option<Short>>(), 32);
        assert!(std::mem::size_of::<Entry>() <= 104);
    }

    #[test]
    fn short_strings_read_back_at_every_length() {
        for n in [0, 1, 10, 25, 29, 30, 31, 32, 100] {
            let s: String = "é9".chars().cycle().take(n).collect();
            assert_eq!(Short::new(&s).as_str(), s);
            assert_eq!(Short::from(s.clone()).as_str(), s);
        }
        assert!(matches!(Short::new(&"x".repeat(30)), Short::Inline { .. }));
        assert!(matches!(Short::new(&"x".repeat(31)), Short::Heap(_)));
    }
}
