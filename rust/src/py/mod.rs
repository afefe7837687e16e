//! The PyO3 glue: `sitescout._core`. The scanner's calls catch a panic and record it as the
//! document's error (`Scanner.errors`); the walk goes on.

use pyo3::prelude::*;

pub mod batch;
mod filter;
mod scan;
mod scope;
pub mod seen;
mod urls;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic in the scanner is caught and recorded as that document's error; the library never
    // prints, so the default hook's message to stderr is silenced (this module's own runtime).
    std::panic::set_hook(Box::new(|_| {}));
    batch::register(m)?;
    filter::register(m)?;
    scan::register(m)?;
    scope::register(m)?;
    seen::register(m)?;
    urls::register(m)?;
    Ok(())
}
