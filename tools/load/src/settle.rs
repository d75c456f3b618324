//! Waiting for a server process to go quiet: its CPU time (`utime` + `stime` of
//! `/proc/<pid>/stat`) stops growing.
//!
//! A broadcast timed while the server still works through the sessions' opening (the
//! engine's store writes of the sessions and players) measures that work too; waiting for
//! both targets to settle the same way starts each broadcast from an idle server.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Microseconds of one clock tick of `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
pub const TICK_US: f64 = 10_000.0;
/// How often the CPU time is read.
const SAMPLE: Duration = Duration::from_millis(100);
/// CPU time a quiet process may use in one sample (timers, heartbeats): one clock tick.
const QUIET_TICKS: u64 = 1;
/// Quiet samples in a row that count as settled.
const QUIET_SAMPLES: u32 = 3;

/// The CPU time (user and system, every thread) `pid` used so far, in clock ticks, from
/// `/proc/<pid>/stat`.
pub fn cpu_ticks(pid: u32) -> Result<u64> {
    let path = format!("/proc/{pid}/stat");
    let stat = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    // The command name (field 2) may hold spaces; the fields after its `)` are plain.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .with_context(|| format!("no command name in {path}"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `utime` and `stime` are fields 14 and 15, the 12th and 13th after the name.
    let ticks = |i: usize| -> Result<u64> {
        fields
            .get(i)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("no field {} in {path}", i + 3))
    };
    Ok(ticks(11)? + ticks(12)?)
}

/// Waits until `pid` has used at most one clock tick of CPU in each of three 100 ms samples
/// in a row, or `limit` has passed. Returns how long it waited.
pub async fn settle(pid: u32, limit: Duration) -> Result<Duration> {
    let start = Instant::now();
    let mut last = cpu_ticks(pid)?;
    let mut quiet = 0;
    while quiet < QUIET_SAMPLES && start.elapsed() < limit {
        tokio::time::sleep(SAMPLE).await;
        let now = cpu_ticks(pid)?;
        quiet = if now.saturating_sub(last) <= QUIET_TICKS {
            quiet + 1
        } else {
            0
        };
        last = now;
    }
    Ok(start.elapsed())
}
