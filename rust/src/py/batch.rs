use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use super::seen::SeenSet;
use crate::batch::Rows;
use crate::entry;

/// Inventory rows held natively: `entries()` builds `sitescout.Entry` objects only when asked;
/// the CLI encodes rows straight to JSON lines, CSV or plain URLs.
#[pyclass(module = "sitescout._core")]
#[derive(Default)]
pub struct Batch {
    pub rows: Rows,
}

impl Batch {
    pub fn from_document(entries: Vec<entry::Entry>, sitemap: &str, depth: u32) -> Self {
        Batch {
            rows: Rows::from_document(entries, sitemap, depth),
        }
    }
}

struct Classes<'py> {
    entry: Bound<'py, PyAny>,
    alternate: Bound<'py, PyAny>,
    image: Bound<'py, PyAny>,
    video: Bound<'py, PyAny>,
    news: Bound<'py, PyAny>,
}

impl<'py> Classes<'py> {
    fn load(py: Python<'py>) -> PyResult<Self> {
        let models = py.import("sitescout._models")?;
        Ok(Classes {
            entry: models.getattr("Entry")?,
            alternate: models.getattr("Alternate")?,
            image: models.getattr("Image")?,
            video: models.getattr("Video")?,
            news: models.getattr("News")?,
        })
    }
}

#[pymethods]
impl Batch {
    #[new]
    fn new() -> Self {
        Batch::default()
    }

    fn __len__(&self) -> usize {
        self.rows.0.len()
    }

    /// How many rows are pages (not hreflang alternates).
    fn pages(&self) -> usize {
        self.rows.pages()
    }

    fn urls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.rows.0.iter().map(|r| r.entry.url.as_str()))
    }

    /// Drop the rows whose URL is in `seen` (adding the others); returns how many went.
    fn retain_new(&mut self, seen: &mut SeenSet) -> usize {
        self.rows.retain_new(&mut seen.inner)
    }

    /// `retain_new`, then the alternates of every row, dropped ones included, that `seen` does
    /// not hold yet (now added): how many rows went, and the alternates as a batch.
    fn retain_new_with_alternates(&mut self, seen: &mut SeenSet) -> (usize, Batch) {
        let (dropped, rows) = self.rows.retain_new_with_alternates(&mut seen.inner);
        (dropped, Batch { rows })
    }

    /// The hreflang alternates of these rows that `seen` does not hold yet (now added).
    fn alternates(&self, seen: &mut SeenSet) -> Batch {
        Batch {
            rows: self.rows.alternates(&mut seen.inner),
        }
    }

    /// Keep the first `at` rows; return the rest as a new batch.
    fn split_off(&mut self, at: usize) -> Batch {
        Batch {
            rows: self.rows.split_off(at),
        }
    }

    /// Move every row of `other` to the end of this batch.
    fn extend(&mut self, mut other: PyRefMut<'_, Batch>) {
        let rows = std::mem::take(&mut other.rows.0);
        self.rows.0.extend(rows);
    }

    fn to_jsonl(&self) -> String {
        self.rows.to_jsonl()
    }

    fn to_csv(&self) -> String {
        self.rows.to_csv()
    }

    fn to_txt(&self) -> String {
        self.rows.to_txt()
    }

    /// The rows as `sitescout.Entry` objects.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let classes = Classes::load(py)?;
        let empty = PyTuple::empty(py);
        // Rows of one document share their sitemap URL: one Python string for them all.
        let mut sitemap: Option<(Arc<str>, Bound<'py, PyString>)> = None;
        let mut out = Vec::with_capacity(self.rows.0.len());
        for row in &self.rows.0 {
            let sm = match &sitemap {
                Some((arc, s)) if Arc::ptr_eq(arc, &row.sitemap) => s.clone(),
                _ => {
                    let s = PyString::new(py, &row.sitemap);
                    sitemap = Some((Arc::clone(&row.sitemap), s.clone()));
                    s
                }
            };
            let e = &row.entry;
            let alternates = if e.alternates.is_empty() {
                empty.clone()
            } else {
                let items = e
                    .alternates
                    .iter()
                    .map(|a| classes.alternate.call1((&a.hreflang, &a.url)))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?
            };
            let images = if e.images.is_empty() {
                empty.clone()
            } else {
                let items = e
                    .images
                    .iter()
                    .map(|i| classes.image.call1((&i.loc, &i.title, &i.caption)))
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?
            };
            let videos = if e.videos.is_empty() {
                empty.clone()
            } else {
                let items = e
                    .videos
                    .iter()
                    .map(|v| {
                        classes.video.call1((
                            &v.content_loc,
                            &v.player_loc,
                            &v.thumbnail_loc,
                            &v.title,
                            &v.description,
                        ))
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                PyTuple::new(py, items)?
            };
            let news = match &e.news {
                None => py.None().into_bound(py),
                Some(n) => classes.news.call1((
                    &n.title,
                    &n.publication_date,
                    &n.language,
                    &n.publication_name,
                ))?,
            };
            out.push(classes.entry.call1((
                &e.url,
                &e.lastmod,
                e.priority,
                e.changefreq,
                alternates,
                images,
                videos,
                news,
                sm,
                row.depth,
                &row.hreflang,
                &row.alternate_of,
            ))?);
        }
        PyList::new(py, out)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Batch>()
}
