//! Fuzzes the gator-xml configuration, session and request readers with arbitrary bytes from libFuzzer, and
//! checks that every document that reads also survives a write and read back unchanged.
#![no_main]

use gator_xml::{Configurations, Request, Session};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(mut conf) = Configurations::from_bytes(data) {
        conf.other.clear();
        assert_eq!(
            Configurations::parse(&conf.to_xml()).expect("written configuration reads"),
            conf
        );
    }
    if let Ok(mut session) = Session::from_bytes(data) {
        session.other.clear();
        assert_eq!(
            Session::parse(&session.to_xml()).expect("written session reads"),
            session
        );
    }
    if let Ok(request) = Request::from_bytes(data) {
        assert_eq!(
            Request::parse(&request.to_xml()).expect("written request reads"),
            request
        );
    }
});
