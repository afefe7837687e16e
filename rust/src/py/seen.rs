use pyo3::prelude::*;

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
    fn new(capacity: usize) -> Self {
        SeenSet {
            inner: seen::SeenSet::with_capacity(capacity),
        }
    }

    /// Insert `key`; True when it was not there before.
    fn add(&mut self, key: &str) -> bool {
        self.inner.add(key)
    }

    fn __contains__(&self, key: &str) -> bool {
        self.inner.contains(key)
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.nbytes()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SeenSet>()
}
