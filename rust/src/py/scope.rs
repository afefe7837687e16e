use pyo3::prelude::*;
use pyo3::types::PyString;

use super::urls::{from_wtf8, wtf8};
use crate::scope;

/// `str.lower()` by CPython itself, so that its Unicode tables decide (text that is not ASCII).
pub struct PyLower<'py> {
    pub py: Python<'py>,
}

impl scope::Lower for PyLower<'_> {
    fn lower(&mut self, text: &[u8]) -> Vec<u8> {
        let lowered = from_wtf8(self.py, text)
            .and_then(|s| s.call_method0("lower"))
            .and_then(|s| wtf8(s.cast::<PyString>()?));
        // Decoding what `wtf8` encoded and lowering a str cannot fail.
        lowered.unwrap_or_else(|_| text.to_vec())
    }
}

/// The str's text as bytes: UTF-8, or its `surrogatepass` bytes when it has lone surrogates.
pub(super) fn bytes_of(text: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    match text.to_str() {
        Ok(s) => Ok(s.as_bytes().to_vec()),
        Err(_) => wtf8(text),
    }
}

/// Same-site identity of a URL (§8): (host without trailing dots and one leading `www.`,
/// lowercase; port unless it is the scheme's default). Any string has one; never raises.
#[pyfunction]
fn site_key<'py>(
    url: &Bound<'py, PyString>,
) -> PyResult<(Bound<'py, PyString>, Bound<'py, PyString>)> {
    super::guard("site_key", || {
        let py = url.py();
        let (host, port) = scope::site_key(&bytes_of(url)?, &mut PyLower { py });
        let text = |b: &[u8]| match std::str::from_utf8(b) {
            Ok(s) => Ok(PyString::new(py, s)),
            Err(_) => from_wtf8(py, b),
        };
        Ok((text(&host)?, text(&port)?))
    })
}

/// Whether a page URL (or a bare path) lies under `prefix`, a whole segment at a time:
/// `/en-us/docs/` covers `/en-us/docs`, `/en-us/docs/` and `/en-us/docs/x`, not `/en-us/docsx`.
/// Path case counts; a URL urlsplit cannot read has the empty path. Never raises.
#[pyfunction]
fn under_prefix(url: &Bound<'_, PyString>, prefix: &Bound<'_, PyString>) -> PyResult<bool> {
    super::guard("under_prefix", || {
        Ok(scope::under_prefix(&bytes_of(url)?, &bytes_of(prefix)?))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(site_key, m)?)?;
    m.add_function(wrap_pyfunction!(under_prefix, m)?)
}
