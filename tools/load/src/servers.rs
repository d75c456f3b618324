//! The flags naming the servers a measurement starts as child processes (the engine, and a
//! private Redis for the subcommands that want one), and how they are started.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::compare::Server;
use crate::ws_load::{logs_dir, start_engine};
use crate::{parse_duration, redis_server, setup};

/// Settings of every engine the load tool starts. Its clients all connect from one loopback
/// address, most of them with one SDK key, so the engine's per-client socket limits (far above
/// what one address or one game's players reach in real traffic) are lifted.
pub(crate) const ENGINE_ENV: [(&str, &str); 2] = [
    ("OFFER__WEBSOCKET__MAX_SOCKETS_PER_ADDRESS", "1000000"),
    ("OFFER__WEBSOCKET__MAX_SOCKETS_PER_KEY", "1000000"),
];

/// The engine a measurement starts, where the servers' output goes and how long a server may
/// take to start.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
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

/// The engine and a private Redis beside it.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The `redis-server` binary.
    #[arg(long, default_value = "redis-server")]
    pub redis_bin: PathBuf,
    /// The engine, the output folder and the start timeout.
    #[command(flatten)]
    pub engine: EngineArgs,
}

impl EngineArgs {
    /// The folder for the servers' output: `--logs`, created if missing, or a fresh one.
    pub(crate) fn logs_dir(&self) -> Result<PathBuf> {
        logs_dir(self.logs.as_ref())
    }

    /// The engine called `name` with `env` added to its environment, its output in `logs`,
    /// set up as a studio would: the process, its address, its JWT secret and the setup.
    pub(crate) async fn start(
        &self,
        name: &'static str,
        env: &[(&str, String)],
        logs: &Path,
    ) -> Result<(Server, SocketAddr, String, setup::Prepared)> {
        start_engine(name, &self.engine_bin, env, logs, self.start_timeout).await
    }
}

impl ServerArgs {
    /// A private `redis-server` with the `extra` flags, its output in `logs`: the process
    /// and its URL.
    pub(crate) async fn redis(&self, extra: &[String], logs: &Path) -> Result<(Server, String)> {
        redis_server::start(
            "redis",
            &self.redis_bin,
            extra,
            logs,
            self.engine.start_timeout,
        )
        .await
    }
}
