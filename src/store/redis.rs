//! The Redis backend: shared state for several engine nodes, on one Redis server or on a
//! Redis Cluster (`store.redis_url`, see [`target::RedisTarget`]).
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
//! - a batch of decision records is one `MULTI` of `SET`s of one game's keys (one slot);
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
//! [`Store::apply_money`] is one Lua script (`redis/money.rs`), atomic on the server, which
//! makes every check of an event before its first write: the idempotency hash, the kill
//! level, the balance. Only then does it write the balance, the idempotency record, the
//! ledger entry and the day aggregate. A call of many events runs a second script with the
//! same rules, which reads each tx hash and kill key once, keeps the balances in the call, and
//! combines the writes after the balance into one command per key (see `redis/money.rs`).
//!
//! One game's events share script calls under load (`redis/batcher.rs`): an event of a game
//! with fewer than two calls in flight goes at once, alone; events of that game arriving
//! while two are out queue, and go together in the next call, at most 64 to a call, each
//! with its own checks and its own answer. So a busy game makes one round trip per batch instead of one
//! per event, and a quiet one waits for nothing. A refused event does not touch the others
//! of its call; a call that fails (Redis down, no answer in time) answers each of its events
//! `Unavailable`. [`RedisStore::apply_money_alone`] is the one-call-per-event path, kept as
//! the load tool's baseline.
//!
//! Imported spends skip the balance check (history has no opening balance) but still move
//! the balance, so a wallet may go negative while history is replayed out of order; the
//! ledger and the aggregates stay complete, and the balance always equals the ledger's sum.
//!
//! Lua numbers are doubles, so balances are exact up to 2^53 units.
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
mod money;
mod money_keys;
pub mod target;
mod tx_layout;

use std::future::Future;
use std::time::Duration;

use ::redis::{Client, ErrorKind, RedisError, RedisResult, Script, ServerErrorKind};
use async_trait::async_trait;
use chrono::{DateTime, NaiveDate, Utc};
use offer_domain::environment::Environment;
use offer_wire::bus::BusMessage;
use tokio::sync::broadcast;
use uuid::Uuid;

use self::batcher::MoneyBatcher;
use self::bus::BusListener;
use self::conn::CommandConn;
use self::money::{MoneyCall, MoneyScripts};
use self::money_keys::MoneyKeyCache;
use self::target::RedisTarget;
use super::keys::Keys;
use super::{
    COHORT_SEPARATOR, Collection, DayAggregate, LedgerEntry, MoneyOp, MoneyOutcome, Store,
    StoreError, StoreResult,
};

/// Documents asked for per `HSCAN` page of [`Store::list`].
const LIST_PAGE: usize = 10_000;

/// Forgets the oldest idempotency records received before a time. KEYS: the records' hash,
/// the sorted set of their receive times (one game and environment: one slot). ARGV: the
/// time in Unix milliseconds (exclusive), the most records to forget. Returns how many.
const FORGET_TX_LUA: &str = r#"
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #ids == 0 then return 0 end
redis.call('HDEL', KEYS[1], unpack(ids))
redis.call('ZREM', KEYS[2], unpack(ids))
return #ids
"#;

/// Drops the oldest raw ledger lines received before a time. KEYS: the ledger list. ARGV:
/// the time in Unix milliseconds (exclusive), the most lines to drop. Lines are appended in
/// the order they are received, so the old ones are a prefix; a line without a receive time
/// (written before lines carried one) ends the prefix and is kept. Returns how many.
const TRIM_LEDGER_LUA: &str = r#"
local lines = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local before = tonumber(ARGV[1])
local n = 0
for _, line in ipairs(lines) do
  local rx = string.match(line, '^{"rx":(%d+),')
  if not rx or tonumber(rx) >= before then break end
  n = n + 1
end
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return n
"#;

/// Compare-and-swap of a short-lived document, keeping its time to live. KEYS: the
/// document's key. ARGV: expected value, new value.
const SWAP_EXPIRING_LUA: &str = r#"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return 1
"#;

/// A versioned write of a collection. KEYS: the version hash, the collection's hash (one
/// game's: one slot). ARGV: version field, expect present (1/0), expected version, new
/// version, then the entries as field, value pairs. With no entries it is the
/// compare-and-swap of one hash field.
const VERSIONED_LUA: &str = r#"
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
  if cur ~= ARGV[3] then return 0 end
elseif cur then
  return 0
end
for i = 5, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1
"#;

/// The Redis backend. Dropping it stops its bus listener.
pub struct RedisStore {
    conn: CommandConn,
    keys: Keys,
    timeout: Duration,
    bus: BusListener,
    money: MoneyBatcher,
    money_keys: MoneyKeyCache,
    versioned_script: Script,
    forget_script: Script,
    trim_script: Script,
    swap_expiring_script: Script,
    per_player_script: Script,
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
    /// The versioned write script: `new_version` into `version` (a field of that hash) and
    /// `entries` into `coll`, only if the version still equals `expected`.
    async fn versioned_write(
        &self,
        (version, version_id): (Collection, &str),
        expected: Option<&[u8]>,
        new_version: Vec<u8>,
        coll: Collection,
        entries: Vec<(String, Vec<u8>)>,
    ) -> StoreResult<bool> {
        let mut invocation = self.versioned_script.key(self.keys.collection(version));
        invocation
            .key(self.keys.collection(coll))
            .arg(version_id)
            .arg(flag(expected.is_some()))
            .arg(expected.unwrap_or_default())
            .arg(new_version);
        for (id, value) in &entries {
            invocation.arg(id).arg(value);
        }
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "put_all_versioned",
            invocation.invoke_async(&mut conn),
        )
        .await
    }

    /// Connects to `url` (one of the forms of [`RedisTarget`]: one server or a Redis
    /// Cluster), keys under `prefix`, every call bounded by `timeout`. Fails with
    /// [`StoreError::Unavailable`] when Redis cannot be reached within `timeout`, so a
    /// misconfigured node refuses to start instead of serving errors.
    pub async fn connect(url: &str, prefix: &str, timeout: Duration) -> StoreResult<RedisStore> {
        let target = RedisTarget::parse(url)
            .map_err(|err| StoreError::Unavailable(format!("bad Redis URL: {err}")))?;
        let versioned_script = Script::new(VERSIONED_LUA);
        let forget_script = Script::new(FORGET_TX_LUA);
        let trim_script = Script::new(TRIM_LEDGER_LUA);
        let swap_expiring_script = Script::new(SWAP_EXPIRING_LUA);
        let per_player_script = Script::new(tx_layout::PER_PLAYER_LUA);
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
            forget_script,
            trim_script,
            swap_expiring_script,
            per_player_script,
        })
    }

    /// The money keys of a game and environment, once this node has brought their
    /// idempotency records to the per-player layout.
    async fn money_keys_of(
        &self,
        game_id: Uuid,
        env: Environment,
    ) -> StoreResult<std::sync::Arc<money_keys::MoneyKeys>> {
        let keys = self.money_keys.get(game_id, env);
        tx_layout::ensure_per_player(&self.per_player_script, &self.conn, &keys, self.timeout)
            .await?;
        Ok(keys)
    }

    /// Applies one money event in a script call of its own, never combined with other
    /// events of its game: one round trip per event, as every event went before the
    /// batching. The engine always uses [`Store::apply_money`]; this is the baseline the
    /// load tool measures it against.
    pub async fn apply_money_alone(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
        let keys = self.money_keys_of(op.game_id, op.env).await?;
        self.money.apply_alone(&MoneyCall::new(&keys, op)?).await
    }

    /// Runs a retention script over `keys` (one game's: one slot): drops at most `limit`
    /// entries received before `before`; how many it dropped.
    async fn prune(
        &self,
        what: &str,
        script: &Script,
        keys: &[String],
        before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<usize> {
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(key);
        }
        invocation.arg(before.timestamp_millis()).arg(limit.max(1));
        let mut conn = self.conn.clone();
        bounded(self.timeout, what, invocation.invoke_async(&mut conn)).await
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

/// Reads one day hash back into its aggregate.
fn parse_day(fields: std::collections::HashMap<String, i64>) -> DayAggregate {
    let mut day = DayAggregate::default();
    for (field, value) in fields {
        let (side, rest) = match field.split_once(':') {
            Some((side @ ("earned" | "spent"), rest)) => (side, rest),
            _ => ("", field.as_str()),
        };
        let target = match rest.split_once(COHORT_SEPARATOR) {
            Some((cur, cohort)) if !side.is_empty() => {
                let flows = day.cohorts.entry(cohort.to_owned()).or_default();
                Some((
                    cur,
                    if side == "earned" {
                        &mut flows.earned
                    } else {
                        &mut flows.spent
                    },
                ))
            }
            None if side == "earned" => Some((rest, &mut day.earned)),
            None if side == "spent" => Some((rest, &mut day.spent)),
            _ => None,
        };
        if let Some((cur, map)) = target {
            map.insert(cur.to_owned(), value);
        } else if field == "rev_t" {
            day.revenue_treatment_cents = value;
        } else if field == "rev_c" {
            day.revenue_control_cents = value;
        }
    }
    day
}

#[async_trait]
impl Store for RedisStore {
    async fn ping(&self) -> StoreResult<()> {
        let mut conn = self.conn.clone();
        bounded(self.timeout, "ping", conn.check()).await
    }

    async fn add_counters(
        &self,
        coll: Collection,
        deltas: Vec<(String, i64)>,
    ) -> StoreResult<Vec<(String, i64)>> {
        let key = self.keys.collection(coll);
        // One transaction on one key: its slot on a cluster.
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for (name, delta) in &deltas {
            pipe.cmd("HINCRBY").arg(&key).arg(name).arg(*delta).ignore();
        }
        pipe.cmd("HGETALL").arg(&key);
        let mut conn = self.conn.clone();
        let (all,): (Vec<(String, i64)>,) =
            bounded(self.timeout, "add_counters", pipe.query_async(&mut conn)).await?;
        Ok(all)
    }

    async fn get(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(self.keys.collection(coll)).arg(id);
        self.query("get", &cmd).await
    }

    /// Pages through the collection with `HSCAN`, each page one round trip bounded by the
    /// store's timeout: a game's population of a million players is read in about a hundred
    /// pages instead of one `HGETALL` that no timeout fits and that would hold Redis up for
    /// every other client meanwhile. A small collection comes back in one page. The pages are
    /// not one snapshot: a document written during the scan is read with either value, and
    /// one that is there from start to end is read once (a repeat from a rehash is merged).
    async fn list(&self, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>> {
        let key = self.keys.collection(coll);
        let mut all: std::collections::HashMap<String, Vec<u8>> = std::collections::HashMap::new();
        let mut cursor: u64 = 0;
        loop {
            let mut cmd = ::redis::cmd("HSCAN");
            cmd.arg(&key).arg(cursor).arg("COUNT").arg(LIST_PAGE);
            let (next, page): (u64, std::collections::HashMap<String, Vec<u8>>) =
                self.query("list", &cmd).await?;
            all.extend(page);
            if next == 0 {
                return Ok(all.into_iter().collect());
            }
            cursor = next;
        }
    }

    async fn put_all(&self, coll: Collection, entries: Vec<(String, Vec<u8>)>) -> StoreResult<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let mut cmd = ::redis::cmd("HSET");
        cmd.arg(self.keys.collection(coll));
        for (id, value) in &entries {
            cmd.arg(id).arg(value);
        }
        self.query::<i64>("put_all", &cmd).await?;
        Ok(())
    }

    async fn insert_new(&self, coll: Collection, id: &str, value: Vec<u8>) -> StoreResult<bool> {
        let mut cmd = ::redis::cmd("HSETNX");
        cmd.arg(self.keys.collection(coll)).arg(id).arg(value);
        self.query("insert_new", &cmd).await
    }

    async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        // A versioned write of no entries: the version field is the document itself (one
        // key, so any collection, global ones too).
        self.versioned_write((coll, id), expected, new, coll, Vec::new())
            .await
    }

    async fn put_all_versioned(
        &self,
        version: Collection,
        version_id: &str,
        expected: Option<&[u8]>,
        new_version: Vec<u8>,
        coll: Collection,
        entries: Vec<(String, Vec<u8>)>,
    ) -> StoreResult<bool> {
        version.same_game(coll)?;
        self.versioned_write((version, version_id), expected, new_version, coll, entries)
            .await
    }

    async fn delete(&self, coll: Collection, id: &str) -> StoreResult<bool> {
        let mut cmd = ::redis::cmd("HDEL");
        cmd.arg(self.keys.collection(coll)).arg(id);
        self.query("delete", &cmd).await
    }

    async fn set_kill_level(&self, game_id: Uuid, level: u8) -> StoreResult<()> {
        let mut cmd = ::redis::cmd("SET");
        cmd.arg(self.keys.kill(game_id)).arg(level);
        self.query::<String>("set_kill_level", &cmd).await?;
        Ok(())
    }

    /// Applies the event at once when nothing of its game is in flight, else in the game's
    /// next batch (see the module documentation).
    async fn apply_money(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
        let call = MoneyCall::new(&*self.money_keys_of(op.game_id, op.env).await?, op)?;
        self.money.apply(op.game_id, call).await
    }

    async fn forget_tx_before(
        &self,
        game_id: Uuid,
        env: Environment,
        before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<usize> {
        let keys = [
            self.keys.tx(game_id, env),
            self.keys.tx_received(game_id, env),
        ];
        self.prune(
            "forget_tx_before",
            &self.forget_script,
            &keys,
            before,
            limit,
        )
        .await
    }

    async fn trim_ledger_before(
        &self,
        game_id: Uuid,
        env: Environment,
        before: DateTime<Utc>,
        limit: usize,
    ) -> StoreResult<usize> {
        let keys = [self.keys.ledger(game_id, env)];
        self.prune(
            "trim_ledger_before",
            &self.trim_script,
            &keys,
            before,
            limit,
        )
        .await
    }

    async fn spend_cents(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> StoreResult<i64> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(self.keys.spend(game_id, env)).arg(player_id);
        let spend: Option<i64> = self.query("spend_cents", &cmd).await?;
        Ok(spend.unwrap_or(0))
    }

    async fn spends(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<(String, i64)>> {
        let mut cmd = ::redis::cmd("HGETALL");
        cmd.arg(self.keys.spend(game_id, env));
        self.query("spends", &cmd).await
    }

    async fn balance(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currency_id: &str,
    ) -> StoreResult<i64> {
        let mut cmd = ::redis::cmd("HGET");
        cmd.arg(self.keys.wallet(game_id, env, player_id))
            .arg(currency_id);
        let balance: Option<i64> = self.query("balance", &cmd).await?;
        Ok(balance.unwrap_or(0))
    }

    async fn ledger(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>> {
        let mut cmd = ::redis::cmd("LRANGE");
        cmd.arg(self.keys.ledger(game_id, env)).arg(0).arg(-1);
        let lines: Vec<Vec<u8>> = self.query("ledger", &cmd).await?;
        lines
            .iter()
            .map(|line| {
                serde_json::from_slice(line)
                    .map_err(|err| StoreError::Corrupt(format!("ledger entry: {err}")))
            })
            .collect()
    }

    async fn day_aggregates(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<DayAggregate>> {
        if days.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = ::redis::pipe();
        for day in days {
            pipe.cmd("HGETALL").arg(self.keys.day(game_id, env, *day));
        }
        let mut conn = self.conn.clone();
        let hashes: Vec<std::collections::HashMap<String, i64>> =
            bounded(self.timeout, "day_aggregates", pipe.query_async(&mut conn)).await?;
        Ok(hashes.into_iter().map(parse_day).collect())
    }

    async fn day_revenues(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<Vec<(String, i64)>>> {
        if days.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = ::redis::pipe();
        for day in days {
            pipe.cmd("HGETALL")
                .arg(self.keys.spend_day(game_id, env, *day));
        }
        let mut conn = self.conn.clone();
        let hashes: Vec<Vec<(String, i64)>> =
            bounded(self.timeout, "day_revenues", pipe.query_async(&mut conn)).await?;
        Ok(hashes)
    }

    async fn put_decisions(
        &self,
        game_id: Uuid,
        records: Vec<(Uuid, Vec<u8>)>,
        ttl: Duration,
    ) -> StoreResult<()> {
        if records.is_empty() {
            return Ok(());
        }
        // At least a millisecond: Redis refuses a time to live of 0.
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        // One transaction: the keys share the game's hash tag, so on a cluster they live in
        // one slot and `MULTI` stays legal.
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for (id, value) in &records {
            pipe.cmd("SET")
                .arg(self.keys.decision(game_id, *id))
                .arg(value)
                .arg("PX")
                .arg(ttl_ms)
                .ignore();
        }
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "put_decisions",
            pipe.query_async::<()>(&mut conn),
        )
        .await
    }

    async fn get_decision(&self, game_id: Uuid, decision_id: Uuid) -> StoreResult<Option<Vec<u8>>> {
        self.get_string("get_decision", self.keys.decision(game_id, decision_id))
            .await
    }

    async fn insert_expiring(
        &self,
        coll: Collection,
        id: &str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> StoreResult<bool> {
        // At least a millisecond: Redis refuses a time to live of 0.
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut cmd = ::redis::cmd("SET");
        cmd.arg(self.keys.expiring(coll, id))
            .arg(value)
            .arg("PX")
            .arg(ttl_ms)
            .arg("NX");
        let written: Option<String> = self.query("insert_expiring", &cmd).await?;
        Ok(written.is_some())
    }

    async fn get_expiring(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.get_string("get_expiring", self.keys.expiring(coll, id))
            .await
    }

    async fn swap_expiring(
        &self,
        coll: Collection,
        id: &str,
        expected: &[u8],
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        let mut invocation = self.swap_expiring_script.key(self.keys.expiring(coll, id));
        invocation.arg(expected).arg(new);
        let mut conn = self.conn.clone();
        let swapped: i64 = bounded(
            self.timeout,
            "swap_expiring",
            invocation.invoke_async(&mut conn),
        )
        .await?;
        Ok(swapped == 1)
    }

    async fn publish(&self, msg: &BusMessage) -> StoreResult<()> {
        let payload = serde_json::to_vec(msg)
            .map_err(|err| StoreError::Corrupt(format!("bus message: {err}")))?;
        let mut cmd = ::redis::cmd("PUBLISH");
        cmd.arg(self.keys.bus()).arg(payload);
        self.query::<i64>("publish", &cmd).await?;
        Ok(())
    }

    fn subscribe(&self) -> broadcast::Receiver<BusMessage> {
        self.bus.subscribe()
    }
}
