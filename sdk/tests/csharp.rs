//! The C# binding (`sdk/csharp/`) under Mono: the example game of `sdk/csharp/examples`,
//! compiled with `mcs` together with the binding and run with `mono` over the crate's
//! `liboffer_sdk.so`, plays against a spawned engine (the seven registrations logged before
//! init, init returns 0, ready, an offer for `first_loss`, the purchase's balance and inventory
//! updates, then the kill switch), with and without signed player identity; and a small C#
//! program checks the documented codes for bad input. Without Mono the tests fail and say how to install it.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use support::game::{Identity, Surface, play, play_as, sdk_library, workspace_root};
use support::{bad_inputs, temp_dir};

/// Fails, with how to install it, when `tool` (`mcs` or `mono`) does not run.
fn require(tool: &str) {
    let present = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        present,
        "`{tool}` is needed for the C# binding's tests: install Mono with \
         `apt-get install -y mono-mcs mono-runtime` (what .ci/run does)"
    );
}

/// Compiles the binding and `program` (relative to the workspace) with `mcs` into an
/// executable in a temporary folder.
fn compile(program: &str) -> PathBuf {
    require("mcs");
    require("mono");
    let root = workspace_root();
    let exe = temp_dir("csharp").join("game.exe");
    let output = Command::new("mcs")
        .arg("-warnaserror+")
        .arg(format!("-out:{}", exe.display()))
        .arg(root.join("sdk/csharp/OfferSdk.cs"))
        .arg(root.join(program))
        .output()
        .expect("run mcs");
    assert!(
        output.status.success(),
        "mcs failed on {program}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    exe
}

/// The folder of `liboffer_sdk.so`, for the native library search of Mono's P/Invoke.
fn library_dir() -> PathBuf {
    sdk_library("liboffer_sdk.so")
        .parent()
        .map(Path::to_path_buf)
        .expect("the library's folder")
}

#[test]
fn the_csharp_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    let game = compile("sdk/csharp/examples/OfferExample.cs");
    let libraries = library_dir();
    play(
        &["mono".as_ref(), game.as_os_str()],
        &[("LD_LIBRARY_PATH", libraries.as_os_str())],
        Surface::CAbi,
    );
}

#[test]
fn the_csharp_example_plays_with_signed_player_identity() {
    let game = compile("sdk/csharp/examples/OfferExample.cs");
    let libraries = library_dir();
    play_as(
        &["mono".as_ref(), game.as_os_str()],
        &[("LD_LIBRARY_PATH", libraries.as_os_str())],
        Surface::CAbi,
        Identity::Signed,
    );
}

#[test]
fn bad_input_gets_the_documented_codes() {
    let program = compile("sdk/tests/csharp/BadInputs.cs");
    let libraries = library_dir();
    bad_inputs::assert_codes(
        &["mono".as_ref(), program.as_os_str()],
        &[("LD_LIBRARY_PATH", libraries.as_os_str())],
        &["invalid_utf8", "data_dir_not_a_string"],
    );
}
