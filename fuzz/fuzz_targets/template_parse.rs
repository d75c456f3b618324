//! The template parser and the validator never panic and never overflow the stack; a parse
//! error always points at a line of the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offer_domain::template::catalogue::ItemLookup;
use offer_domain::template::{parse, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(e) = parse(src) {
        let lines = src.lines().count() as u32 + 1;
        assert!((1..=lines).contains(&e.line()), "{e} outside {lines} lines");
    }
    let bindings = serde_json::json!({"items": ["gems_500"], "title": "Sale"});
    let v = validate(src, &bindings, &|_: &str| ItemLookup::Unknown);
    assert_eq!(v.valid, v.blockers.is_empty());
});
