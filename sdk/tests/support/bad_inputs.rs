//! The bad-input programs (C and C#) share one shape: each is run with a fresh data folder
//! holding a `svc_config.json` and the address of a port nothing listens on (init never waits
//! on the network), and prints one `NAME CODE` line per call it makes. This runs such a
//! program and checks those lines, so each test states only the codes it expects.

use std::ffi::OsStr;
use std::process::Command;

use super::{free_port, temp_dir};

/// Runs `program` (its argv, without the two arguments added here) with `env`, checks that it
/// exits 0, and that its `(name, code)` lines are `expected`, in order.
pub fn assert_codes(program: &[&OsStr], env: &[(&str, &OsStr)], expected: &[(&str, i32)]) {
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
    assert_eq!(codes, expected);
}
