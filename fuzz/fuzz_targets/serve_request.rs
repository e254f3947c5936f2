//! `lizard serve`'s request parser on any bytes: it answers more-bytes, a route or a refusal, never panics,
//! and once a head is complete, bytes after it change nothing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lizard_serve::http::parse;

fuzz_target!(|data: &[u8]| {
    let whole = parse(data);
    if let Ok(Some(route)) = whole {
        let mut longer = data.to_vec();
        longer.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(parse(&longer), Ok(Some(route)));
    }
});
