//! The Rust example game (`sdk/examples/game.rs`, built by `cargo test` with the other
//! targets) plays against a spawned engine: init returns at once, ready, an offer for
//! `first_loss`, the purchase's balance and inventory updates, then the kill switch ends it;
//! with and without signed player identity.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::path::PathBuf;

use support::game::{Identity, Surface, play_as};

/// The example game, which `cargo test` builds into `<target>/<profile>/examples`, beside
/// `deps` where this test runs.
fn example() -> PathBuf {
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
    game
}

#[test]
fn the_rust_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    let game = example();
    play_as(&[game.as_os_str()], &[], Surface::Rust, Identity::Open);
}

#[test]
fn the_rust_example_plays_with_signed_player_identity() {
    let game = example();
    play_as(&[game.as_os_str()], &[], Surface::Rust, Identity::Signed);
}
