//! What the example games' tests share: where the built SDK library is, and a game played
//! against a spawned engine (it settles a purchase, sees a sword bought on another device of
//! the player arrive as its inventory, then the kill switch ends it), its output checked for
//! the order of what happened; with signed player identity, the game's player token comes from
//! the file `OFFER_PLAYER_TOKEN_FILE` names, the examples' stand-in for the studio's backend.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use super::signing::{KEY_A, KEY_A_PUB, require, token};
use super::{Live, PATIENCE, eventually, outside_holdout, temp_dir};

/// The workspace's root.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the SDK is a workspace member")
        .to_path_buf()
}

/// The crate's library file `name` (`liboffer_sdk.a`, `liboffer_sdk.so`), built beside this
/// test (so `CARGO_TARGET_DIR` and the profile are followed): `cargo test` builds the
/// library's crate types into `<target>/<profile>/deps`, where this test runs; `cargo build
/// -p offer-sdk` also copies them up to `<target>/<profile>`.
pub fn sdk_library(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    let deps = exe
        .parent()
        .expect("the test runs from <target>/<profile>/deps");
    let candidates: Vec<PathBuf> = [Some(deps), deps.parent()]
        .into_iter()
        .flatten()
        .map(|dir| dir.join(name))
        .collect();
    candidates
        .iter()
        .find(|library| library.is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no {name} at {}: build it with `cargo build -p offer-sdk`",
                candidates
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        })
}

/// The position of the first line starting with `prefix`, failing with every line.
pub fn position(lines: &[String], prefix: &str) -> usize {
    lines
        .iter()
        .position(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line `{prefix}...` in:\n{}", lines.join("\n")))
}

/// Which surface of the SDK an example game uses, which decides what it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The C ABI (C, C++, C#): calls print their `SVC_Result` (0 is success), and the SDK
    /// logs the seven registrations and the first frame.
    CAbi,
    /// The Rust API: calls print `ok` or their error; there is nothing to register.
    Rust,
}

impl Surface {
    /// What a successful call prints.
    fn ok(self) -> &'static str {
        match self {
            Self::CAbi => "0",
            Self::Rust => "ok",
        }
    }
}

/// How the game's players are identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// By the id the game passes (player identity `none`).
    Open,
    /// By a token the studio's backend signs (player identity `required`): the game reads it
    /// from `OFFER_PLAYER_TOKEN_FILE`, at launch and when the SDK asks for a new one.
    Signed,
}

/// [`play_as`] with [`Identity::Open`].
pub fn play(game: &[&OsStr], env: &[(&str, &OsStr)], surface: Surface) {
    play_as(game, env, surface, Identity::Open);
}

/// Runs an example game (the command line `game`, to which the engine's URL, the game id, the
/// key, the SDK's folder and a player id are added, with the environment `env`) against a
/// spawned engine: waits for it to settle its purchase, turns offers off with the kill switch,
/// and checks what it printed, with the SDK's device log (standard error) in the same stream,
/// and that it ended well. With [`Identity::Signed`], the game requires player tokens of a key
/// and the game's player gets one.
pub fn play_as(game: &[&OsStr], env: &[(&str, &OsStr)], surface: Surface, identity: Identity) {
    let ok = surface.ok();
    let live = Live::start();
    let player = outside_holdout(&live.game_id, "player_c");
    let backend = temp_dir("backend").join("player_token");
    let player_token = (identity == Identity::Signed).then(|| {
        require(&live, &[KEY_A_PUB]);
        let signed = token(KEY_A, &player, &live.game_id, 3600);
        std::fs::write(&backend, &signed).expect("the backend's token");
        signed
    });
    let mut env = env.to_vec();
    if player_token.is_some() {
        env.push(("OFFER_PLAYER_TOKEN_FILE", backend.as_os_str()));
    }
    // Standard error joins standard output in one pipe, so the SDK's log lines keep their
    // place among the game's.
    let mut child = Command::new("sh")
        .args(["-c", "exec \"$0\" \"$@\" 2>&1"])
        .args(game)
        .envs(env.iter().copied())
        .arg(live.engine.url())
        .arg(&live.game_id)
        .arg(&live.key)
        .arg(&live.sdk_data)
        .arg(&player)
        .stdout(Stdio::piped())
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
    // Reads the game's lines until one from the `from`th on is accepted by `want`, failing
    // after [`PATIENCE`].
    let read_until =
        |lines: &mut Vec<String>, from: usize, what: &str, want: &dyn Fn(&str) -> bool| {
            let deadline = Instant::now() + PATIENCE;
            while !lines.iter().skip(from).any(|l| want(l)) {
                assert!(
                    Instant::now() < deadline,
                    "the game did not show {what} within {PATIENCE:?}:\n{}",
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
        };
    read_until(&mut lines, 0, "its purchase settled", &|l| {
        l == "purchase settled"
    });
    // What the game bought reached the engine (before the kill switch ends the game), and the
    // game saw it come back before it settled: a pack's currency as the wallet's balance, an
    // item as the inventory.
    let all = lines.join("\n");
    let bought = position(&lines, "bought ");
    let settled = position(&lines, "purchase settled");
    if lines.iter().any(|l| l.starts_with("track currency_earned")) {
        assert!(
            lines.contains(&format!("track currency_earned {ok}")),
            "{all}"
        );
        let balance = lines
            .iter()
            .position(|l| l.starts_with("balance ") && l.contains("\"balance\":500"))
            .unwrap_or_else(|| panic!("no balance of 500 gems:\n{all}"));
        assert!(bought < balance && balance < settled, "{all}");
        let player_path = format!("/v1/games/{}/players/{player}", live.game_id);
        eventually("the pack's gems reach the wallet", || {
            let (status, player) = live.admin.call(Method::GET, &player_path, None);
            status == 200 && player["balances"]["gems"] == 500
        });
    }
    if lines
        .iter()
        .any(|l| l.starts_with("offer ") && l.contains("\"sword\""))
    {
        let inventory = position(&lines, "inventory ");
        assert!(bought < inventory && inventory < settled, "{all}");
        assert!(lines[inventory].contains("\"sword\""), "{all}");
    }
    // Another device of the player buys a sword (its purchase sent over REST): the inventory
    // reaches this game's socket too, whatever the offer held.
    let other_device = uuid::Uuid::new_v4();
    let (status, body) = live.admin.call_as(
        &live.key,
        Method::POST,
        "/v1/sdk/sessions",
        Some(json!({"session_id": other_device, "player_id": player,
                    "player_token": player_token})),
    );
    assert_eq!(status, 201, "{body}");
    let (status, body) = live.admin.call_as(
        &live.key,
        Method::POST,
        "/v1/sdk/events",
        Some(
            json!({"session_id": other_device, "player_token": player_token,
            "events": [{"type": "purchase", "item_ids": ["sword"], "price_cents": 499,
                        "tx_id": "other-device-sword"}]}),
        ),
    );
    assert_eq!(status, 202, "{body}");
    let read = lines.len();
    read_until(&mut lines, read, "the other device's sword", &|l| {
        l.starts_with("inventory ") && l.contains("sword")
    });
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
    if surface == Surface::CAbi {
        device_log(&lines);
    }
    assert!(lines.contains(&format!("init {ok}")), "{all}");
    assert!(lines.contains(&format!("track purchase {ok}")), "{all}");
    let order = [
        format!("init {ok}"),
        "ready ".into(),
        "offer ".into(),
        "bought ".into(),
        "purchase settled".into(),
        "kill switch {\"level\":2".into(),
        "offers are off".into(),
        format!("shutdown {ok}"),
    ];
    let positions: Vec<usize> = order.iter().map(|p| position(&lines, p)).collect();
    assert!(positions.is_sorted(), "{order:?} out of order:\n{all}");
}

/// Checks the SDK's device log: the seven registrations, then init, then the first frame.
fn device_log(lines: &[String]) {
    let all = lines.join("\n");
    let init = position(lines, "init ");
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
            position(lines, &format!("offer-sdk: registered SVC_Dart_{name}")) < init,
            "{all}"
        );
    }
    assert!(init < position(lines, "offer-sdk: first frame"), "{all}");
}
