//! GPU device memory through the CUDA driver API (feature `cuda`): the server's copier ([`copier`]) and the
//! client's pointer lookup ([`exports`]), over the run-time loaded driver ([`driver`]).

pub(crate) mod copier;
pub(crate) mod driver;
pub(crate) mod exports;
