use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::PyString;

use super::batch::Batch;
use super::urls::PyIdna;
use crate::scan;

/// One sitemap document fed in chunks (`sitescout._core.Scanner`).
///
/// A panic inside the scanner is caught here and recorded as the document's error: the scanner
/// then ignores further input, keeps what it produced and the kind, and the walk goes on.
#[pyclass(module = "sitescout._core")]
pub struct Scanner {
    inner: scan::Scanner,
    url: String,
    depth: u32,
    failure: Option<String>,
}

impl Scanner {
    /// Run a call that feeds the scanner (`entry`): a panic is the document's recorded error.
    fn guarded(&mut self, entry: &str, f: impl FnOnce(&mut scan::Scanner)) {
        if self.failure.is_some() {
            return;
        }
        let inner = &mut self.inner;
        let result = super::quietly(|| {
            catch_unwind(AssertUnwindSafe(|| {
                super::injected(entry);
                f(inner)
            }))
        });
        if let Err(payload) = result {
            let what = super::panic_message(payload.as_ref());
            self.failure = Some(format!("internal error in the sitemap scanner: {what}"));
        }
    }
}

#[pymethods]
impl Scanner {
    #[new]
    #[pyo3(signature = (url, depth = 1, charset = None))]
    fn new(url: &str, depth: u32, charset: Option<&str>) -> PyResult<Self> {
        super::guard("Scanner.new", || {
            Ok({
                Scanner {
                    inner: scan::Scanner::with_charset(url, charset),
                    url: url.to_owned(),
                    depth,
                    failure: None,
                }
            })
        })
    }

    /// Raises what the host codec raised that is not about a host (Ctrl-C, MemoryError).
    /// The interpreter's lock is released while it scans.
    fn feed(&mut self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        let mut idna = PyIdna::default();
        py.detach(|| self.guarded("Scanner.feed", |s| s.feed(data, &mut idna)));
        idna.raise()
    }

    /// The body was cut short (size cap, timeout, reset): call before `close()`.
    fn note_truncated(&mut self) {
        self.guarded("Scanner.note_truncated", |s| s.note_truncated());
    }

    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        let mut idna = PyIdna::default();
        py.detach(|| self.guarded("Scanner.close", |s| s.close(&mut idna)));
        idna.raise()
    }

    #[getter]
    fn kind(&self) -> PyResult<Option<&'static str>> {
        super::guard("Scanner.kind", || {
            Ok(self.inner.kind().map(scan::Kind::as_str))
        })
    }

    #[getter]
    fn notes(&self) -> PyResult<Vec<String>> {
        super::guard("Scanner.notes", || Ok(self.inner.notes().to_vec()))
    }

    #[getter]
    fn errors(&self) -> PyResult<Vec<String>> {
        super::guard("Scanner.errors", || {
            Ok({
                let mut errors = self.inner.errors().to_vec();
                errors.extend(self.failure.iter().cloned());
                errors
            })
        })
    }

    #[getter]
    fn damaged(&self) -> PyResult<bool> {
        super::guard("Scanner.damaged", || {
            Ok(self.inner.damaged() || self.failure.is_some())
        })
    }

    /// `(url, lastmod)` of the child sitemaps produced since the last call that have a
    /// `<lastmod>` (ISO 8601 as `normalize_lastmod` gives it).
    fn take_sitemap_lastmods(&mut self) -> PyResult<Vec<(String, String)>> {
        super::guard("Scanner.take_sitemap_lastmods", || {
            Ok(self.inner.take_sitemap_lastmods())
        })
    }

    /// Entries (as a batch), child sitemap URLs and malformed values `(raw, reason)` produced
    /// since the last call.
    #[allow(clippy::type_complexity)]
    fn take(&mut self) -> PyResult<(Batch, Vec<String>, Vec<(String, &'static str)>)> {
        super::guard("Scanner.take", || {
            Ok({
                let entries = self.inner.take_entries();
                let sitemaps = self.inner.take_sitemaps();
                let malformed = self
                    .inner
                    .take_malformed()
                    .into_iter()
                    .map(|m| (m.raw, m.reason))
                    .collect();
                (
                    Batch::from_document(entries, &self.url, self.depth),
                    sitemaps,
                    malformed,
                )
            })
        })
    }
}

/// W3C datetime forms → ISO 8601 (`Z` becomes `+00:00`, seconds filled in); the value as it is
/// otherwise; None when blank.
#[pyfunction]
fn normalize_lastmod(raw: &str) -> PyResult<Option<String>> {
    super::guard("normalize_lastmod", || {
        Ok(crate::scan::values::normalize_lastmod(raw))
    })
}

/// An RSS `pubDate` (RFC 822) as ISO 8601, read as `email.utils.parsedate_to_datetime` reads
/// it; the W3C forms as `normalize_lastmod`; the stripped value otherwise; None when blank.
///
/// A str holding lone surrogates fails as `normalize_lastmod` does (UnicodeEncodeError) unless
/// it reads as a date: a surrogate is nothing a date is made of, like U+FFFD in its place.
#[pyfunction]
fn normalize_rfc822(raw: &Bound<'_, PyString>) -> PyResult<Option<String>> {
    super::guard("normalize_rfc822", || match raw.to_str() {
        Ok(text) => Ok(crate::scan::normalize_rfc822(text)),
        Err(err) => {
            let lossy = raw.to_string_lossy();
            match crate::scan::rfc822::parsedate_isoformat(crate::scan::py_strip(&lossy)) {
                Some(date) => Ok(Some(date)),
                None => Err(err),
            }
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Scanner>()?;
    m.add_function(wrap_pyfunction!(normalize_lastmod, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_rfc822, m)?)
}
