//! The flags naming the servers a measurement starts as child processes (the engine, and a
//! private Redis for the subcommands that want one), and how they are started: an engine on
//! a fresh JWT secret, waited for until it answers and, where asked, set up as a studio
//! would.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::child::{Server, free_port, logs_dir};
use crate::{SetupArgs, parse_duration, redis_server, setup};

/// Settings of every engine the load tool starts. Its clients all connect from one loopback
/// address, most of them with one SDK key, and open sessions for thousands of new players a
/// second, so the engine's per-client socket limits and its limit on new players per key (far
/// above what one address or one game's players reach in real traffic) are lifted.
pub(crate) const ENGINE_ENV: [(&str, &str); 3] = [
    ("OFFER__WEBSOCKET__MAX_SOCKETS_PER_ADDRESS", "1000000"),
    ("OFFER__WEBSOCKET__MAX_SOCKETS_PER_KEY", "1000000"),
    ("OFFER__PLAYERS__NEW_PER_MINUTE_PER_KEY", "1000000"),
];

/// Catalogue size of the game an engine is set up with by [`EngineArgs::start`].
const ITEMS: usize = 20;

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

/// A fresh 48-character JWT secret for an engine the tool starts.
pub(crate) fn secret() -> String {
    let mut s = uuid::Uuid::new_v4().simple().to_string();
    s.push_str(&uuid::Uuid::new_v4().simple().to_string());
    s.truncate(48);
    s
}

/// Starts the engine as `name` (its output in `<logs>/<name>.log`, its embedded store in
/// `<logs>/<name>.db` unless `extra_env` says otherwise) and sets it up with a game and an
/// SDK key.
async fn start_engine(
    name: &'static str,
    engine_bin: &PathBuf,
    extra_env: &[(&str, String)],
    logs: &Path,
    start_timeout: Duration,
) -> Result<(Server, SocketAddr, String, setup::Prepared)> {
    let secret = secret();
    let (engine, addr) =
        spawn_engine(name, engine_bin, &secret, extra_env, logs, start_timeout).await?;
    let args = SetupArgs {
        sessions: 0,
        items: ITEMS,
        mode: crate::GameMode::Shadow,
    };
    let prepared = setup::prepare(&format!("http://{addr}"), &secret, &args)
        .await
        .with_context(|| format!("setting the engine up; {}", engine.log_tail()))?;
    Ok((engine, addr, secret, prepared))
}

/// Starts the engine called `name` on the SQLite file `<logs>/<name>.db` with the JWT secret
/// `secret` and `extra_env`, and waits until it answers `/healthz`.
pub(crate) async fn spawn_engine(
    name: &'static str,
    engine_bin: &PathBuf,
    secret: &str,
    extra_env: &[(&str, String)],
    logs: &Path,
    start_timeout: Duration,
) -> Result<(Server, SocketAddr)> {
    if !engine_bin.is_file() {
        bail!(
            "no engine binary at {} (build it: cargo build --release -p offer-engine, \
             or pass --engine-bin)",
            engine_bin.display()
        );
    }
    let addr = free_port()?;
    let mut cmd = Command::new(engine_bin);
    cmd.arg("serve")
        .envs(ENGINE_ENV)
        .env("OFFER__SERVER__BIND", addr.to_string())
        .env("OFFER__AUTH__JWT_SECRET", secret)
        .env("OFFER__STORE__REDIS_URL", "")
        .env("OFFER__STORE__PATH", logs.join(format!("{name}.db")));
    for (key, value) in extra_env {
        cmd.env(key, value);
    }
    let mut engine = Server::spawn(name, cmd, logs)?;
    engine
        .wait_ready(&format!("http://{addr}/healthz"), true, start_timeout)
        .await?;
    Ok((engine, addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_48_chars() {
        let s = secret();
        assert_eq!(s.len(), 48);
        assert_ne!(s, secret());
    }
}
