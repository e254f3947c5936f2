//! liblizard.so: the Lizard C API (LoadApi and the LizardApi table) over lizard-core.
//!
//! See `README.md` beside this crate for an overview and an example.
#![deny(missing_docs)]

