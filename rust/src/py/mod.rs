//! The PyO3 glue: `sitescout._core`. The scanner's calls catch a panic and record it as the
//! document's error (`Scanner.errors`); the walk goes on.

use std::cell::Cell;
use std::sync::Once;

use pyo3::prelude::*;

pub mod batch;
mod filter;
mod groups;
mod scan;
mod scope;
pub mod seen;
mod urls;

thread_local! {
    /// Set while a call that catches its own panics runs on this thread.
    static CAUGHT_HERE: Cell<bool> = const { Cell::new(false) };
}

/// Run `f`, whose panics the caller catches and records: their message is not printed (the
/// library never prints). Panics anywhere else, in this module or any other extension, still
/// reach the hook that was installed before, as if this module were not loaded.
pub(crate) fn quietly<T>(f: impl FnOnce() -> T) -> T {
    static CHAIN: Once = Once::new();
    CHAIN.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CAUGHT_HERE.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let before = CAUGHT_HERE.with(|c| c.replace(true));
    let result = f();
    CAUGHT_HERE.with(|c| c.set(before));
    result
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    batch::register(m)?;
    filter::register(m)?;
    groups::register(m)?;
    scan::register(m)?;
    scope::register(m)?;
    seen::register(m)?;
    urls::register(m)?;
    Ok(())
}
