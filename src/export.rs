//! `offer-engine export-ledger`: a game's raw ledger lines as NDJSON, read from the store the
//! configuration names, beside running engines.
//!
//! The ledger is append-only; its raw lines may be deleted after `store.ledger_retention_days`
//! (the day aggregates and per-player sums stay), so an operator who needs them for longer
//! exports them first. The export reads the embedded store's file without taking it over
//! (read connections only: the engine that owns the file keeps serving), or the shared Redis.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDate;
use offer_domain::environment::Environment;
use uuid::Uuid;

use crate::config::{ConfigError, Settings, StoreSettings};
use crate::store::redis::RedisStore;
use crate::store::sqlite::SqliteStore;
use crate::store::{LedgerEntry, SharedStore, StoreError};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The store cannot be read.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The output cannot be written.
    #[error("writing the export: {0}")]
    Write(#[from] std::io::Error),
}

/// Exports the ledger of `game_id` in `env` from `since` (a UTC day, by event time) to
/// `out`, one JSON ledger entry per line in append order; returns how many lines it wrote.
/// Runs its own small runtime: call it from the binary's main thread.
pub fn run(
    config: Option<&Path>,
    game_id: Uuid,
    env: Environment,
    since: NaiveDate,
    out: &mut impl Write,
) -> Result<usize, ExportError> {
    let settings = Settings::load(config)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = open(&settings.store).await?;
        export(&store, game_id, env, since, out).await
    })
}

/// The configured store, for reading: Redis, or the embedded store's file read-only. An
/// in-memory store holds nothing to export.
async fn open(settings: &StoreSettings) -> Result<SharedStore, ExportError> {
    let timeout = Duration::from_millis(settings.timeout_ms);
    if !settings.redis_url.is_empty() {
        let store = RedisStore::connect(&settings.redis_url, &settings.key_prefix, timeout).await?;
        return Ok(Arc::new(store));
    }
    if settings.in_memory() {
        return Err(ConfigError(
            "store.path is `:memory:`: an in-memory store keeps no ledger to export".into(),
        )
        .into());
    }
    let path = settings.path.clone();
    let store = tokio::task::spawn_blocking(move || SqliteStore::open_read_only(&path, timeout))
        .await
        .map_err(|e| StoreError::Unavailable(format!("opening the store: {e}")))??;
    Ok(Arc::new(store))
}

/// One exported line: a ledger entry with its kind named as the API names the event.
#[derive(serde::Serialize)]
struct ExportLine<'a> {
    tx_id: &'a str,
    player_id: &'a str,
    kind: &'static str,
    currency_id: &'a str,
    amount: i64,
    balance_after: i64,
    ts: chrono::DateTime<chrono::Utc>,
}

impl<'a> From<&'a LedgerEntry> for ExportLine<'a> {
    fn from(entry: &'a LedgerEntry) -> Self {
        Self {
            tx_id: &entry.tx_id,
            player_id: &entry.player_id,
            kind: entry.kind.event_name(),
            currency_id: &entry.currency_id,
            amount: entry.amount,
            balance_after: entry.balance_after,
            ts: entry.ts,
        }
    }
}

/// Writes the NDJSON lines of the export, each kind named as the API's event
/// (`currency_earned`, `currency_spent`, `purchase`).
pub async fn export(
    store: &SharedStore,
    game_id: Uuid,
    env: Environment,
    since: NaiveDate,
    out: &mut impl Write,
) -> Result<usize, ExportError> {
    let mut written = 0;
    for entry in store.ledger(game_id, env).await? {
        if entry.ts.date_naive() < since {
            continue;
        }
        serde_json::to_writer(&mut *out, &ExportLine::from(&entry))
            .map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
        written += 1;
    }
    out.flush()?;
    Ok(written)
}
