use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use pyo3::exceptions::PyUnicodeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::urls;

/// The host rule's Unicode half, done by CPython itself so that its Unicode tables decide:
/// `h = host.lower(); h if h.isascii() else h.encode("idna").decode("ascii").lower()`, with a
/// UnicodeError (what the codec raises for a host it cannot encode) meaning "no valid host".
///
/// Any other exception (MemoryError, Ctrl-C's KeyboardInterrupt) is not an answer about the
/// host: it is kept, and the call that used the converter raises it once it returns (`raise`).
///
/// It holds no interpreter token: code that runs with the lock released (the scanner) uses it
/// too, and the lock is taken (back) only for a host the cache does not know.
#[derive(Default)]
pub struct PyIdna {
    error: Option<PyErr>,
}

/// Hosts seen lately and their ASCII forms. The codec costs ~30 us a call, and a sitemap that
/// spells its internationalized host in Unicode spells it so in every one of its URLs.
const CACHE_LIMIT: usize = 256;

thread_local! {
    static CACHE: RefCell<HashMap<String, Option<String>>> = RefCell::new(HashMap::new());
}

impl PyIdna {
    /// Raise what the codec raised that was not a UnicodeError, if anything.
    pub fn raise(self) -> PyResult<()> {
        match self.error {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

impl urls::Idna for PyIdna {
    fn to_ascii(&mut self, host: &str) -> Option<String> {
        cached(host).unwrap_or_else(|| Python::attach(|py| ask(py, host, &mut self.error)))
    }
}

fn convert(py: Python<'_>, host: &str) -> PyResult<String> {
    let lowered = PyString::new(py, host).call_method0("lower")?;
    let ascii: bool = lowered.call_method0("isascii")?.extract()?;
    if ascii {
        return lowered.extract();
    }
    lowered
        .call_method1("encode", ("idna",))?
        .call_method1("decode", ("ascii",))?
        .call_method0("lower")?
        .extract()
}

/// The cache's answer for `host`, when it has one.
fn cached(host: &str) -> Option<Option<String>> {
    CACHE.with_borrow(|cache| cache.get(host).cloned())
}

/// Ask the interpreter, and remember its answer; an error that is no answer about the host
/// goes to `error` (the first one is kept) and is not remembered.
fn ask(py: Python<'_>, host: &str, error: &mut Option<PyErr>) -> Option<String> {
    let converted = match convert(py, host) {
        Ok(ascii) => Some(ascii),
        Err(err) if err.is_instance_of::<PyUnicodeError>(py) => None,
        Err(err) => {
            error.get_or_insert(err);
            return None;
        }
    };
    CACHE.with_borrow_mut(|cache| {
        if cache.len() >= CACHE_LIMIT {
            cache.clear(); // a walk has few hosts: a full cache means junk, start over
        }
        cache.insert(host.to_owned(), converted.clone());
    });
    converted
}

// A str with lone surrogates has no UTF-8 form. The rules treat it as Python does (the
// reference percent-encodes surrogates with `surrogatepass`), so such a str crosses as its
// `surrogatepass` bytes and comes back the same way; valid text takes the borrowed fast path.

pub(super) fn wtf8(text: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    Ok(encoded.cast::<PyBytes>()?.as_bytes().to_vec())
}

/// Each str's UTF-8 bytes, borrowed where it has them, or its WTF-8 (`surrogatepass`) bytes.
pub(super) fn texts_of<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<Cow<'a, [u8]>>> {
    texts
        .iter()
        .map(|text| match text.to_str() {
            Ok(utf8) => Ok(Cow::Borrowed(utf8.as_bytes())),
            Err(_) => wtf8(text).map(Cow::Owned),
        })
        .collect()
}

pub(super) fn from_wtf8<'py>(py: Python<'py>, bytes: &[u8]) -> PyResult<Bound<'py, PyString>> {
    let decoded = PyBytes::new(py, bytes).call_method1("decode", ("utf-8", "surrogatepass"))?;
    Ok(decoded.cast_into::<PyString>()?)
}

/// Whether `url` is an absolute http(s) URL that normalization leaves as it is.
#[pyfunction]
fn is_clean(url: &Bound<'_, PyString>) -> PyResult<bool> {
    super::guard("is_clean", || {
        Ok({
            // A clean URL is ASCII: text that is not even UTF-8 is not one.
            url.to_str().is_ok_and(urls::is_clean)
        })
    })
}

/// Resolve a raw URL value against the URL of the document it came from.
///
/// Returns the absolute http(s) URL (resolved, not normalized), or None when the value cannot
/// become one. Never raises.
#[pyfunction]
fn resolve_url<'py>(
    raw: &Bound<'py, PyString>,
    base: &Bound<'py, PyString>,
) -> PyResult<Option<Bound<'py, PyString>>> {
    super::guard("resolve_url", || {
        let py = raw.py();
        let mut idna = PyIdna::default();
        let resolved = if let (Ok(text), Ok(base_text)) = (raw.to_str(), base.to_str()) {
            if urls::is_clean(text) {
                return Ok(Some(raw.clone())); // nothing to strip or resolve: the value itself
            }
            urls::resolve(text, base_text, &mut idna).map(|url| PyString::new(py, &url))
        } else {
            urls::resolve_wtf8(&wtf8(raw)?, &wtf8(base)?, &mut idna)
                .map(|url| from_wtf8(py, &url))
                .transpose()?
        };
        idna.raise()?;
        Ok(resolved)
    })
}

/// Normalize one URL: lowercase scheme and host (IDNA to punycode), no default port, no
/// userinfo, unreserved escapes decoded and invalid characters escaped, dot segments removed,
/// tracking parameters and empty query parts dropped. Idempotent; never raises (a value that is
/// not an http(s) URL comes back unchanged).
// A clean URL comes back as the very object passed in: no copy on the common path.
#[pyfunction]
fn normalize_url<'py>(url: Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
    super::guard("normalize_url", || {
        let py = url.py();
        let mut idna = PyIdna::default();
        let normalized = if let Ok(text) = url.to_str() {
            match urls::normalize(text, &mut idna) {
                Cow::Borrowed(_) => url.clone(),
                Cow::Owned(owned) => PyString::new(py, &owned),
            }
        } else {
            match urls::normalize_wtf8(&wtf8(&url)?, &mut idna) {
                Cow::Borrowed(_) => url.clone(),
                Cow::Owned(owned) => from_wtf8(py, &owned)?,
            }
        };
        idna.raise()?;
        Ok(normalized)
    })
}

/// What the sitemap parser makes of one `<loc>` value; None where it records a malformed one.
#[pyfunction]
fn resolve_loc<'py>(
    raw: &Bound<'py, PyString>,
    base: &Bound<'py, PyString>,
    normalize: bool,
) -> PyResult<Option<Bound<'py, PyString>>> {
    super::guard("resolve_loc", || {
        let py = raw.py();
        let mut idna = PyIdna::default();
        let resolved = if let (Ok(text), Ok(base_text)) = (raw.to_str(), base.to_str()) {
            match urls::resolve_loc_cow(
                text,
                base_text,
                normalize,
                &mut idna,
                &mut urls::CleanCheck::default(),
            ) {
                // Clean and nothing stripped: the value itself, no new object.
                Some(Cow::Borrowed(url)) if url.len() == text.len() => Some(raw.clone()),
                url => url.map(|url| PyString::new(py, &url)),
            }
        } else {
            urls::resolve_loc_wtf8(&wtf8(raw)?, &wtf8(base)?, normalize, &mut idna)
                .map(|url| from_wtf8(py, &url))
                .transpose()?
        };
        idna.raise()?;
        Ok(resolved)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(is_clean, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_url, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_url, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_loc, m)?)?;
    Ok(())
}
