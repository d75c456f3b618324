//! The Redis backend: shared state for several engine nodes, on one Redis server or on a
//! Redis Cluster (`store.redis_url`, see [`target::RedisTarget`]).
//!
//! Each group of store calls is implemented in a file of its own: `documents.rs` (documents,
//! compare-and-swap, versioned writes, counters), `money/` (the wallet step and its reads),
//! `retention.rs` (old idempotency records and ledger lines), `decisions.rs`, `expiring.rs`
//! (short-lived documents), `exposures.rs` (the per-player totals of experiments),
//! `erasure.rs` (an erased player's records renamed) and `bus.rs` (the inter-node bus); this file holds the connection and the readiness check.
//! Every script is a file of its own (`scripts/*.lua`, and the wallet's in `money/`).
//!
//! Commands go through one command connection (`redis/conn.rs`: a multiplexed connection
//! to the server, or the cluster-aware connection that sends each command to the master
//! owning its key), which reconnects by itself; a background task (`redis/bus.rs`) holds a
//! separate pub/sub connection to one node, forwards bus messages into a `broadcast` channel
//! and reconnects with backoff, to the next configured node, when that node goes away.
//!
//! Every call is bounded by the store's timeout and answers [`StoreError::Unavailable`]
//! instead of hanging, so the HTTP edge can answer `503` within 2 seconds, the bound on every
//! answer. On a cluster, a master that is down makes the calls on its slots answer
//! `Unavailable` while the other masters keep serving theirs; `ping` (readiness) is the
//! cluster's own verdict, `cluster_state:ok` in `CLUSTER INFO`.
//!
//! Key layout: see [`super::keys`].
//!
//! # On a Redis Cluster
//!
//! A cluster refuses a script, a multi-key command or a pipeline whose keys hash to different
//! slots. Every call here touches one slot:
//!
//! - the wallet script's keys, eight per event (tx record, kill level, wallet, ledger, day
//!   aggregate, lifetime spend, receive times, day spend), of one game per call, and the
//!   day-aggregate pipeline all carry the game's `{game_id}` hash tag, so they live in the
//!   game's slot;
//! - a versioned write (the catalogue's compare-and-swap) is one script over two hashes of
//!   one game (its version document and its collection), so one slot;
//! - a write with its record (a change of a game's objects and its audit record) is one
//!   script over at most three hashes of one game (the written ones and the game's audit
//!   trail), so one slot;
//! - a batch of decision records is one `MULTI` of `SET`s of one game's keys (one slot);
//! - an experiment exposure is one `MULTI` of `HINCRBY`s of one hash (one key);
//! - a player's erasure is a `SCAN` of the master holding the game's slot (the command
//!   names no key, so it is routed to that master), then one script over one game's and
//!   environment's keys (one slot);
//! - a player's data export walks the game's decision records the same way, one `MGET`
//!   of the game's keys per page;
//! - every other call (documents, compare-and-swap script, kill level, balance, spend,
//!   ledger, one decision record, one short-lived document and its compare-and-swap script)
//!   names exactly one key;
//! - the deployment-wide collections (`<prefix>:global:<name>`) are one hash each, reached
//!   only by single-key calls, so each sits in the slot of its own name;
//! - the bus channel is not a key to the server: a `PUBLISH` is accepted by any node and
//!   carried to every node (`redis/bus.rs` says why classic pub/sub rather than sharded).
//!   The client sends it to the node owning the channel name's slot, or to another
//!   connected node while that one is down.
//!
//! # The wallet step
//!
//! One Lua script, atomic on the server, makes every check of a money event before its first
//! write; one game's events share script calls under load. `redis/money/` says how.
//!
//! # Durability
//!
//! The engine acknowledges a money event once the script returns. For no acknowledged event
//! to be lost on a crash, the operator runs Redis with `appendonly yes` and
//! `appendfsync always`; `everysec` may lose about the last second.
//!
//! Bus messages published while this node's pub/sub connection is down are not received by
//! it; nodes that reconnect should reload what they cache.

mod batcher;
mod bus;
mod conn;
mod decisions;
mod documents;
mod erasure;
mod expiring;
mod exposures;
mod money;
mod money_keys;
mod retention;
mod scan;
pub mod target;
mod tx_layout;

use std::future::Future;
use std::time::Duration;

use ::redis::{Client, ErrorKind, RedisError, RedisResult, Script, ServerErrorKind};
use async_trait::async_trait;

use self::batcher::MoneyBatcher;
use self::bus::BusListener;
use self::conn::CommandConn;
use self::money::MoneyScripts;
use self::money_keys::MoneyKeyCache;
use self::target::RedisTarget;
use super::keys::Keys;
use super::{Store, StoreError, StoreResult};

/// The Redis backend. Dropping it stops its bus listener.
pub struct RedisStore {
    conn: CommandConn,
    keys: Keys,
    timeout: Duration,
    bus: BusListener,
    money: MoneyBatcher,
    money_keys: MoneyKeyCache,
    versioned_script: Script,
    recorded_script: Script,
    forget_script: Script,
    trim_script: Script,
    swap_expiring_script: Script,
    per_player_script: Script,
    erase_script: Script,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("keys", &self.keys)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Maps a Redis error: unreadable replies are corrupt data, and so is a command whose keys
/// span hash slots on a cluster (a bug of this build, never a passing state); everything else
/// (connection lost, refused, cluster down, slot moving, server error) means the backend
/// cannot serve now.
fn map_err(what: &str, err: &RedisError) -> StoreError {
    match err.kind() {
        ErrorKind::Parse
        | ErrorKind::UnexpectedReturnType
        | ErrorKind::Server(ServerErrorKind::CrossSlot) => {
            StoreError::Corrupt(format!("{what}: {err}"))
        }
        _ => StoreError::Unavailable(format!("{what}: {err}")),
    }
}

/// Runs one Redis call within `timeout`.
async fn bounded<T>(
    timeout: Duration,
    what: &str,
    fut: impl Future<Output = RedisResult<T>>,
) -> StoreResult<T> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(map_err(what, &err)),
        Err(_) => Err(StoreError::Unavailable(format!(
            "{what}: no answer within {timeout:?}"
        ))),
    }
}

/// The `import`/`holdout` flags as script arguments.
fn flag(value: bool) -> &'static str {
    if value { "1" } else { "0" }
}

impl RedisStore {
    /// Connects to `url` (one of the forms of [`RedisTarget`]: one server or a Redis
    /// Cluster), keys under `prefix`, every call bounded by `timeout`. Fails with
    /// [`StoreError::Unavailable`] when Redis cannot be reached within `timeout`, so a
    /// misconfigured node refuses to start instead of serving errors.
    pub async fn connect(url: &str, prefix: &str, timeout: Duration) -> StoreResult<RedisStore> {
        let target = RedisTarget::parse(url)
            .map_err(|err| StoreError::Unavailable(format!("bad Redis URL: {err}")))?;
        let versioned_script = Script::new(documents::VERSIONED_LUA);
        let recorded_script = Script::new(documents::RECORDED_LUA);
        let forget_script = Script::new(retention::FORGET_TX_LUA);
        let trim_script = Script::new(retention::TRIM_LEDGER_LUA);
        let swap_expiring_script = Script::new(expiring::SWAP_EXPIRING_LUA);
        let per_player_script = Script::new(tx_layout::PER_PLAYER_LUA);
        let erase_script = Script::new(erasure::ERASE_PLAYER_LUA);
        let mut conn = bounded(timeout, "connect", CommandConn::open(&target, timeout)).await?;
        let money = MoneyBatcher::new(conn.clone(), MoneyScripts::new(), timeout);
        // Load the scripts once (on a cluster, into every master); after a restart
        // `invoke_async` reloads them itself.
        bounded(timeout, "load scripts", async {
            for script in money.scripts().all() {
                script.prepare_invoke().load_async(&mut conn).await?;
            }
            versioned_script
                .prepare_invoke()
                .load_async(&mut conn)
                .await?;
            recorded_script
                .prepare_invoke()
                .load_async(&mut conn)
                .await?;
            forget_script.prepare_invoke().load_async(&mut conn).await?;
            trim_script.prepare_invoke().load_async(&mut conn).await?;
            swap_expiring_script
                .prepare_invoke()
                .load_async(&mut conn)
                .await?;
            per_player_script
                .prepare_invoke()
                .load_async(&mut conn)
                .await?;
            erase_script.prepare_invoke().load_async(&mut conn).await?;
            Ok(())
        })
        .await?;
        let keys = Keys::new(prefix);
        let nodes = target
            .nodes()
            .iter()
            .map(|node| Client::open(node.clone()))
            .collect::<RedisResult<Vec<_>>>()
            .map_err(|err| map_err("bus", &err))?;
        let bus = BusListener::start(nodes, keys.bus(), timeout).await?;
        tracing::info!(%target, prefix, "store connected");
        Ok(RedisStore {
            conn,
            money_keys: MoneyKeyCache::new(keys.clone()),
            keys,
            timeout,
            bus,
            money,
            versioned_script,
            recorded_script,
            forget_script,
            trim_script,
            swap_expiring_script,
            per_player_script,
            erase_script,
        })
    }

    /// The value of a string key (a decision record, a short-lived document), if present.
    async fn get_string(&self, what: &str, key: String) -> StoreResult<Option<Vec<u8>>> {
        let mut cmd = ::redis::cmd("GET");
        cmd.arg(key);
        self.query(what, &cmd).await
    }

    /// Sends one command and reads its reply, within the timeout.
    async fn query<T: ::redis::FromRedisValue>(
        &self,
        what: &str,
        cmd: &::redis::Cmd,
    ) -> StoreResult<T> {
        let mut conn = self.conn.clone();
        bounded(self.timeout, what, cmd.query_async(&mut conn)).await
    }
}

#[async_trait]
impl Store for RedisStore {
    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        bounded(self.timeout, "ping", conn.check()).await
    }
}
