//! The bad-input programs (C and C#) share one shape: each is run with a fresh data folder
//! holding a `svc_config.json` and the address of a port nothing listens on (init never waits
//! on the network), and prints one `NAME CODE` line per call it makes. This runs such a
//! program and checks those lines, so each test states only the codes it expects.

use std::ffi::OsStr;
use std::process::Command;

use super::{free_port, temp_dir};

/// Every case of the bad-input programs, in the order they run, with its documented code.
const CASES: [(&str, i32); 17] = [
    ("poll_before_init", -11),
    ("track_before_init", -11),
    ("null_config", -1),
    ("invalid_utf8", -2),
    ("bad_json", -3),
    ("data_dir_not_a_string", -3),
    ("no_svc_config", -7),
    ("sandbox_key_in_production", -5),
    ("init", 0),
    ("init_again", -12),
    ("login_when_logged_in", -15),
    ("unknown_event", -13),
    ("null_event", -1),
    ("track", 0),
    ("track_too_large", -17),
    ("shutdown", 0),
    ("shutdown_again", -11),
];

/// Runs `program` (its argv, without the two arguments added here) with `env`, checks that it
/// exits 0, and that its `(name, code)` lines are every case but `not_made` (the cases the
/// program leaves out: C# cannot pass invalid UTF-8 through a `string`), in order.
pub fn assert_codes(program: &[&OsStr], env: &[(&str, &OsStr)], not_made: &[&str]) {
    let data = temp_dir("bad-inputs");
    std::fs::write(
        data.join("svc_config.json"),
        r#"{"auto_login": true, "player_id_source": "custom"}"#,
    )
    .expect("svc_config.json");
    let (first, rest) = program.split_first().expect("a program to run");
    let output = Command::new(first)
        .args(rest)
        .arg(&data)
        .arg(format!("http://127.0.0.1:{}", free_port()))
        .envs(env.iter().copied())
        .output()
        .expect("run the program");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(data);
    let codes: Vec<(&str, i32)> = text
        .lines()
        .map(|line| {
            let (name, code) = line.split_once(' ').expect("NAME CODE");
            (name, code.parse().expect("a code"))
        })
        .collect();
    let expected: Vec<(&str, i32)> = CASES
        .into_iter()
        .filter(|(name, _)| !not_made.contains(name))
        .collect();
    assert_eq!(codes, expected);
}
