//! One module per subcommand; each has a `run` that returns the process exit status.

pub mod apc_dump;
pub mod capture;
pub mod diff;
pub mod doctor;
pub mod events;
pub mod gatord_sim;
pub mod list;
pub mod report;
pub mod serve;
pub mod stat;
pub mod stm_dump;
pub mod stm_report;
pub mod trace;
