//! The preview renderer, from any template that parses to PNG bytes or a refusal, never a
//! panic, an abort or a render past its budget: each input is parsed and rendered at a
//! tenth of a phone's size under a small budget, so the fuzzer reaches many templates a
//! second while the evaluation, layout and painting limits are all in play.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use offer_domain::template::parse;
use offer_preview::testing::{gems, spring_sale_bindings};
use offer_preview::{Budget, RenderError, Screen, render};

/// A phone's logical size (411 x 731) at a tenth of its device pixel ratio.
const SCREEN: Screen = Screen {
    width: 108,
    height: 192,
    scale: 0.2625,
};

fuzz_target!(|data: &[u8]| {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(tree) = parse(src) else {
        return;
    };
    let budget = Budget {
        max_eval_steps: 20_000,
        max_glyphs: 2_000,
        max_layout_nodes: 2_000,
        max_memory_bytes: 64 * 1024 * 1024,
        time: Duration::from_secs(1),
        ..Budget::default()
    };
    // The bound item's art is no image: the placeholder is drawn.
    match render(
        &tree,
        &spring_sale_bindings(),
        &[gems(Vec::new())],
        SCREEN,
        &budget,
    ) {
        Ok(png) => assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG"),
        Err(RenderError::NoEntryWidget | RenderError::OverBudget(_)) => {}
        Err(e) => panic!("unexpected refusal: {e}"),
    }
});
