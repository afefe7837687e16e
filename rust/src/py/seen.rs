use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::seen;

/// The walk's seen-set: a 64-bit keyed hash per URL (see the module docs of `seen`).
#[pyclass(module = "sitescout._core")]
pub struct SeenSet {
    pub inner: seen::SeenSet,
}

#[pymethods]
impl SeenSet {
    #[new]
    #[pyo3(signature = (capacity = 16384))]
    fn new(capacity: usize) -> PyResult<Self> {
        super::guard("SeenSet.new", || {
            Ok({
                SeenSet {
                    inner: seen::SeenSet::with_capacity(capacity),
                }
            })
        })
    }

    /// Insert `key`; True when it was not there before.
    fn add(&mut self, key: &str) -> PyResult<bool> {
        super::guard("SeenSet.add", || Ok(self.inner.add(key)))
    }

    /// Insert 64-bit hashes given as little-endian bytes (8 per hash, computed elsewhere), only
    /// those with `hash % slices == slice` (one slice of the hash space at a time bounds the
    /// set's size); returns a byte per hash: 1 new, 0 there already, 2 in another slice.
    #[pyo3(signature = (data, slices = 1, slice = 0))]
    fn add_hashes<'py>(
        &mut self,
        py: Python<'py>,
        data: &[u8],
        slices: u64,
        slice: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        super::guard("SeenSet.add_hashes", || {
            if !data.len().is_multiple_of(8) || slices == 0 || slice >= slices {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "hashes must be 8 bytes each, and slice less than slices",
                ));
            }
            let marks: Vec<u8> = data
                .chunks_exact(8)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(c);
                    let h = u64::from_le_bytes(b);
                    if h % slices != slice {
                        2
                    } else {
                        u8::from(self.inner.add_hash(h))
                    }
                })
                .collect();
            Ok(PyBytes::new(py, &marks))
        })
    }

    fn __contains__(&self, key: &str) -> PyResult<bool> {
        super::guard("SeenSet.__contains__", || Ok(self.inner.contains(key)))
    }

    fn __len__(&self) -> PyResult<usize> {
        super::guard("SeenSet.__len__", || Ok(self.inner.len()))
    }

    #[getter]
    fn nbytes(&self) -> PyResult<usize> {
        super::guard("SeenSet.nbytes", || Ok(self.inner.nbytes()))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SeenSet>()
}
