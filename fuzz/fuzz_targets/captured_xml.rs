//! Fuzzes the gator-xml captured reader (the counter key map gatord sends for `<request type="captured"/>`)
//! with arbitrary bytes from libFuzzer; documents that parse are resolved against a small events document.
#![no_main]

use gator_xml::{Captured, Events};
use libfuzzer_sys::fuzz_target;

const EVENTS: &str = r#"<events>
<counter_set name="A_cnt" count="6"/>
<category name="A" counter_set="A_cnt"><event counter="A_ccnt" name="Cycles"/><event event="0x8" name="Inst"/></category>
<category name="Linux"><event counter="Linux_meminfo_memfree" name="Free" class="absolute" units="B"/></category>
</events>"#;

fuzz_target!(|data: &[u8]| {
    let Ok(captured) = Captured::from_bytes(data) else {
        return;
    };
    let events = Events::parse(EVENTS).expect("fixed events document");
    for counter in &captured.counters {
        let by_key = captured.counter_by_key(counter.key).expect("key present");
        assert_eq!(by_key.key, counter.key);
        let _ = captured.describe(counter.key, &events);
        let _ = events.resolve_captured(counter);
    }
});
