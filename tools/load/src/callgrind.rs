//! Counting a server's instructions during one broadcast: the server runs under
//! `valgrind --tool=callgrind` with collection on, its counters are zeroed just before the
//! measured trigger (`callgrind_control -z`) and dumped once every client has the message
//! (`callgrind_control -d`), so the dump holds that broadcast (and the idle sockets' timers
//! meanwhile) and nothing of the sessions' opening.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The last-level cache callgrind simulates with `--cache-sim`: the 2 MiB, 16-way L2 each
/// core of these machines has. Their L3 is shared by the whole host and not the server's
/// alone, so what does not stay in L2 is what a socket costs in memory traffic.
const SIMULATED_LL: &str = "--LL=2097152,16,64";

/// The valgrind command line a server named `name` runs under; its profile goes to
/// `<logs>/<name>.callgrind.<pid>`. With `cache_sim`, callgrind also counts the data reads
/// and writes that miss the first-level cache and the simulated last level.
pub fn valgrind_args(name: &str, logs: &Path, cache_sim: bool) -> Vec<String> {
    let mut args = vec![
        "--tool=callgrind".into(),
        format!(
            "--callgrind-out-file={}",
            logs.join(format!("{name}.callgrind.%p")).display()
        ),
    ];
    if cache_sim {
        args.push("--cache-sim=yes".into());
        args.push(SIMULATED_LL.into());
    }
    args
}

/// A shell script that runs `engine_bin` under callgrind with its arguments, for the
/// engine's own start-up code (which takes a binary, not a command line). `exec` keeps the
/// process id, which `callgrind_control` addresses.
///
/// The heartbeat is set to an hour: under valgrind a round lasts longer than the 15 s ping
/// interval, and each socket's ping (and its client's pong) falling in the counted window
/// would be counted as the broadcast's. The baseline sends no pings.
pub fn engine_wrapper(engine_bin: &Path, logs: &Path, cache_sim: bool) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let script = logs.join("engine-under-callgrind.sh");
    let engine = std::fs::canonicalize(engine_bin)
        .with_context(|| format!("locating {}", engine_bin.display()))?;
    let text = format!(
        "#!/bin/sh\nexport OFFER__WEBSOCKET__PING_INTERVAL_S=3600\n\
         export OFFER__WEBSOCKET__IDLE_TIMEOUT_S=7200\n\
         exec valgrind {} '{}' \"$@\"\n",
        valgrind_args("engine", logs, cache_sim).join(" "),
        engine.display()
    );
    std::fs::write(&script, text).with_context(|| format!("writing {}", script.display()))?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("making {} executable", script.display()))?;
    Ok(script)
}

/// Runs `callgrind_control <flag> <pid>`: `-z` zeroes the counters, `-d` dumps them.
pub fn control(flag: &str, pid: u32) -> Result<()> {
    let status = Command::new("callgrind_control")
        .arg(flag)
        .arg(pid.to_string())
        .status()
        .context("running callgrind_control")?;
    if !status.success() {
        bail!("callgrind_control {flag} {pid} failed: {status}");
    }
    Ok(())
}
