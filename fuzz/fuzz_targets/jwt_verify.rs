//! Verifying a dashboard token never panics, and no input the fuzzer makes without the
//! secret is ever accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offer_wire::jwt::JwtCodec;

fuzz_target!(|data: &[u8]| {
    let codec = JwtCodec::new(
        b"fuzz-secret-fuzz-secret-fuzz-secret-0123",
        "offer-engine",
        "offer-engine-dashboard",
    );
    if let Ok(token) = std::str::from_utf8(data) {
        assert!(codec.verify(token).is_none(), "forged token accepted: {token:?}");
    }
});
