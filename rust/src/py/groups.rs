use pyo3::prelude::*;
use pyo3::types::PyString;

use super::scope::bytes_of;
use super::urls::from_wtf8;
use crate::groups;

/// The path group of one URL (§9): `/seg/*` of its first `depth` non-empty path segments, `/`
/// when it has none, None when it is not an absolute http(s) URL urlsplit can read. Never
/// raises.
#[pyfunction]
#[pyo3(signature = (url, depth = 1))]
fn group_key<'py>(
    url: &Bound<'py, PyString>,
    depth: usize,
) -> PyResult<Option<Bound<'py, PyString>>> {
    super::guard("group_key", || {
        let py = url.py();
        match groups::group_key(&bytes_of(url)?, depth) {
            None => Ok(None),
            Some(key) => match std::str::from_utf8(&key) {
                Ok(text) => Ok(Some(PyString::new(py, text))),
                Err(_) => from_wtf8(py, &key).map(Some),
            },
        }
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(group_key, m)?)
}
