use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use super::urls::{from_wtf8, texts_of};
use crate::report;

/// What the report's junk and sign-in rules look for (`sitescout._core.UrlRules`), built once
/// from the rules' words and regexes: see `report_urls`. A regex the core cannot read is a
/// ValueError naming it.
#[pyclass(module = "sitescout._core", frozen)]
pub struct UrlRules {
    pub(super) inner: report::UrlRules,
}

#[pymethods]
impl UrlRules {
    #[new]
    #[pyo3(signature = (junk_words, junk_patterns, copy_pattern, auth_words))]
    fn new(
        junk_words: Vec<String>,
        junk_patterns: Vec<String>,
        copy_pattern: Option<&str>,
        auth_words: Vec<String>,
    ) -> PyResult<Self> {
        super::guard("UrlRules.new", || {
            report::UrlRules::new(&junk_words, &junk_patterns, copy_pattern, &auth_words)
                .map(|inner| UrlRules { inner })
                .map_err(|e| {
                    PyValueError::new_err(format!("a report rule the core cannot read: {e}"))
                })
        })
    }
}

/// A path group at depth 2 as the report counts it: `(group, subgroup, count)`, the group at
/// depth 1 (`/`: the home page, with no subgroup) and the one below it (the group itself for a
/// URL of one segment); `(None, None, count)` for the URLs in no group.
type Place<'py> = (
    Option<Bound<'py, PyString>>,
    Option<Bound<'py, PyString>>,
    usize,
);

/// `report_urls`' answer: places, junk candidates, sign-in candidates.
pub(super) type ReportUrls<'py> = (Vec<Place<'py>>, Bound<'py, PyList>, Bound<'py, PyList>);

fn text<'py>(py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyString>> {
    match std::str::from_utf8(key) {
        Ok(text) => Ok(PyString::new(py, text)),
        Err(_) => from_wtf8(py, key),
    }
}

fn place<'py>(py: Python<'py>, key: &[u8], n: usize) -> PyResult<Place<'py>> {
    if key == b"/" {
        return Ok((Some(text(py, key)?), None, n));
    }
    // `/a/b/*` is below `/a/*`; `/a/*` is its own subgroup.
    let second = memchr::memchr(b'/', &key[1..]).map_or(key.len(), |at| at + 1);
    let subgroup = text(py, key)?;
    let group = if &key[second..] == b"/*" {
        subgroup.clone()
    } else {
        text(py, &[&key[..second], b"/*"].concat())?
    };
    Ok((Some(group), Some(subgroup), n))
}

/// The answer for `urls`, whose Python objects `item` gives back by row.
pub(super) fn answer<'py>(
    py: Python<'py>,
    urls: &[&[u8]],
    rules: &UrlRules,
    item: impl Fn(usize) -> PyResult<Bound<'py, PyString>>,
) -> PyResult<ReportUrls<'py>> {
    // Without the interpreter's lock: a program counting in a thread of its own, and Dask's
    // other threads, keep running meanwhile.
    let counts = py.detach(|| report::report_urls(urls, &rules.inner));
    let mut places = counts
        .places
        .counts
        .iter()
        .map(|(key, n)| place(py, key, *n))
        .collect::<PyResult<Vec<_>>>()?;
    if counts.other > 0 {
        places.push((None, None, counts.other));
    }
    let rows = |rows: &[usize]| -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            rows.iter()
                .map(|&row| item(row))
                .collect::<PyResult<Vec<_>>>()?,
        )
    };
    Ok((places, rows(&counts.junk)?, rows(&counts.auth)?))
}

/// `Batch.report_urls` for a list of URLs (a saved inventory's): `(places, junk, auth)`, the
/// URLs' path groups as `(group, subgroup, count)` in the order they first appear, and the URLs
/// the junk and sign-in rules must judge, in order.
#[pyfunction]
fn report_urls<'py>(
    py: Python<'py>,
    urls: Vec<Bound<'py, PyString>>,
    rules: &UrlRules,
) -> PyResult<ReportUrls<'py>> {
    super::guard("report_urls", || {
        let texts = texts_of(&urls)?;
        let slices: Vec<&[u8]> = texts.iter().map(AsRef::as_ref).collect();
        answer(py, &slices, rules, |row| Ok(urls[row].clone()))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<UrlRules>()?;
    m.add_function(wrap_pyfunction!(report_urls, m)?)
}
