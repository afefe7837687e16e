//! The PyO3 glue: `sitescout._core`. Every entry point catches a panic: the scanner's calls
//! record it as the document's error (`Scanner.errors`), the others raise `CoreError` (an
//! ordinary `Exception`, unlike PyO3's `PanicException`), which the walk records as that
//! document's `InternalError`; the walk goes on.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use pyo3::prelude::*;

pub mod batch;
mod filter;
mod groups;
mod inflate;
mod report;
mod scan;
mod scope;
pub mod seen;
mod urls;

thread_local! {
    /// Set while a call that catches its own panics runs on this thread.
    static CAUGHT_HERE: Cell<bool> = const { Cell::new(false) };
    /// The entry point whose next call on this thread panics (`_arm_panic`, for tests).
    static ARMED: RefCell<Option<String>> = const { RefCell::new(None) };
}

pyo3::create_exception!(
    sitescout._core,
    CoreError,
    pyo3::exceptions::PyRuntimeError,
    "A bug in the native core: a panic, caught where Python called in."
);

/// Panic here if a test armed `entry` on this thread (once).
pub(crate) fn injected(entry: &str) {
    let armed = ARMED.with(|a| {
        let mut armed = a.borrow_mut();
        let hit = armed.as_deref() == Some(entry);
        if hit {
            *armed = None;
        }
        hit
    });
    if armed {
        panic!("injected for a test");
    }
}

/// What a panic said.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Run the body of the entry point `entry`: a panic in it becomes `CoreError`, naming it.
pub(crate) fn guard<T>(entry: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    quietly(|| {
        catch_unwind(AssertUnwindSafe(|| {
            injected(entry);
            f()
        }))
    })
    .unwrap_or_else(|payload| {
        Err(CoreError::new_err(format!(
            "internal error in the native core ({entry}): {}",
            panic_message(payload.as_ref())
        )))
    })
}

/// Make the next call of `entry` (`"Batch.to_jsonl"`, `"normalize_url"`…) on this thread panic,
/// as a bug would: for the tests of the boundary. Inert until called.
#[pyfunction]
fn _arm_panic(entry: &str) {
    ARMED.with(|a| *a.borrow_mut() = Some(entry.to_owned()));
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
    m.add("CoreError", m.py().get_type::<CoreError>())?;
    m.add_function(wrap_pyfunction!(_arm_panic, m)?)?;
    batch::register(m)?;
    filter::register(m)?;
    groups::register(m)?;
    inflate::register(m)?;
    report::register(m)?;
    scan::register(m)?;
    scope::register(m)?;
    seen::register(m)?;
    urls::register(m)?;
    Ok(())
}
