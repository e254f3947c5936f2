//! `Listing` of an engine over the simulated gatord (its default counters): every counter offered, in id
//! order, as `lizard list --format json` writes them.

use gatord_sim::{self as sim, SimConfig};
use lizard_core::{Config, Lizard};
use lizard_render::Listing;

#[test]
fn a_listing_holds_every_counter_in_id_order() {
    let daemon = sim::start(SimConfig::default()).unwrap();
    let lizard = Lizard::configure(Config::gatord_only(daemon.address())).unwrap();
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
