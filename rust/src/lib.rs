//! sitescout's native core: everything that runs once per byte or once per URL.
//!
//! The pure modules (`scan`, `urls`, `scope`, `seen`, `inflate`, `encode`) hold no Python and forbid
//! `unsafe`; `py` is the PyO3 glue and the only place that touches the interpreter.

pub mod batch;
pub mod columns;
pub mod entry;
pub mod filter;
pub mod groups;
pub mod hashes;
pub mod inflate;
pub mod report;
pub mod scan;
pub mod scope;
pub mod seen;
pub mod urls;

#[cfg(feature = "python")]
mod py;
