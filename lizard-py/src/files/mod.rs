//! Every file lizard reads or writes, opened from Python: a Streamline local capture ([`apc`]), a saved
//! trace ring ([`ring`]), an STM dump ([`stm`]) and a gatord events XML file ([`events`]). Each reader is a
//! module-level function of `_native`; what it reads comes back as frozen objects holding NumPy arrays and
//! plain Python data. A file that cannot be read raises `OSError`; one whose contents are not what its
//! format says raises `FormatError`.

use pyo3::prelude::*;

mod apc;
mod events;
mod ring;
mod stm;
mod stm_args;

/// Adds the file readers and their classes to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    apc::register(module)?;
    ring::register(module)?;
    stm::register(module)?;
    events::register(module)?;
    Ok(())
}
