//! The C ABI from C and C++: the example games of `examples/c` and `examples/cpp`, compiled
//! with the machine's `cc` and `g++` against `sdk/include/offer_sdk.h` and the crate's
//! staticlib, play against a spawned engine (the seven registrations logged before init, init
//! returns 0, the callbacks come in order: ready, offer, the purchase (its items as the
//! inventory, a pack's currency as the balance), then the kill switch); and a small C program
//! checks the documented codes for bad input.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::path::PathBuf;
use std::process::{Command, Stdio};

use support::game::{Surface, play, sdk_library, workspace_root};
use support::{bad_inputs, temp_dir};

/// Compiles `source` (relative to the workspace) with `compiler` and the extra `flags` into a
/// temporary folder and returns the binary.
fn compile(compiler: &str, flags: &[&str], source: &str) -> PathBuf {
    let present = Command::new(compiler)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        present,
        "`{compiler}` is needed to build the C ABI's examples: install it (apt-get install build-essential)"
    );
    let root = workspace_root();
    let binary = temp_dir("c-abi").join("game");
    let output = Command::new(compiler)
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root.join("sdk/include"))
        .arg(root.join(source))
        .arg(sdk_library("liboffer_sdk.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&binary)
        .output()
        .expect("run the compiler");
    assert!(
        output.status.success(),
        "{compiler} failed on {source}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    binary
}

#[test]
fn the_c_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    let game = compile("cc", &["-std=c11"], "examples/c/offer_example.c");
    play(&[game.as_os_str()], &[], Surface::CAbi);
}

#[test]
fn the_cpp_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    let game = compile("g++", &["-std=c++17"], "examples/cpp/offer_example.cpp");
    play(&[game.as_os_str()], &[], Surface::CAbi);
}

#[test]
fn bad_input_gets_the_documented_codes() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/bad_inputs.c");
    bad_inputs::assert_codes(&[program.as_os_str()], &[], &[]);
}
