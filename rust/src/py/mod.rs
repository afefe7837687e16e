//! The PyO3 glue: `sitescout._core`. Panics inside are caught by PyO3 at the boundary and
//! surface as `pyo3_runtime.PanicException`, which the Python side records per document.

use pyo3::prelude::*;

pub mod batch;
mod scan;
pub mod seen;
mod urls;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    batch::register(m)?;
    scan::register(m)?;
    seen::register(m)?;
    urls::register(m)?;
    Ok(())
}
