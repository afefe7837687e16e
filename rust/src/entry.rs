//! What the scanner produces for one item of a sitemap document.
#![forbid(unsafe_code)]

use std::borrow::Cow;

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

/// One page entry, its URL resolved and normalized.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Entry {
    pub url: String,
    pub lastmod: Option<String>,
    pub priority: Option<f64>,
    /// One of the sitemap protocol's values as the scanner reads them; any text for entries
    /// made elsewhere (`Batch.from_entries`).
    pub changefreq: Option<Cow<'static, str>>,
    pub alternates: Vec<Alternate>,
    pub images: Vec<Image>,
    pub videos: Vec<Video>,
    pub news: Option<Box<News>>,
}

/// A value that could not be used, with why (the reasons are fixed strings users see).
#[derive(Debug, Clone, PartialEq)]
pub struct Malformed {
    pub raw: String,
    pub reason: &'static str,
}
