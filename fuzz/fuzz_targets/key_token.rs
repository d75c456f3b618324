//! The key token parser never panics; whatever it accepts is shaped like a key, and a key it
//! generates always parses back to its kind.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offer_wire::key_token::{KeyKind, generate, hash, looks_like_key, parse};

fuzz_target!(|data: &[u8]| {
    let Ok(token) = std::str::from_utf8(data) else {
        return;
    };
    if let Some(kind) = parse(token, "ofr") {
        assert!(looks_like_key(token), "parsed but not key-shaped: {token:?}");
        assert_eq!(hash(token).len(), 64);
        let _: KeyKind = kind;
    }
    // One flipped character of a real key fails its checksum.
    let key = generate("ofr", KeyKind::Authoring);
    assert_eq!(parse(&key, "ofr"), Some(KeyKind::Authoring));
    if let Some(&b) = data.first() {
        let mut bytes = key.clone().into_bytes();
        let at = usize::from(b) % bytes.len();
        let replacement = if bytes[at] == b'A' { b'B' } else { b'A' };
        bytes[at] = replacement;
        if let Ok(typo) = String::from_utf8(bytes)
            && typo != key
        {
            assert_eq!(parse(&typo, "ofr"), None, "a one-character typo passed: {typo}");
        }
    }
});
