//! `Listing` of an engine over the simulated gatord (its default counters): every counter offered, in id
//! order, as `lizard list --format json` writes them.

use std::time::Duration;

use gatord_sim::{self as sim, SimConfig};
use lizard_core::{Config, Lizard, Timeouts};
use lizard_render::Listing;

/// An engine configuration for the simulated daemon, with short deadlines.
fn config_for(daemon: &sim::SimHandle) -> Config {
    let mut config = Config::gatord_only(daemon.address());
    config.timeouts = Timeouts::new(Duration::from_secs(2), Duration::from_secs(2));
    config.stop_timeout = Duration::from_secs(2);
    config
}

#[test]
fn a_listing_holds_every_counter_in_id_order() {
    let daemon = sim::start(SimConfig::default()).unwrap();
    let lizard = Lizard::configure(config_for(&daemon)).unwrap();
    let listing = Listing::of(&lizard).unwrap();
    assert_eq!(listing.counters.len(), lizard.counters().len());
    assert!(!listing.counters.is_empty());
    for (listed, counter) in listing.counters.iter().zip(lizard.counters()) {
        assert_eq!(listed.info.id, counter.id);
        assert_eq!(listed.unavailable, lizard.unavailable(counter.id).unwrap());
    }
    // A counter's facts are the entry's own members; `unavailable` is null or its text.
    let json = serde_json::to_value(&listing).unwrap();
    let first = &json["counters"][0];
    assert_eq!(first["id"], listing.counters[0].info.id);
    assert!(first["unavailable"].is_null() || first["unavailable"].is_string());
    assert!(json["unreadable"].is_array());
}
