//! The Rust example game (`sdk/examples/game.rs`, built by `cargo test` with the other
//! targets) plays against a spawned engine: init returns at once, ready, an offer for
//! `first_loss`, the purchase's balance and inventory updates, then the kill switch ends it.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use support::game::{Surface, play};

#[test]
fn the_rust_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    // `cargo test` builds the examples into `<target>/<profile>/examples`, beside `deps`
    // where this test runs.
    let exe = std::env::current_exe().expect("the test's path");
    let game = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("the test runs from <target>/<profile>/deps")
        .join("examples/game");
    assert!(
        game.is_file(),
        "no example game at {}: build it with `cargo build -p offer-sdk --example game`",
        game.display()
    );
    play(&[game.as_os_str()], &[], Surface::Rust);
}
