use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::batch::Batch;
use crate::filter;

/// Include/exclude patterns (linear-time regexes) and a `since` instant, built once per walk
/// (`sitescout._core.UrlFilter`). A pattern that does not compile is a ValueError whose message
/// starts with `include` or `exclude`, then the pattern and the regex error.
#[pyclass(module = "sitescout._core", frozen)]
pub struct UrlFilter {
    inner: filter::UrlFilter,
}

#[pymethods]
impl UrlFilter {
    #[new]
    #[pyo3(signature = (include = Vec::new(), exclude = Vec::new(), since = None, strict = false))]
    fn new(
        include: Vec<String>,
        exclude: Vec<String>,
        since: Option<&str>,
        strict: bool,
    ) -> PyResult<Self> {
        super::guard("UrlFilter.new", || {
            let since = match since {
                None => None,
                Some(s) => Some(filter::parse_instant(s).ok_or_else(|| {
                    PyValueError::new_err(format!("since: not an ISO 8601 date or time: {s:?}"))
                })?),
            };
            let inner =
                filter::UrlFilter::new(&include, &exclude, since, strict).map_err(|bad| {
                    let side = if bad.exclude { "exclude" } else { "include" };
                    PyValueError::new_err(format!("{side}: {:?}: {}", bad.pattern, bad.error))
                })?;
            Ok(UrlFilter { inner })
        })
    }

    /// Whether the filter can drop anything at all.
    #[getter]
    fn active(&self) -> PyResult<bool> {
        super::guard("UrlFilter.active", || Ok(self.inner.active()))
    }

    fn keeps_url(&self, url: &str) -> PyResult<bool> {
        super::guard("UrlFilter.keeps_url", || Ok(self.inner.keeps_url(url)))
    }

    fn keeps_lastmod(&self, lastmod: Option<&str>) -> PyResult<bool> {
        super::guard("UrlFilter.keeps_lastmod", || {
            Ok(self.inner.keeps_lastmod(lastmod))
        })
    }

    /// Keep the rows of `batch` this filter keeps (by URL, and by lastmod when `dated`):
    /// how many went.
    #[pyo3(signature = (batch, dated = true))]
    fn retain(&self, mut batch: PyRefMut<'_, Batch>, dated: bool) -> PyResult<usize> {
        super::guard("UrlFilter.retain", || {
            Ok(self.inner.retain(&mut batch.rows, dated))
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<UrlFilter>()
}
