//! Fuzzes HWCPipe's JSON counter selection (`hwcpipe::CounterSelection::from_json`) with arbitrary
//! bytes: it must never panic, and whatever it accepts must survive a round trip through
//! `to_json`. Seeds come from the fuzzer alone.
#![no_main]

use hwcpipe::CounterSelection;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(selection) = CounterSelection::from_json(text) {
        let again = CounterSelection::from_json(&selection.to_json())
            .expect("a selection's own JSON parses");
        assert_eq!(again, selection);
    }
});
