//! Fuzzes the gator-xml events reader (whole `<events>` documents and shipped fragment files) with arbitrary
//! bytes from libFuzzer; documents that parse are also walked through every lookup.
#![no_main]

use gator_xml::Events;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(events) = Events::from_bytes(data) else {
        return;
    };
    let index = events.index();
    for (category, event) in events.events() {
        let _ = event.attributes();
        let _ = event.label();
        let name = event.counter.as_deref().unwrap_or(&category.name);
        assert_eq!(
            index
                .resolve(name, event.event)
                .map(|r| r.event as *const _),
            events
                .resolve(name, event.event)
                .map(|r| r.event as *const _)
        );
    }
    for set in &events.counter_sets {
        for slot in set.slot_names().take(64) {
            let _ = events.slot(&slot);
        }
    }
});
