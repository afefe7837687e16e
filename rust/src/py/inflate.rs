use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::inflate;

/// The most one pull gives, whatever it is asked: the buffer it keeps is at most this.
const MAX_PULL: usize = 1 << 20;

/// One zlib-family stream decoded as its bytes arrive (see the module docs of `inflate`):
/// `wbits` 31 is gzip, 15 zlib (or raw deflate when it is not), -15 raw deflate. The
/// interpreter's lock is released while it inflates.
#[pyclass(module = "sitescout._core")]
pub struct Inflater {
    inner: inflate::Inflater,
    /// One output buffer for every pull.
    out: Vec<u8>,
}

#[pymethods]
impl Inflater {
    #[new]
    fn new(wbits: i32) -> PyResult<Self> {
        super::guard("Inflater.new", || match inflate::Kind::from_wbits(wbits) {
            Some(kind) => Ok(Inflater {
                inner: inflate::Inflater::new(kind),
                out: Vec::new(),
            }),
            None => Err(PyValueError::new_err("wbits must be 31, 15 or -15")),
        })
    }

    /// Hand over the next bytes of the body.
    fn push(&mut self, data: &[u8]) -> PyResult<()> {
        super::guard("Inflater.push", || {
            self.inner.push(data);
            Ok(())
        })
    }

    /// At most `max` (and 1 MiB) decoded bytes; empty when it needs more input. Raises ValueError, with
    /// zlib's words, on a corrupt stream.
    fn pull<'py>(&mut self, py: Python<'py>, max: usize) -> PyResult<Bound<'py, PyBytes>> {
        super::guard("Inflater.pull", || {
            let max = max.min(MAX_PULL);
            if self.out.len() < max {
                self.out.resize(max, 0);
            }
            let (inner, out) = (&mut self.inner, &mut self.out[..max]);
            match py.detach(|| inner.pull_into(out)) {
                Ok(n) => Ok(PyBytes::new(py, &self.out[..n])),
                Err(inflate::Corrupt(why)) => Err(PyValueError::new_err(why)),
            }
        })
    }

    /// Input is left undecoded, or output may be: the last pull stopped at its room.
    #[getter]
    fn cut(&self) -> PyResult<bool> {
        super::guard("Inflater.cut", || Ok(self.inner.cut()))
    }

    /// No member is begun and unfinished: a body that stops here was whole.
    #[getter]
    fn ended(&self) -> PyResult<bool> {
        super::guard("Inflater.ended", || Ok(self.inner.ended()))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Inflater>()
}
