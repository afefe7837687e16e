use std::borrow::Cow;
use std::sync::Arc;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use super::report::{answer as report_answer, ReportUrls, UrlRules};
use super::scope::PyLower;
use super::seen::SeenSet;
use super::urls::{texts_of, wtf8};
use crate::batch::{self, Extra, Row, Rows, Source};
use crate::columns;
use crate::entry;
use crate::groups;
use crate::hashes;
use crate::report;
use crate::scope::Scope;

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

/// `Batch.path_groups`' item: a group's key (None: in no group), count and shortest URLs.
type PathGroup<'py> = (Option<Bound<'py, PyString>>, usize, Bound<'py, PyList>);

/// A path group's key as text: rows are UTF-8, and so are the keys cut from them.
fn key_text(key: &Option<Vec<u8>>) -> Option<Cow<'_, str>> {
    key.as_deref().map(String::from_utf8_lossy)
}

/// The classes `entries()` builds, handed over by `sitescout._parse` when it is imported
/// (`register_models`): the glue imports no module of the package.
struct Models {
    entry: Py<PyAny>,
    alternate: Frozen,
    image: Frozen,
    video: Frozen,
    news: Frozen,
}

static MODELS: PyOnceLock<Models> = PyOnceLock::new();

impl Models {
    fn get(py: Python<'_>) -> PyResult<&Models> {
        MODELS.get(py).ok_or_else(|| {
            PyRuntimeError::new_err(
                "the entry classes are not registered (importing sitescout._parse registers them)",
            )
        })
    }
}

/// A frozen slots dataclass, built through its slots' own setters: `object.__new__`, then each
/// field's member descriptor. Its `__init__` sets every field through `object.__setattr__` (the
/// price of being frozen), so an hreflang alternate cost more than a whole 18-field `Entry`, and
/// a site listing ten locales per page builds ten of them per entry. The object is the same: its
/// class, equality, hash and frozenness (`tests/test_core_encode.py`). A class whose fields are not
/// the ones given, or that has a `__post_init__`, is called as it is.
struct Frozen {
    class: Py<PyAny>,
    /// None: the class is called.
    slots: Option<Slots>,
}

/// `object.__new__`, and each field's `__set__` in the order the fields were given.
struct Slots {
    new: Py<PyAny>,
    setters: Vec<Py<PyAny>>,
}

impl Frozen {
    fn new(py: Python<'_>, class: Py<PyAny>, fields: &[&str]) -> PyResult<Self> {
        let slots = Self::slots(class.bind(py), fields)?;
        Ok(Frozen { class, slots })
    }

    fn slots(class: &Bound<'_, PyAny>, fields: &[&str]) -> PyResult<Option<Slots>> {
        let py = class.py();
        if class.hasattr("__post_init__")? {
            return Ok(None);
        }
        let Ok(declared) = class.getattr("__dataclass_fields__") else {
            return Ok(None);
        };
        let names = declared
            .try_iter()?
            .map(|name| name?.extract::<String>())
            .collect::<PyResult<Vec<_>>>()?;
        if names != fields {
            return Ok(None);
        }
        let mut setters = Vec::with_capacity(fields.len());
        for name in fields {
            let slot = class.getattr(*name)?;
            if slot.get_type().name()? != "member_descriptor" {
                return Ok(None);
            }
            setters.push(slot.getattr("__set__")?.unbind());
        }
        let new = py.get_type::<PyAny>().getattr("__new__")?.unbind();
        Ok(Some(Slots { new, setters }))
    }

    /// An instance with these field values, in the order the fields were given.
    fn make<'py, const N: usize>(
        &self,
        py: Python<'py>,
        values: [Bound<'py, PyAny>; N],
    ) -> PyResult<Bound<'py, PyAny>> {
        let class = self.class.bind(py);
        let Some(slots) = &self.slots else {
            return class.call1(PyTuple::new(py, values)?);
        };
        let made = slots.new.bind(py).call1((class,))?;
        for (set, value) in slots.setters.iter().zip(values) {
            set.bind(py).call1((&made, value))?;
        }
        Ok(made)
    }
}

/// A text field as Python has it: a `str`, or None.
fn text<'py>(py: Python<'py>, value: Option<&str>) -> Bound<'py, PyAny> {
    match value {
        Some(s) => PyString::new(py, s).into_any(),
        None => py.None().into_bound(py),
    }
}

/// `register_models(Entry, Alternate, Image, Video, News)`: the classes `Batch.entries()`
/// builds. The first registration holds; later ones are ignored.
#[pyfunction]
fn register_models(
    py: Python<'_>,
    entry: Py<PyAny>,
    alternate: Py<PyAny>,
    image: Py<PyAny>,
    video: Py<PyAny>,
    news: Py<PyAny>,
) -> PyResult<()> {
    super::guard("register_models", || {
        MODELS.get_or_try_init(py, || -> PyResult<Models> {
            Ok(Models {
                entry,
                alternate: Frozen::new(py, alternate, &["hreflang", "url"])?,
                image: Frozen::new(py, image, &["loc", "title", "caption"])?,
                video: Frozen::new(
                    py,
                    video,
                    &[
                        "content_loc",
                        "player_loc",
                        "thumbnail_loc",
                        "title",
                        "description",
                    ],
                )?,
                news: Frozen::new(
                    py,
                    news,
                    &["title", "publication_date", "language", "publication_name"],
                )?,
            })
        })?;
        Ok(())
    })
}

#[pymethods]
impl Batch {
    #[new]
    fn new() -> PyResult<Self> {
        super::guard("Batch.new", || Ok(Batch::default()))
    }

    fn __len__(&self) -> PyResult<usize> {
        super::guard("Batch.__len__", || Ok(self.rows.0.len()))
    }

    /// How many rows are pages (not hreflang alternates).
    fn pages(&self) -> PyResult<usize> {
        super::guard("Batch.pages", || Ok(self.rows.pages()))
    }

    /// 8 bytes of keyed BLAKE2b per row's URL, in order (see `url_hashes`).
    fn url_hashes<'py>(&self, py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        super::guard("Batch.url_hashes", || {
            let rows = &self.rows.0;
            let hashes =
                py.detach(|| hashes::url_hashes(rows.iter().map(|r| r.entry.url.as_bytes()), key));
            Ok(PyBytes::new(py, &hashes.map_err(|_| bad_key())?))
        })
    }

    fn urls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        super::guard("Batch.urls", || {
            PyList::new(py, self.rows.0.iter().map(|r| r.entry.url.as_str()))
        })
    }

    /// Append a row found outside a sitemap's urlset: an llms.txt link, a crawled page.
    #[pyo3(signature = (url, sitemap, depth, source, title=None, md_url=None, canonical=None, sources=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        url: String,
        sitemap: &str,
        depth: u32,
        source: &str,
        title: Option<String>,
        md_url: Option<String>,
        canonical: Option<String>,
        sources: Vec<String>,
    ) -> PyResult<()> {
        super::guard("Batch.push", || {
            let sources = sources
                .iter()
                .map(|s| source_of(s))
                .collect::<PyResult<Vec<_>>>()?;
            let extra = Extra {
                title,
                canonical,
                md_url,
                sources,
            };
            self.rows
                .push(url, sitemap, depth, source_of(source)?, extra);
            Ok(())
        })
    }

    /// Keep the rows of the site `(site_host, site_port)` (a `site_key`) whose URL lies under
    /// `prefix` (`under_prefix`): how many of the site's rows were examined and how many matched.
    /// Other sites' rows go, uncounted (the narrow-prefix warning's counts).
    fn retain_under(
        &mut self,
        py: Python<'_>,
        site_host: &Bound<'_, PyString>,
        site_port: &Bound<'_, PyString>,
        prefix: &Bound<'_, PyString>,
    ) -> PyResult<(usize, usize)> {
        super::guard("Batch.retain_under", || {
            let scope = Scope::new(&wtf8(site_host)?, &wtf8(site_port)?, &wtf8(prefix)?);
            Ok(self.rows.retain_under(&scope, &mut PyLower { py }))
        })
    }

    /// Drop the rows whose URL is in `seen` (adding the others); returns how many went.
    fn retain_new(&mut self, seen: &mut SeenSet) -> PyResult<usize> {
        super::guard("Batch.retain_new", || {
            Ok(self.rows.retain_new(&mut seen.inner))
        })
    }

    /// `retain_new`, then the alternates of every row, dropped ones included, whose URL is in
    /// neither `seen` nor `held` (now added to `held`): how many rows went, and the alternates
    /// as a batch.
    fn retain_new_with_alternates(
        &mut self,
        seen: &mut SeenSet,
        held: &mut SeenSet,
    ) -> PyResult<(usize, Batch)> {
        super::guard("Batch.retain_new_with_alternates", || {
            Ok({
                let (dropped, rows) = self
                    .rows
                    .retain_new_with_alternates(&mut seen.inner, &mut held.inner);
                (dropped, Batch { rows })
            })
        })
    }

    /// The hreflang alternates of these rows whose URL is in neither `seen` nor `held` (now
    /// added to `held`).
    fn alternates(&self, seen: &SeenSet, held: &mut SeenSet) -> PyResult<Batch> {
        super::guard("Batch.alternates", || {
            Ok({
                Batch {
                    rows: self.rows.alternates(&seen.inner, &mut held.inner),
                }
            })
        })
    }

    /// Keep the first `at` rows; return the rest as a new batch.
    fn split_off(&mut self, at: usize) -> PyResult<Batch> {
        super::guard("Batch.split_off", || {
            Ok({
                Batch {
                    rows: self.rows.split_off(at),
                }
            })
        })
    }

    /// Every whole run of `size` rows from the front as batches of their own, in order; fewer
    /// than `size` rows stay.
    fn take_batches(&mut self, size: usize) -> PyResult<Vec<Batch>> {
        super::guard("Batch.take_batches", || {
            Ok({
                self.rows
                    .take_batches(size)
                    .into_iter()
                    .map(|rows| Batch { rows })
                    .collect()
            })
        })
    }

    /// Move every row of `other` to the end of this batch.
    fn extend(&mut self, mut other: PyRefMut<'_, Batch>) -> PyResult<()> {
        super::guard("Batch.extend", || {
            self.rows.append(&mut other.rows);
            Ok(())
        })
    }

    fn to_jsonl(&self) -> PyResult<String> {
        super::guard("Batch.to_jsonl", || Ok(self.rows.to_jsonl()))
    }

    fn to_csv(&self) -> PyResult<String> {
        super::guard("Batch.to_csv", || Ok(self.rows.to_csv()))
    }

    /// What the site report counts of the rows (besides their URLs), counted here so that it
    /// takes a step per distinct value, not per row: `(lastmods, sitemaps, alternates,
    /// declaring, declared)`, each `(value, count)` in the order the values first appear:
    /// lastmods by their first 8 characters ("" for none), the hreflang of alternate rows, the
    /// path group (depth 1) of pages that list alternates, and `(group, hreflang)` for each
    /// distinct hreflang such a page lists.
    fn report_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        super::guard("Batch.report_counts", || {
            let rows = &self.rows;
            let counts = py.detach(|| report::report_counts(rows));
            let declaring: Vec<_> = counts
                .declaring
                .counts
                .iter()
                .map(|(group, n)| (key_text(group), *n))
                .collect();
            let declared: Vec<_> = counts
                .declared
                .counts
                .iter()
                .map(|((group, hreflang), n)| (key_text(group), *hreflang, *n))
                .collect();
            let lastmods: Vec<_> = counts
                .lastmods
                .counts
                .iter()
                .map(|(head, n)| (head.text(), *n))
                .collect();
            (
                lastmods,
                counts.sitemaps.counts,
                counts.alternates.counts,
                declaring,
                declared,
            )
                .into_pyobject(py)
        })
    }

    /// The rows' URLs as the site report reads them (`report_urls`): `(places, junk, auth)`.
    fn report_urls<'py>(&self, py: Python<'py>, rules: &UrlRules) -> PyResult<ReportUrls<'py>> {
        super::guard("Batch.report_urls", || {
            let rows = &self.rows.0;
            let urls: Vec<&[u8]> = rows.iter().map(|r| r.entry.url.as_bytes()).collect();
            report_answer(py, &urls, rules, |row| {
                Ok(PyString::new(py, &rows[row].entry.url))
            })
        })
    }

    /// The rows as Arrow column buffers, in `sitescout._table.schema`'s order without
    /// `lastmod`: `(validity, offsets, data)` per string column, `(validity, values)` for
    /// `priority`, the `depth` values, and `(validity, offsets, (validity, offsets, data))` for
    /// `sources`; a validity of None means no nulls. Raises ValueError when the batch's text
    /// does not fit 32-bit offsets (2 GiB).
    fn arrow_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        super::guard("Batch.arrow_columns", || {
            let c = columns::columns(&self.rows).map_err(|_| {
                PyValueError::new_err("a batch's text is too big for one Arrow column (2 GiB)")
            })?;
            let bytes = |b: &[u8]| PyBytes::new(py, b);
            let bitmap = |v: columns::Validity| v.into_bitmap().map(|b| PyBytes::new(py, &b));
            let strings = |s: columns::Strings| -> PyResult<Bound<'py, PyTuple>> {
                let offsets = bytes(&s.offsets);
                let data = bytes(&s.data);
                (bitmap(s.validity), offsets, data).into_pyobject(py)
            };
            let sources = c.sources;
            let items = strings(sources.items)?;
            PyTuple::new(
                py,
                [
                    strings(c.url)?.into_any(),
                    strings(c.lastmod_raw)?.into_any(),
                    (bitmap(c.priority.validity), bytes(&c.priority.values))
                        .into_pyobject(py)?
                        .into_any(),
                    strings(c.changefreq)?.into_any(),
                    strings(c.hreflang)?.into_any(),
                    strings(c.alternate_of)?.into_any(),
                    strings(c.sitemap)?.into_any(),
                    bytes(&c.depth).into_any(),
                    strings(c.source)?.into_any(),
                    strings(c.title)?.into_any(),
                    strings(c.md_url)?.into_any(),
                    (bitmap(sources.validity), bytes(&sources.offsets), items)
                        .into_pyobject(py)?
                        .into_any(),
                ],
            )
        })
    }

    /// The rows' URLs per path group (`group_key` at `depth`), in the order the groups first
    /// appear: `(key, count, shortest)`, key None for URLs in no group, `shortest` the group's
    /// `limit` shortest distinct URLs, shortest first. A caller merges a batch per group, not
    /// per URL.
    fn path_groups<'py>(
        &self,
        py: Python<'py>,
        depth: usize,
        limit: usize,
    ) -> PyResult<Vec<PathGroup<'py>>> {
        super::guard("Batch.path_groups", || {
            let rows = &self.rows.0;
            let counted = py.detach(|| {
                groups::count_groups(rows.iter().map(|r| r.entry.url.as_str()), depth, limit)
            });
            counted
                .into_iter()
                .map(|g| {
                    let key = key_text(&g.key).map(|k| PyString::new(py, &k));
                    Ok((key, g.count, PyList::new(py, g.samples())?))
                })
                .collect()
        })
    }

    fn to_txt(&self) -> PyResult<String> {
        super::guard("Batch.to_txt", || Ok(self.rows.to_txt()))
    }

    /// `to_jsonl()`, `to_csv()` or `to_txt()` (`format` "jsonl", "csv" or "txt") as UTF-8
    /// bytes, for a writer to a binary stream: no str is made and encoded again per batch.
    fn encode<'py>(&self, py: Python<'py>, format: &str) -> PyResult<Bound<'py, PyBytes>> {
        super::guard("Batch.encode", || {
            let rows = &self.rows;
            let bytes = match format {
                "jsonl" => py.detach(|| rows.jsonl_bytes()),
                "csv" => py.detach(|| rows.csv_bytes()),
                "txt" => py.detach(|| rows.txt_bytes()),
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "unknown format {format:?}: jsonl, csv or txt"
                    )))
                }
            };
            Ok(PyBytes::new(py, &bytes))
        })
    }

    /// Rows made from `sitescout.Entry` objects (any of their fields), as `entries()` gives
    /// them back.
    #[staticmethod]
    fn from_entries(entries: &Bound<'_, PyAny>) -> PyResult<Batch> {
        super::guard("Batch.from_entries", || {
            let mut rows = Vec::new();
            for item in entries.try_iter()? {
                rows.push(row_of(&item?)?);
            }
            Ok(Batch { rows: Rows(rows) })
        })
    }

    /// The rows as `sitescout.Entry` objects.
    fn entries<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        super::guard("Batch.entries", || {
            let models = Models::get(py)?;
            let entry_class = models.entry.bind(py);
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
                let alternates = tuple_of(&empty, e.alternates(), |a| {
                    let fields = [
                        PyString::new(py, &a.hreflang).into_any(),
                        PyString::new(py, &a.url).into_any(),
                    ];
                    models.alternate.make(py, fields)
                })?;
                let images = tuple_of(&empty, e.images(), |i| {
                    let fields = [
                        PyString::new(py, &i.loc).into_any(),
                        text(py, i.title.as_deref()),
                        text(py, i.caption.as_deref()),
                    ];
                    models.image.make(py, fields)
                })?;
                let videos = tuple_of(&empty, e.videos(), |v| {
                    let fields = [
                        text(py, v.content_loc.as_deref()),
                        text(py, v.player_loc.as_deref()),
                        text(py, v.thumbnail_loc.as_deref()),
                        text(py, v.title.as_deref()),
                        text(py, v.description.as_deref()),
                    ];
                    models.video.make(py, fields)
                })?;
                let news = match e.news() {
                    None => py.None().into_bound(py),
                    Some(n) => {
                        let fields = [
                            text(py, n.title.as_deref()),
                            text(py, n.publication_date.as_deref()),
                            text(py, n.language.as_deref()),
                            text(py, n.publication_name.as_deref()),
                        ];
                        models.news.make(py, fields)?
                    }
                };
                let args = (
                    &e.url,
                    e.lastmod.as_deref(),
                    e.priority,
                    e.changefreq.as_deref(),
                    alternates,
                    images,
                    videos,
                    news,
                    sm,
                    row.depth,
                    row.hreflang(),
                    row.alternate_of(),
                );
                if row.source == Source::Sitemap && row.extra.is_none() {
                    out.push(entry_class.call1(args)?);
                    continue;
                }
                let kwargs = PyDict::new(py);
                kwargs.set_item("source", row.source.as_str())?;
                if let Some(extra) = &row.extra {
                    kwargs.set_item("title", &extra.title)?;
                    kwargs.set_item("canonical", &extra.canonical)?;
                    kwargs.set_item("md_url", &extra.md_url)?;
                    let sources = extra.sources.iter().map(|s| s.as_str());
                    kwargs.set_item("sources", PyTuple::new(py, sources)?)?;
                }
                out.push(entry_class.call(args, Some(&kwargs))?);
            }
            PyList::new(py, out)
        })
    }
}

/// One object per item as a tuple; the shared empty tuple when there are none.
fn tuple_of<'py, T>(
    empty: &Bound<'py, PyTuple>,
    items: &[T],
    make: impl Fn(&T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
    if items.is_empty() {
        return Ok(empty.clone());
    }
    let made = items.iter().map(make).collect::<PyResult<Vec<_>>>()?;
    PyTuple::new(empty.py(), made)
}

/// The page links of an llms.txt, by page URL and markdown URL (`--source all`).
#[pyclass(module = "sitescout._core")]
#[derive(Default)]
pub struct LlmsIndex {
    inner: batch::LlmsIndex,
}

#[pymethods]
impl LlmsIndex {
    #[new]
    fn new() -> PyResult<Self> {
        super::guard("LlmsIndex.new", || Ok(LlmsIndex::default()))
    }

    #[pyo3(signature = (url, md_url=None, title=None))]
    fn add(&mut self, url: String, md_url: Option<String>, title: Option<String>) -> PyResult<()> {
        super::guard("LlmsIndex.add", || {
            self.inner.add(url, md_url, title);
            Ok(())
        })
    }

    fn __contains__(&self, url: &str) -> PyResult<bool> {
        super::guard("LlmsIndex.__contains__", || Ok(self.inner.contains(url)))
    }

    fn mark_listed(&mut self, url: &str) -> PyResult<()> {
        super::guard("LlmsIndex.mark_listed", || {
            self.inner.mark_listed(url);
            Ok(())
        })
    }

    fn is_listed(&self, url: &str) -> PyResult<bool> {
        super::guard("LlmsIndex.is_listed", || Ok(self.inner.is_listed(url)))
    }

    /// Mark every row's sources; rows the index lists get its markdown URL and title.
    fn mark(&mut self, mut batch: PyRefMut<'_, Batch>) -> PyResult<()> {
        super::guard("LlmsIndex.mark", || {
            self.inner.mark(&mut batch.rows);
            Ok(())
        })
    }
}

fn source_of(name: &str) -> PyResult<Source> {
    Source::parse(name).ok_or_else(|| PyValueError::new_err(format!("unknown source {name:?}")))
}

fn row_of(obj: &Bound<'_, PyAny>) -> PyResult<Row> {
    let get = |name: &str| obj.getattr(name);
    let alternates = get("alternates")?
        .try_iter()?
        .map(|a| {
            let a = a?;
            Ok(entry::Alternate {
                hreflang: a.getattr("hreflang")?.extract()?,
                url: a.getattr("url")?.extract()?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let images = get("images")?
        .try_iter()?
        .map(|i| {
            let i = i?;
            Ok(entry::Image {
                loc: i.getattr("loc")?.extract()?,
                title: i.getattr("title")?.extract()?,
                caption: i.getattr("caption")?.extract()?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let videos = get("videos")?
        .try_iter()?
        .map(|v| {
            let v = v?;
            Ok(entry::Video {
                content_loc: v.getattr("content_loc")?.extract()?,
                player_loc: v.getattr("player_loc")?.extract()?,
                thumbnail_loc: v.getattr("thumbnail_loc")?.extract()?,
                title: v.getattr("title")?.extract()?,
                description: v.getattr("description")?.extract()?,
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    let news = get("news")?;
    let news = if news.is_none() {
        None
    } else {
        Some(entry::News {
            title: news.getattr("title")?.extract()?,
            publication_date: news.getattr("publication_date")?.extract()?,
            language: news.getattr("language")?.extract()?,
            publication_name: news.getattr("publication_name")?.extract()?,
        })
    };
    let changefreq: Option<String> = get("changefreq")?.extract()?;
    let sources = get("sources")?
        .try_iter()?
        .map(|s| source_of(&s?.extract::<String>()?))
        .collect::<PyResult<Vec<_>>>()?;
    let extra = Extra {
        title: get("title")?.extract()?,
        canonical: get("canonical")?.extract()?,
        md_url: get("md_url")?.extract()?,
        sources,
    };
    let sitemap: String = get("sitemap")?.extract()?;
    let lastmod: Option<String> = get("lastmod")?.extract()?;
    let hreflang: Option<String> = get("hreflang")?.extract()?;
    Ok(Row {
        entry: entry::Entry {
            url: get("url")?.extract()?,
            lastmod: lastmod.map(entry::Short::from),
            priority: get("priority")?.extract()?,
            changefreq: changefreq.map(std::borrow::Cow::Owned),
            more: entry::boxed_if_any(entry::More {
                alternates,
                images,
                videos,
                news,
            }),
        },
        sitemap: Arc::from(sitemap),
        depth: get("depth")?.extract()?,
        source: source_of(&get("source")?.extract::<String>()?)?,
        alternate: entry::boxed_if_any(batch::AlternateOf {
            hreflang: hreflang.map(entry::Short::from),
            page: get("alternate_of")?.extract()?,
        }),
        extra: entry::boxed_if_any(extra),
    })
}

fn bad_key() -> PyErr {
    PyValueError::new_err("a URL hash key is 1 to 64 bytes")
}

/// 8 bytes of keyed BLAKE2b per URL, in order: what
/// `hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8, key=key)` gives. The
/// same in every process that holds `key`, unlike the seen-set's hash.
#[pyfunction]
fn url_hashes<'py>(
    py: Python<'py>,
    urls: Vec<Bound<'py, PyString>>,
    key: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    super::guard("url_hashes", || {
        let texts = texts_of(&urls)?;
        let hashes = hashes::url_hashes(texts.iter().map(|t| t.as_ref()), key);
        Ok(PyBytes::new(py, &hashes.map_err(|_| bad_key())?))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(url_hashes, m)?)?;
    m.add_class::<Batch>()?;
    m.add_class::<LlmsIndex>()?;
    m.add_function(wrap_pyfunction!(register_models, m)?)
}
