//! The flags naming the servers a measurement starts as child processes, shared by the
//! subcommands that start a private Redis and the engine on it.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::parse_duration;

/// Where the servers come from, where their output goes and how long they may take to start.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The `redis-server` binary.
    #[arg(long, default_value = "redis-server")]
    pub redis_bin: PathBuf,
    /// The engine binary (built beforehand: `cargo build --release -p offer-engine`).
    #[arg(long, default_value = "target/release/offer-engine")]
    pub engine_bin: PathBuf,
    /// Directory for the servers' output and data (default: a fresh directory under the temp
    /// dir); a SQLite file or Redis's append-only file goes there, so pick a disk like the
    /// production one.
    #[arg(long)]
    pub logs: Option<PathBuf>,
    /// Longest wait for a server to answer after its start.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub start_timeout: Duration,
}
