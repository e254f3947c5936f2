//! Helpers shared by the integration tests: engine configurations with short deadlines for the simulator.

#![allow(dead_code)]

use std::time::Duration;

use gatord_sim::SimHandle;
use lizard_core::{Config, Timeouts};

/// A gatord-only configuration for `daemon`, with deadlines short enough for tests.
pub fn config_for(daemon: &SimHandle) -> Config {
    let mut config = Config::gatord_only(daemon.address());
    config.timeouts = Timeouts::new(Duration::from_secs(2), Duration::from_secs(2));
    config.stop_timeout = Duration::from_secs(2);
    config
}

/// The id of the counter whose gatord name is `key`.
pub fn id_of(lizard: &lizard_core::Lizard, key: &str) -> u32 {
    lizard
        .counters()
        .iter()
        .find(|c| c.key == key)
        .unwrap_or_else(|| panic!("no counter {key}"))
        .id
}

/// The bytes of `../shared/data/gatord-9.7.2/<path>` (real gatord 9.7.2 files, see that folder's README), or
/// `None` with a printed skip when the folder is missing.
pub fn gatord_data(path: &str) -> Option<Vec<u8>> {
    test_data::gatord_bytes(path)
}
