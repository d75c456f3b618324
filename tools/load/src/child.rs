//! A server the tool starts as a child process: its output in the run's logs folder, the
//! waits until it answers, and its end (killed and reaped when dropped); with the free
//! loopback port it is given.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// A server child process, killed and reaped when dropped.
pub(crate) struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Server {
    /// Starts `command` with stdout and stderr going to `<logs>/<name>.log`.
    pub(crate) fn spawn(name: &'static str, mut command: Command, logs: &Path) -> Result<Self> {
        let log = logs.join(format!("{name}.log"));
        let out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
        let err = out
            .try_clone()
            .with_context(|| format!("opening {} twice", log.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("starting the {name} ({command:?})"))?;
        Ok(Self { name, child, log })
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines of the server's output, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        format!("last lines of {}:\n{tail}", self.log.display())
    }

    /// Fails with the log tail when the process has exited.
    pub(crate) fn check_alive(&mut self) -> Result<()> {
        if let Some(status) = self
            .child
            .try_wait()
            .with_context(|| format!("polling the {}", self.name))?
        {
            bail!("the {} exited ({status}); {}", self.name, self.log_tail());
        }
        Ok(())
    }

    /// Waits until `GET url` answers (with 200 when `need_ok`), the process exits, or
    /// `timeout` passes.
    pub(crate) async fn wait_ready(
        &mut self,
        url: &str,
        need_ok: bool,
        timeout: Duration,
    ) -> Result<()> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(1))
            .build()
            .context("building the HTTP client")?;
        let start = Instant::now();
        loop {
            self.check_alive()?;
            if let Ok(response) = client.get(url).send().await
                && (!need_ok || response.status() == reqwest::StatusCode::OK)
            {
                return Ok(());
            }
            if start.elapsed() > timeout {
                bail!(
                    "the {} did not answer GET {url} within {timeout:?}; {}",
                    self.name,
                    self.log_tail()
                );
            }
            // Short, so a start-up time measured to the first answer is close to the truth.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // Errors here mean the process is already gone.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free loopback port (released right away; the child binds it a moment later).
pub(crate) fn free_port() -> Result<SocketAddr> {
    let listener =
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("finding a free loopback port")?;
    listener.local_addr().context("reading the free port")
}

/// The log directory: `dir`, or a fresh one under the temp dir.
pub(crate) fn logs_dir(dir: Option<&PathBuf>) -> Result<PathBuf> {
    let logs = match dir {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("offer-load-{}", std::process::id())),
    };
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    Ok(logs)
}

/// Waits until `addr` accepts TCP connections.
pub(crate) async fn wait_tcp(
    server: &mut Server,
    addr: SocketAddr,
    timeout: Duration,
) -> Result<()> {
    let start = Instant::now();
    loop {
        server.check_alive()?;
        if tokio::net::TcpStream::connect(addr).await.is_ok() {
            return Ok(());
        }
        if start.elapsed() > timeout {
            bail!(
                "nothing listens on {addr} after {timeout:?}; {}",
                server.log_tail()
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
