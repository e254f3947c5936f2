//! Fuzzes the text files `lizard stm-report` reads, with arbitrary text: the `.dcm` sidecar
//! (`stp_decode::dcm`), which must read back what it writes and either give a layout or name a key; the
//! dictionary, the CP Tracer layout and the span syntax, which must give a value or a typed error; and
//! the frame-boundary search over the bytes of the text. No panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use stp_decode::cptracer::Layout;
use stp_decode::dcm::{Dcm, DcmError};
use stp_decode::dict::Dictionary;
use stp_decode::keystone::{Device, Masters};
use stp_decode::span::SpanSpec;
use stp_decode::tbr::frame_phase;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        let _ = frame_phase(data, 0x40);
        return;
    };
    match Dcm::parse(text) {
        Ok(dcm) => {
            // What it writes reads back the same (unknown keys are not written).
            let again = Dcm::parse(&dcm.to_string()).expect("its own text reads back");
            assert_eq!(again.layout(), dcm.layout());
            if let Err(DcmError::Unsupported { key, value }) = dcm.layout() {
                assert_eq!(dcm.get(key), value);
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let masters = Masters::for_device(Device::K2h);
    if let Ok(dict) = Dictionary::parse(text, &masters) {
        let _ = dict.value_name(0, 0, 0);
    }
    if let Ok(layout) = Layout::parse(text) {
        for field in layout.fields() {
            assert!(field.low <= field.high && field.high < 32);
            let _ = field.get(u32::MAX);
        }
        let _ = (layout.bytes(0xdead_beef), layout.master_id(0xdead_beef));
    }
    let _ = text.parse::<SpanSpec>();
    assert!(frame_phase(data, 0x40) % 4 == 0);
});
