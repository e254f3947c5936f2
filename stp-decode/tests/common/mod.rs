//! Helpers shared by the integration tests.

pub mod stm_model;
