//! The exit status `lizard` passes on for a counted command: the engine's [`shell_status`].

pub use lizard_core::stat::shell_status;
