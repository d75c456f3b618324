//! The C ABI from C and C++: the example games of `examples/c` and `examples/cpp`, compiled
//! with the machine's `cc` and `g++` against `sdk/include/offer_sdk.h` and the crate's
//! staticlib, play against a spawned engine (init returns 0, the callbacks come in order: ready,
//! offer, the purchase (its items as the inventory, a pack's currency in the wallet), then the
//! kill switch); and a small C program
//! checks the documented codes for bad input.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;
use support::{Live, PATIENCE, eventually, free_port, temp_dir};

/// The workspace's root.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the SDK is a workspace member")
        .to_path_buf()
}

/// The crate's staticlib, built beside this test (so `CARGO_TARGET_DIR` and the profile are
/// followed): `cargo test` builds it as a crate type of the library into `<target>/<profile>/
/// deps`, where this test runs; `cargo build -p offer-sdk` also copies it up to
/// `<target>/<profile>`.
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe
        .parent()
        .expect("the test runs from <target>/<profile>/deps");
    let candidates: Vec<PathBuf> = [Some(deps), deps.parent()]
        .into_iter()
        .flatten()
        .map(|dir| dir.join("liboffer_sdk.a"))
        .collect();
    candidates
        .iter()
        .find(|library| library.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no staticlib at {}: build it with `cargo build -p offer-sdk`",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        })
}

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
        .arg(static_library())
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

/// The position of the first line starting with `prefix`, failing with every line.
fn position(lines: &[String], prefix: &str) -> usize {
    lines
        .iter()
        .position(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line `{prefix}...` in:\n{}", lines.join("\n")))
}

/// Runs an example game against a spawned engine: waits for it to settle its purchase, turns
/// offers off with the kill switch, and checks what it printed and that it ended well.
fn play(game: &Path) {
    let live = Live::start();
    let mut child = Command::new(game)
        .arg(live.engine.url())
        .arg(&live.game_id)
        .arg(&live.key)
        .arg(&live.sdk_data)
        .arg("player_c")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the game");
    let (sender, lines_in) = mpsc::channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + PATIENCE;
    while !lines.iter().any(|l: &String| l == "purchase settled") {
        assert!(
            Instant::now() < deadline,
            "the game did not settle its purchase within {PATIENCE:?}:\n{}",
            lines.join("\n")
        );
        match lines_in.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => lines.push(line),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the game ended early:\n{}", lines.join("\n"))
            }
        }
    }
    // What the game bought reached the engine (before the kill switch ends the game): a
    // pack's currency in the wallet, an item in the inventory, which the game also saw as
    // OnInventoryUpdate before it settled.
    let all = lines.join("\n");
    let bought = position(&lines, "bought ");
    let settled = position(&lines, "purchase settled");
    if lines.iter().any(|l| l.starts_with("track currency_earned")) {
        assert!(
            lines.contains(&"track currency_earned 0".to_owned()),
            "{all}"
        );
        let player_path = format!("/v1/games/{}/players/player_c", live.game_id);
        eventually("the pack's gems reach the wallet", || {
            let (status, player) = live.admin.call(Method::GET, &player_path, None);
            status == 200 && player["balances"]["gems"] == 500
        });
    } else {
        let inventory = position(&lines, "inventory ");
        assert!(bought < inventory && inventory < settled, "{all}");
    }
    let (status, body) = live.admin.call(
        Method::PUT,
        &format!("/v1/games/{}/kill-switch", live.game_id),
        Some(json!({"level": 2, "reason": "pricing bug"})),
    );
    assert_eq!(status, 200, "{body}");
    let deadline = Instant::now() + PATIENCE;
    let exit = loop {
        if let Some(exit) = child.try_wait().expect("the game's status") {
            break exit;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "the game did not end after the kill switch:\n{}",
                lines.join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    // The reader thread ends with the game's stdout: take what it still holds.
    lines.extend(lines_in.iter());
    assert!(exit.success(), "{exit}:\n{}", lines.join("\n"));

    let all = lines.join("\n");
    for name in [
        "OnSDKReady",
        "OnOfferReceived",
        "OnBalanceUpdate",
        "OnInventoryUpdate",
        "OnNoOffer",
        "OnKillSwitchChanged",
        "OnConfigUpdated",
    ] {
        assert!(
            position(&lines, &format!("registered {name} 0")) < position(&lines, "init "),
            "{all}"
        );
    }
    assert!(lines.contains(&"init 0".to_owned()), "{all}");
    assert!(lines.contains(&"track purchase 0".to_owned()), "{all}");
    let order = [
        "init 0",
        "ready ",
        "offer ",
        "bought ",
        "purchase settled",
        "kill switch {\"level\":2",
        "offers are off",
        "shutdown 0",
    ];
    let positions: Vec<usize> = order.iter().map(|p| position(&lines, p)).collect();
    assert!(positions.is_sorted(), "{order:?} out of order:\n{all}");
}

#[test]
fn the_c_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    play(&compile("cc", &["-std=c11"], "examples/c/offer_example.c"));
}

#[test]
fn the_cpp_example_buys_an_offer_and_hides_its_store_at_the_kill_switch() {
    play(&compile(
        "g++",
        &["-std=c++17"],
        "examples/cpp/offer_example.cpp",
    ));
}

#[test]
fn bad_input_gets_the_documented_codes() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/bad_inputs.c");
    let data = temp_dir("c-abi-bad");
    std::fs::write(
        data.join("svc_config.json"),
        r#"{"auto_login": true, "player_id_source": "custom"}"#,
    )
    .expect("svc_config.json");
    // No engine: init never waits on the network.
    let output = Command::new(program)
        .arg(&data)
        .arg(format!("http://127.0.0.1:{}", free_port()))
        .output()
        .expect("run the program");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{text}");
    let codes: Vec<(&str, i32)> = text
        .lines()
        .map(|line| {
            let (name, code) = line.split_once(' ').expect("NAME CODE");
            (name, code.parse().expect("a code"))
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("poll_before_init", -11),
            ("track_before_init", -11),
            ("null_config", -1),
            ("null_data_dir", -1),
            ("invalid_utf8", -2),
            ("bad_json", -3),
            ("sandbox_key_in_production", -5),
            ("init", 0),
            ("init_again", -12),
            ("login_when_logged_in", -15),
            ("unknown_event", -13),
            ("null_event", -1),
            ("track", 0),
            ("shutdown", 0),
            ("shutdown_again", -11),
        ]
    );
    let _ = std::fs::remove_dir_all(data);
}
