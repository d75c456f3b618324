//! The engine an arena run plays against: a child process on its embedded store (a SQLite
//! file in the run's folder, removed afterwards), its L1 sampler seeded with the run's seed
//! through `OFFER__OFFERS__SAMPLER_SEED`. An engine that does not know that setting
//! refuses to start with it; it is then started again without it, unseeded.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;

use crate::child::Server;
use crate::servers::{secret, spawn_engine};

/// The setting that seeds the engine's L1 sampler.
const SAMPLER_SEED_ENV: &str = "OFFER__OFFERS__SAMPLER_SEED";
/// The child's name: its output goes to `engine.log`, its store to `engine.db`.
const NAME: &str = "engine";

/// A running engine child; killed when dropped, and its store removed by [`Engine::stop`].
pub struct Engine {
    /// The process.
    server: Server,
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its JWT secret.
    pub secret: String,
    /// Whether its sampler took the seed.
    pub seeded: bool,
    /// The run's folder.
    folder: PathBuf,
}

impl Engine {
    /// Starts `bin` with its output and store in `folder`, seeded with `seed` if it takes
    /// a seed.
    pub async fn start(bin: &PathBuf, folder: &Path, seed: u64, timeout: Duration) -> Result<Self> {
        std::fs::create_dir_all(folder)?;
        let secret = secret();
        let seeded_env = [(SAMPLER_SEED_ENV, seed.to_string())];
        let (server, addr, seeded) =
            match spawn_engine(NAME, bin, &secret, &seeded_env, folder, timeout).await {
                Ok((server, addr)) => (server, addr, true),
                Err(_) => {
                    remove_store(folder);
                    let (server, addr) =
                        spawn_engine(NAME, bin, &secret, &[], folder, timeout).await?;
                    (server, addr, false)
                }
            };
        Ok(Self {
            server,
            addr,
            secret,
            seeded,
            folder: folder.to_owned(),
        })
    }

    /// `http://host:port`.
    pub fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The last lines of the engine's output, for error messages.
    pub fn log_tail(&self) -> String {
        self.server.log_tail()
    }

    /// Stops the engine (killed and reaped) and removes its store; its log stays.
    pub fn stop(self) {
        let Self { server, folder, .. } = self;
        drop(server);
        remove_store(&folder);
    }
}

/// Removes the engine's store files from `folder` (the database and its journal files).
fn remove_store(folder: &Path) {
    for suffix in ["db", "db-wal", "db-shm"] {
        let _ = std::fs::remove_file(folder.join(format!("{NAME}.{suffix}")));
    }
}
