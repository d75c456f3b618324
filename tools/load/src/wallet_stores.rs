//! `wallet-stores`: wallet operations per second through the engine on its two durable
//! stores, in one run: the embedded SQLite file with `sync = full` against Redis with
//! `appendonly yes` and `appendfsync always`, the Redis setting under which no acknowledged
//! money event is lost either.
//!
//! Three child processes: a private `redis-server` (append-only file synced on every write, in
//! the logs folder), the engine on it, and a second engine on a SQLite file in the logs
//! folder. Each engine is driven exactly as `wallet` drives it: `--concurrency` WebSocket
//! sessions, each sending one `currency_earned` event with a fresh `tx_id` and waiting for its
//! `balance` push before the next. Rounds alternate SQLite and Redis; the table gives the
//! median ops/s of each, the ratio SQLite/Redis (target at least 0.5), and the SQLite file's
//! size per ledger entry (every answered operation is one ledger line).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::servers::ServerArgs;
use crate::wallet::{RoundArgs, Run, engine_run, runs_report};
use crate::ws_client;

/// Flags of `wallet-stores`.
#[derive(Debug, Args)]
pub struct WalletStoresArgs {
    /// The rounds of the engine on SQLite against the engine on Redis.
    #[command(flatten)]
    pub plan: RoundArgs,
    /// The servers started for the measurement.
    #[command(flatten)]
    pub servers: ServerArgs,
}

/// The bytes of a SQLite file with its write-ahead log.
fn sqlite_bytes(db: &Path) -> u64 {
    let size = |path: PathBuf| std::fs::metadata(path).map_or(0, |m| m.len());
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    size(db.to_owned()) + size(PathBuf::from(wal))
}

/// Runs `wallet-stores`.
pub async fn run(args: WalletStoresArgs) -> Result<()> {
    if args.plan.concurrency == 0 || args.plan.rounds == 0 {
        bail!("--concurrency and --rounds must be at least 1");
    }
    let logs = args.servers.engine.logs_dir()?;
    let redis_dir = logs.join("redis");
    std::fs::create_dir_all(&redis_dir)
        .with_context(|| format!("creating {}", redis_dir.display()))?;
    let durable: Vec<String> = ["--appendonly", "yes", "--appendfsync", "always", "--dir"]
        .into_iter()
        .map(str::to_owned)
        .chain([redis_dir.display().to_string()])
        .collect();
    let (_redis, redis_url) = args.servers.redis(&durable, &logs).await?;

    let db = logs.join("sqlite.db");
    let (mut sqlite, sqlite_addr, _, sqlite_prepared) = args
        .servers
        .engine
        .start(
            "sqlite",
            &[("OFFER__STORE__SYNC", "full".to_owned())],
            &logs,
        )
        .await?;
    let (mut on_redis, redis_engine_addr, _, redis_prepared) = args
        .servers
        .engine
        .start(
            "redis-engine",
            &[("OFFER__STORE__REDIS_URL", redis_url.clone())],
            &logs,
        )
        .await?;
    eprintln!(
        "engine on SQLite {} at {sqlite_addr}, engine on Redis {redis_url} \
         (appendfsync always) at {redis_engine_addr}; logs in {}",
        db.display(),
        logs.display()
    );
    let mut sqlite_sockets = ws_client::open_many(
        &format!("ws://{sqlite_addr}/v1/sdk/ws"),
        &sqlite_prepared.api_key,
        args.plan.concurrency,
        64,
    )
    .await
    .with_context(|| {
        format!(
            "opening the SQLite engine's sessions; {}",
            sqlite.log_tail()
        )
    })?;
    let mut redis_sockets = ws_client::open_many(
        &format!("ws://{redis_engine_addr}/v1/sdk/ws"),
        &redis_prepared.api_key,
        args.plan.concurrency,
        64,
    )
    .await
    .with_context(|| {
        format!(
            "opening the Redis engine's sessions; {}",
            on_redis.log_tail()
        )
    })?;

    let mut sqlite_entries = 0u64;
    if !args.plan.warmup.is_zero() {
        let s = engine_run(&mut sqlite_sockets, "warm", args.plan.warmup).await?;
        let r = engine_run(&mut redis_sockets, "warm", args.plan.warmup).await?;
        sqlite_entries += s.ok;
        eprintln!(
            "warm-up  sqlite {:>9.0} ops/s  redis {:>9.0} ops/s",
            s.ops_per_s(),
            r.ops_per_s()
        );
    }
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=args.plan.rounds {
        let label = format!("r{round}");
        let s = engine_run(&mut sqlite_sockets, &label, args.plan.duration).await?;
        sqlite.check_alive()?;
        sqlite_entries += s.ok;
        eprintln!(
            "round {round} sqlite  {:>9.0} ops/s ({} failed)",
            s.ops_per_s(),
            s.failed
        );
        runs[0].push(s);
        let r = engine_run(&mut redis_sockets, &label, args.plan.duration).await?;
        on_redis.check_alive()?;
        eprintln!(
            "round {round} redis   {:>9.0} ops/s ({} failed)",
            r.ops_per_s(),
            r.failed
        );
        runs[1].push(r);
    }
    drop(sqlite_sockets);
    drop(redis_sockets);
    let bytes = sqlite_bytes(&db);

    let [sqlite_runs, redis_runs] = runs;
    let mut out = format!(
        "\nWallet operations (currency_earned over WebSocket) at {} in flight, {} rounds of \
         {:?} alternating; SQLite sync = full against Redis appendfsync always\n",
        args.plan.concurrency, args.plan.rounds, args.plan.duration
    );
    out.push_str(&runs_report(
        "store",
        [
            ("SQLite (sync full)", &sqlite_runs),
            ("Redis (fsync always)", &redis_runs),
        ],
        "SQLite/Redis",
        0.5,
    ));
    if sqlite_entries > 0 {
        let per_entry = bytes as f64 / sqlite_entries as f64;
        out.push_str(&format!(
            "SQLite file with its log: {:.1} MB for {sqlite_entries} ledger entries (and setup): \
             {per_entry:.0} bytes per entry, {:.0} MB per million\n",
            bytes as f64 / 1e6,
            per_entry
        ));
    }
    print!("{out}");
    Ok(())
}
