//! Throwaway `redis-server`s for the tool's runs: on a free loopback port, nothing saved to
//! disk unless the caller's extra arguments say otherwise (later arguments override earlier
//! ones), output in the run's logs folder.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Result;

use crate::child::{Server, free_port, wait_tcp};

/// The `redis-server` command of a throwaway server on `port` with `extra` arguments.
pub(crate) fn command(bin: &Path, port: u16, extra: &[String]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("--port")
        .arg(port.to_string())
        .arg("--bind")
        .arg("127.0.0.1")
        .arg("--save")
        .arg("")
        .arg("--appendonly")
        .arg("no")
        .args(extra);
    cmd
}

/// Starts one on a free port and waits until it accepts connections; the server and its
/// `redis://` URL (database 0).
pub(crate) async fn start(
    name: &'static str,
    bin: &Path,
    extra: &[String],
    logs: &Path,
    start_timeout: Duration,
) -> Result<(Server, String)> {
    let addr = free_port()?;
    let mut server = Server::spawn(name, command(bin, addr.port(), extra), logs)?;
    wait_tcp(&mut server, addr, start_timeout).await?;
    Ok((server, format!("redis://{addr}/0")))
}
