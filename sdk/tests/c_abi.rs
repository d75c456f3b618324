//! The C ABI from C and C++: the example games of `examples/c` and `examples/cpp`, compiled
//! with the machine's `cc` and `g++` against `sdk/include/offer_sdk.h` and the crate's
//! staticlib, play against a spawned engine (the seven registrations logged before init, init
//! returns 0, the callbacks come in order: ready, offer, the purchase (its items as the
//! inventory, a pack's currency as the balance), then the kill switch): the C game without and
//! with signed player identity, the C++ game with it. A small C program checks the documented
//! codes for bad input; another registers the seven callbacks by name, checks the codes of bad
//! names, init keys and player tokens, and opens the session its init names; a third starts
//! with a player token the engine refuses, sees the refusal's code (in the token callback, the
//! device log and `SVC_RequestOffer`'s answer) and opens the session with the good token it
//! then gives. And C games with
//! C's default `SIGPIPE` action live on: one whose SDK threads get `SIGPIPE` as a write to a
//! closed connection raises it, and one tracking heavy telemetry (a 50 MB event, batches over
//! the engine's body limit, an event an engine configured lower refuses alone) while every
//! money event lands.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::io::{BufRead as _, BufReader};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use reqwest::Method;
use serde_json::json;
use support::game::{Identity, Surface, play, play_as, sdk_library, workspace_root};
use support::signing::{KEY_A, KEY_A_PUB, KEY_B, require, token};
use support::{Live, bad_inputs, eventually, temp_dir};

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
fn the_c_example_plays_with_signed_player_identity() {
    let game = compile("cc", &["-std=c11"], "examples/c/offer_example.c");
    play_as(&[game.as_os_str()], &[], Surface::CAbi, Identity::Signed);
}

#[test]
fn the_cpp_example_plays_with_signed_player_identity() {
    let game = compile("g++", &["-std=c++17"], "examples/cpp/offer_example.cpp");
    play_as(&[game.as_os_str()], &[], Surface::CAbi, Identity::Signed);
}

#[test]
fn bad_input_gets_the_documented_codes() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/bad_inputs.c");
    bad_inputs::assert_codes(&[program.as_os_str()], &[], &[]);
}

/// A run of `tests/c/telemetry_host.c`: its output (the SDK's device log in the same stream)
/// and the file that tells it to stop.
struct Host {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    reader: std::thread::JoinHandle<()>,
    stop: PathBuf,
}

impl Host {
    /// Starts `program` as `player` of `live`'s game with the program's five counts (huge MB,
    /// large count, large KB, alone KB, money count).
    fn start(program: &Path, live: &Live, player: &str, counts: [&str; 5]) -> Self {
        let config = init_config(live, player);
        let stop = live.sdk_data.join("stop");
        let mut child = Command::new("sh")
            .args(["-c", "exec \"$0\" \"$@\" 2>&1"])
            .arg(program)
            .arg(config)
            .arg(&stop)
            .args(counts)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the C game");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (stdout, into) = (child.stdout.take().expect("stdout"), Arc::clone(&lines));
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                into.lock().expect("lines").push(line);
            }
        });
        Self {
            child,
            lines,
            reader,
            stop,
        }
    }

    /// Whether the program printed `line`.
    fn printed(&self, line: &str) -> bool {
        self.lines.lock().expect("lines").iter().any(|l| l == line)
    }

    /// Whether the program printed a line starting with `prefix`.
    fn printed_prefix(&self, prefix: &str) -> bool {
        self.lines
            .lock()
            .expect("lines")
            .iter()
            .any(|l| l.starts_with(prefix))
    }

    /// Everything printed so far, for a failure's message.
    fn output(&self) -> String {
        self.lines.lock().expect("lines").join("\n")
    }

    /// Tells the program to stop, waits for it, asserts it exited with 0 (not by a signal,
    /// such as a SIGPIPE the SDK let through) and returns everything it printed.
    fn finish_cleanly(mut self) -> String {
        std::fs::write(&self.stop, "").expect("the stop file");
        let status = self.child.wait().expect("the C game ends");
        // The pipe closed with the process: the reader ends with its last lines.
        self.reader.join().expect("the reader ends");
        let output = self.lines.lock().expect("lines").join("\n");
        assert_eq!(
            status.code(),
            Some(0),
            "the game ended by signal {:?}:\n{output}",
            status.signal()
        );
        output
    }
}

/// `SVC_Init`'s configuration for `player` of `live`'s game, with the install's
/// `svc_config.json` (auto login, the game's own player id) written.
fn init_config(live: &Live, player: &str) -> String {
    std::fs::write(
        live.sdk_data.join("svc_config.json"),
        r#"{"auto_login": true, "player_id_source": "custom"}"#,
    )
    .expect("svc_config.json");
    json!({"api_key": live.key, "game_id": live.game_id, "environment": "production",
           "base_url": live.engine.url(), "data_dir": live.sdk_data, "player_id": player})
    .to_string()
}

/// The player's `gems` balance at the engine, `None` before the player has any.
fn gems(live: &Live, player: &str) -> Option<i64> {
    let (status, record) = live.admin.call(
        Method::GET,
        &format!("/v1/games/{}/players/{player}", live.game_id),
        None,
    );
    (status == 200)
        .then(|| record["balances"]["gems"].as_i64())
        .flatten()
}

#[test]
fn a_c_game_tracking_a_50_mb_event_lives_on_and_an_oversized_batch_holds_back_no_money() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/telemetry_host.c");
    let live = Live::start();
    // A 50 MB event, then 120 events of 25 kB (3 MB together, over the engine's 2 MiB body
    // limit) and 5 money events of 1000 gems after them.
    let host = Host::start(
        &program,
        &live,
        "player_heavy",
        ["50", "120", "25", "0", "5"],
    );
    eventually("the 120 small earnings and the 5 of 1000 land", || {
        gems(&live, "player_heavy") == Some(120 + 5 * 1000)
    });
    let output = host.finish_cleanly();
    for line in [
        "track_huge -17",
        "track_large 120",
        "track_money 5",
        "shutdown 0",
    ] {
        assert!(
            output.lines().any(|l| l == line),
            "no `{line}` in:\n{output}"
        );
    }
}

#[test]
fn against_an_engine_taking_less_batches_halve_and_an_event_refused_alone_is_dropped_and_logged() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/telemetry_host.c");
    // An engine reading bodies of 64 KiB at most: the SDK's batches of up to 2 MiB are
    // refused (or cut off mid-upload) until halved to fit, and an event of 100 kB never fits.
    let live = Live::start_with(&[("OFFER__SERVER__MAX_BODY_BYTES", "65536")]);
    let host = Host::start(
        &program,
        &live,
        "player_small",
        ["0", "120", "25", "100", "5"],
    );
    eventually(
        "the device log reports the event dropped as too large",
        || host.printed_prefix("offer-sdk: error sdk_event_too_large"),
    );
    eventually("every event that fits lands", || {
        gems(&live, "player_small") == Some(120 + 5 * 1000)
    });
    assert!(host.printed("track_alone 0"), "{}", host.output());
    let output = host.finish_cleanly();
    // The 100 kB event (7 gems) was dropped, not applied.
    assert_eq!(gems(&live, "player_small"), Some(5120), "{output}");
}

#[test]
fn a_sigpipe_at_the_sdks_threads_never_reaches_the_c_game() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/sigpipe_host.c");
    let live = Live::start();
    let output = Command::new(&program)
        .arg(init_config(&live, "player_pipe"))
        .output()
        .expect("run the C game");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "the game ended by signal {:?}:\n{text}",
        output.status.signal()
    );
    let signalled: i32 = text
        .lines()
        .find_map(|l| l.strip_prefix("signalled "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `signalled N` in:\n{text}"));
    assert!(signalled >= 1, "the SDK runs threads of its own:\n{text}");
    // The SDK still works after the signals: the money event lands and its balance comes back.
    for line in ["track 0", "shutdown 0"] {
        assert!(text.lines().any(|l| l == line), "no `{line}` in:\n{text}");
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("balance ") && l.contains(r#""balance":9"#)),
        "{text}"
    );
    assert_eq!(gems(&live, "player_pipe"), Some(9));
}

#[test]
fn callbacks_registered_by_name_run_and_init_takes_the_session_id() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/named_callbacks.c");
    let live = Live::start();
    let session = uuid::Uuid::new_v4();
    let output = Command::new("sh")
        .args(["-c", "exec \"$0\" \"$@\" 2>&1"])
        .arg(&program)
        .arg(live.engine.url())
        .arg(&live.game_id)
        .arg(&live.key)
        .arg(&live.sdk_data)
        .arg("player_named")
        .arg(session.to_string())
        .output()
        .expect("run the C program");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}:\n{text}", output.status);
    let lines: Vec<&str> = text.lines().collect();
    let names = [
        "SVC_Dart_OnSDKReady",
        "SVC_Dart_OnOfferReceived",
        "SVC_Dart_OnBalanceUpdate",
        "SVC_Dart_OnInventoryUpdate",
        "SVC_Dart_OnNoOffer",
        "SVC_Dart_OnKillSwitchChanged",
        "SVC_Dart_OnConfigUpdated",
    ];
    for name in names {
        for line in [
            format!("register {name} 0"),
            format!("offer-sdk: registered {name}"),
        ] {
            assert!(lines.contains(&line.as_str()), "no `{line}` in:\n{text}");
        }
    }
    let codes: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with("register ") && !l.starts_with("offer-sdk: "))
        .filter(|l| !l.starts_with("callback "))
        .collect();
    assert_eq!(
        codes,
        [
            "register_unknown_name -20",
            "register_null_name -1",
            "set_token_before_init -11",
            "init_unknown_key -3",
            "init_bad_session_id -3",
            "init_jwt_without_token -19",
            "init_unreadable_token -19",
            "init 0",
            "set_unreadable_token -19",
            "set_other_players_token -19",
            "shutdown 0",
        ],
        "{text}"
    );
    let ready = lines
        .iter()
        .position(|l| l.starts_with("callback SVC_Dart_OnSDKReady {"))
        .unwrap_or_else(|| panic!("OnSDKReady did not run through its name:\n{text}"));
    assert!(lines[ready].contains(r#""kill_switch""#), "{text}");
    // The session the SDK opened is the one init named: the engine serves it, and not another.
    let offer = |session_id: uuid::Uuid| {
        live.admin
            .call_as(
                &live.key,
                Method::POST,
                "/v1/sdk/offers/next",
                Some(json!({"session_id": session_id,
                            "trigger_context": {"event_type": "first_loss"}})),
            )
            .0
    };
    assert!([200, 204].contains(&offer(session)), "{text}");
    assert_eq!(offer(uuid::Uuid::new_v4()), 404);
}

#[test]
fn a_refused_player_token_surfaces_its_code_until_the_game_gives_a_good_one() {
    let program = compile("cc", &["-std=c11"], "sdk/tests/c/refused_token.c");
    let live = Live::start();
    require(&live, &[KEY_A_PUB]);
    let player = "player_refused";
    let output = Command::new("sh")
        .args(["-c", "exec \"$0\" \"$@\" 2>&1"])
        .arg(&program)
        .arg(live.engine.url())
        .arg(&live.game_id)
        .arg(&live.key)
        .arg(&live.sdk_data)
        // Signed by a key the game does not know, then by its own.
        .arg(token(KEY_B, player, &live.game_id, 3600))
        .arg(token(KEY_A, player, &live.game_id, 3600))
        .output()
        .expect("run the C program");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}:\n{text}", output.status);
    let lines: Vec<&str> = text.lines().collect();
    let needed = lines
        .iter()
        .find(|l| l.starts_with("callback SVC_Dart_OnPlayerTokenNeeded "))
        .unwrap_or_else(|| panic!("no token callback:\n{text}"));
    let payload: serde_json::Value = serde_json::from_str(
        needed
            .strip_prefix("callback SVC_Dart_OnPlayerTokenNeeded ")
            .unwrap_or_default(),
    )
    .expect("the callback's JSON");
    assert_eq!(payload["reason"], "refused", "{text}");
    assert_eq!(payload["code"], "player_token_invalid", "{text}");
    assert_eq!(payload["player_id"], player, "{text}");
    assert!(
        lines.contains(&"offer-sdk: error player_token_invalid: player_token invalid (unknown_key): no key of the game verifies it"),
        "the device log names the refusal:\n{text}"
    );
    let codes: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.starts_with("callback ") && !l.starts_with("offer-sdk: "))
        .collect();
    assert_eq!(
        codes,
        [
            "register 0",
            "register 0",
            "init 0",
            "request_offer_while_refused -19",
            "set_player_token 0",
            "request_offer 0",
            "shutdown 0",
        ],
        "{text}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("callback SVC_Dart_OnSDKReady {")),
        "{text}"
    );
}
