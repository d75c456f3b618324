//! The wallet scripts and one call of them: the money events of one game, each applied in
//! order with every check of its own, each answered on its own.
//!
//! Both scripts take event `i` (from 0) as the eight keys `KEYS[8i+1..8i+8]` and the twelve
//! arguments `ARGV[12i+1..12i+12]`, and reply two strings per event, in order. Every key of
//! every event carries its game's hash tag, so a call of one game's events is one slot on a
//! Redis Cluster and the scripts stay legal there. A call of one event runs [`ONE_LUA`], a
//! call of more [`MANY_LUA`]: measured in Redis's own CPU, the combined script costs about
//! half again as much as the single one for a lone event, slightly more per event at two
//! events a call, the same at four, and less beyond (about 10 to 15% less per event at 16
//! to 64).
//!
//! [`ONE_LUA`] makes every check before its first write, then writes one command at a time:
//! the idempotency hash (a known tx id answers `Duplicate` with the stored balance, or
//! `conflict` when the change differs), the kill level (3 answers `KillSwitch`), for a
//! non-imported spend the balance; then the balance (`HINCRBY`; for a purchase the lifetime
//! spend) under `redis.pcall`, the idempotency record, the receive time, the ledger entry and
//! the day aggregate. A read or a later write the server refuses stops the script, and the
//! event answers the error.
//!
//! [`MANY_LUA`] keeps every one of these rules for each event and answers each as it would be
//! answered alone, but reads first, then decides every event in order, then writes, so that
//! a call costs a few commands per call and about one per event instead of about eight per
//! event:
//!
//! 1. Reads that would stop the script come before any write: one `HMGET` of every tx id of
//!    the call per tx hash, one `GET` per kill key. A key there of the wrong type fails the
//!    whole call with nothing written.
//! 2. Each event in order makes every check before its own first write, seeing the events
//!    before it in the call: (a) the idempotency record (a known tx id, from the server or
//!    applied earlier in this call, answers `Duplicate` with the stored balance, or
//!    `conflict` when the change differs), (b) the kill level (3 answers `KillSwitch`), (c) for
//!    a non-imported spend, the balance, read once per wallet and currency under
//!    `redis.pcall` (a wallet the server cannot read fails that event alone) and from then on
//!    kept in the call as each event changes it. A refused event writes nothing and the next
//!    event goes on.
//! 3. The event's first write runs at once under `redis.pcall`: the balance `HINCRBY` (its
//!    reply is the balance the call keeps), or for a purchase the lifetime spend. If the
//!    server refuses it (an increment that would overflow 64 bits, a key of the wrong type)
//!    the event answers an error of its own, having written nothing, and the others go on.
//! 4. Its other writes wait for the end of the call, combined per key: one `HSET` per tx hash
//!    of every idempotency record (first, so that every balance written has its record before
//!    anything else can fail), one `ZADD` per receive-time set, one `RPUSH` per ledger of its
//!    entries in arrival order, and one `HINCRBY` per (key, field) of the day aggregates and
//!    the purchase days, summed in the call (an amount whose sum could pass 2^53, beyond
//!    which a Lua number is no longer exact, is added on its own). One of these failing (a day
//!    total overflowing, a key of the wrong type) stops the script: the balances and records
//!    written stay, and the whole call answers the error.
//!
//! The ledger entry is the JSON of a [`LedgerEntry`](super::super::LedgerEntry), built by
//! Rust with serde's field names except `balance_after`, which the script appends. The day
//! aggregate fields are `earned:<cur>`, `spent:<cur>` (and the same with `@<cohort>`),
//! `rev_t` for treatment revenue and `rev_c` for holdout.

use std::sync::Arc;
use std::time::Duration;

use ::redis::Script;
use chrono::Utc;

use super::super::{MoneyKind, MoneyOp, MoneyOutcome, StoreError, StoreResult};
use super::conn::CommandConn;
use super::money_keys::MoneyKeys;
use super::{bounded, flag};

/// The part of both scripts that answers an event whose tx id has a record (`prev`): the
/// stored balance when the change is the same, a conflict when it differs.
macro_rules! known_tx {
    () => {
        r#"  if prev then
    local sep = string.find(prev, '|', 1, true)
    if sep and string.sub(prev, sep + 1) == ARGV[a + 9] then
      return 'duplicate', string.sub(prev, 1, sep - 1)
    end
    return 'conflict', '0'
  end
"#
    };
}

/// The event's first write, under `redis.pcall`: refused by the server (an overflow, a key of
/// the wrong type), it answers this event's error with nothing of it written.
macro_rules! first_write {
    () => {
        r#"  -- The first write: refused by the server, it leaves this event unwritten.
  local first
  if kind == 'earned' then
    first = redis.pcall('HINCRBY', wallet, cur, amount)
  elseif kind == 'spent' then
    first = redis.pcall('HINCRBY', wallet, cur, ARGV[a + 5])
  else
    first = redis.pcall('HINCRBY', KEYS[k + 6], ARGV[a + 10], amount)
  end
  if type(first) == 'table' and first.err then return 'error', first.err end
"#
    };
}

/// The event's day totals, through the script's own `add` (one command at once in the
/// single-event script, summed per key and field in the combined one), and its answer.
macro_rules! day_totals {
    () => {
        r#"  local cohort = ARGV[a + 12]
  if kind == 'earned' or kind == 'spent' then
    local field = kind .. ':' .. cur
    add(KEYS[k + 5], field, amount)
    if cohort ~= '' then add(KEYS[k + 5], field .. '@' .. cohort, amount) end
  elseif ARGV[a + 7] == '1' then
    add(KEYS[k + 5], 'rev_c', amount)
  else
    add(KEYS[k + 5], 'rev_t', amount)
  end
  return 'applied', b
end
"#
    };
}

/// The wallet step over exactly one event, with the keys and arguments of [`MANY_LUA`]: each
/// check and write one command as it comes. A call of one event costs Redis less this way than
/// through [`MANY_LUA`], whose tables and deferred writes pay off only from a few events a call.
pub(super) const ONE_LUA: &str = concat!(
    r#"
local function add(key, field, amount)
  redis.call('HINCRBY', key, field, amount)
end
local function step(k, a)
  local wallet = KEYS[k + 3]
  local prev = redis.call('HGET', KEYS[k + 1], ARGV[a + 1])
"#,
    known_tx!(),
    r#"  local level = tonumber(redis.call('GET', KEYS[k + 2]) or '0') or 0
  -- 3 is KillLevel::SdkOff: from that level on the SDK is off and money events are refused.
  if level >= 3 then return 'kill', '0' end
  local kind = ARGV[a + 2]
  local cur = ARGV[a + 3]
  local amount = ARGV[a + 4]
  local bal = 0
  if kind ~= 'purchase' then
    bal = tonumber(redis.call('HGET', wallet, cur) or '0') or 0
    if kind == 'spent' and ARGV[a + 6] ~= '1' and bal < tonumber(amount) then
      return 'insufficient', string.format('%d', bal)
    end
  end
"#,
    first_write!(),
    r#"  if kind == 'purchase' then
    add(KEYS[k + 8], ARGV[a + 10], amount)
  else
    bal = first
  end
  local b = string.format('%d', bal)
  redis.call('HSET', KEYS[k + 1], ARGV[a + 1], b .. '|' .. ARGV[a + 9])
  redis.call('ZADD', KEYS[k + 7], ARGV[a + 11], ARGV[a + 1])
  redis.call('RPUSH', KEYS[k + 4], ARGV[a + 8] .. ',"balance_after":' .. b .. '}')
"#,
    day_totals!(),
    r#"local outcome, balance = step(0, 0)
return {outcome, balance}
"#
);

/// The wallet step over two or more events (it is correct for one too). Per event, KEYS: tx
/// hash, kill key, wallet hash, ledger list, day hash, spend hash, tx receive-time sorted set,
/// spend-day hash.
/// ARGV: tx id, kind, currency, amount, -amount, import (1/0), holdout (1/0), ledger JSON
/// without its closing brace, fingerprint, player id, receive time, install cohort (empty
/// when unknown). The tx record is `<balance>|<fingerprint>`. Replies, per event, an outcome
/// and a balance (or `error` and the server's message).
pub(super) const MANY_LUA: &str = concat!(
    r#"
local n = #KEYS / 8
-- Every read that may stop the script comes before the first write: the idempotency records
-- of every tx id of the call (one HMGET per tx hash) and the kill level (one GET per kill
-- key). recs[tx hash][tx id] is the record, or false when the tx id is unknown.
-- group[key] is a list of values, made on the key's first use; group's own array part keeps
-- the keys in the order of their first use.
local function list_of(group, key)
  local list = group[key]
  if not list then
    list = {}
    group[key] = list
    group[#group + 1] = key
  end
  return list
end
local recs, kills = {}, {}
do
  local ids = {}
  for i = 0, n - 1 do
    local list = list_of(ids, KEYS[i * 8 + 1])
    list[#list + 1] = ARGV[i * 12 + 1]
  end
  for _, key in ipairs(ids) do
    local list = ids[key]
    local got = redis.call('HMGET', key, unpack(list))
    local map = {}
    for j = 1, #list do map[list[j]] = got[j] end
    recs[key] = map
  end
  for i = 0, n - 1 do
    local key = KEYS[i * 8 + 2]
    if kills[key] == nil then
      kills[key] = tonumber(redis.call('GET', key) or '0') or 0
    end
  end
end
-- bals[wallet][currency]: the balance as this call last read or changed it.
local bals = {}
-- The later writes, in the order of first use per key: values to append per key, and sums
-- to add per (key, field).
local lists = {HSET = {}, ZADD = {}, RPUSH = {}}
local sums, sum_order = {}, {}
local function append(cmd, key, x, y)
  local list = list_of(lists[cmd], key)
  list[#list + 1] = x
  if y then list[#list + 1] = y end
end
-- A sum stays exact while it and each amount are below 2^53 (Lua numbers are doubles); an
-- amount that could break that is added on its own.
local EXACT = 9007199254740992
local function add(key, field, amount)
  local fields = sums[key]
  if not fields then
    fields = {}
    sums[key] = fields
  end
  local entry = fields[field]
  if not entry then
    entry = {sum = 0, summed = false, alone = {}}
    fields[field] = entry
    sum_order[#sum_order + 1] = {key, field}
  end
  local v = tonumber(amount)
  if v and math.abs(v) < EXACT and math.abs(entry.sum + v) < EXACT then
    entry.sum = entry.sum + v
    entry.summed = true
  else
    entry.alone[#entry.alone + 1] = amount
  end
end
local function step(k, a)
  local txs, id = KEYS[k + 1], ARGV[a + 1]
  local prev = recs[txs][id]
"#,
    known_tx!(),
    r#"  -- 3 is KillLevel::SdkOff: from that level on the SDK is off and money events are refused.
  if kills[KEYS[k + 2]] >= 3 then return 'kill', '0' end
  local kind = ARGV[a + 2]
  local cur = ARGV[a + 3]
  local amount = ARGV[a + 4]
  local wallet = KEYS[k + 3]
  local mine = bals[wallet]
  if not mine then
    mine = {}
    bals[wallet] = mine
  end
  -- The balance is read (once per wallet and currency in a call) only where it is checked,
  -- under pcall: a wallet the server cannot read fails this event alone.
  if kind == 'spent' and ARGV[a + 6] ~= '1' then
    local bal = mine[cur]
    if bal == nil then
      local got = redis.pcall('HGET', wallet, cur)
      if type(got) == 'table' and got.err then return 'error', got.err end
      bal = tonumber(got or '0') or 0
      mine[cur] = bal
    end
    if bal < tonumber(amount) then
      return 'insufficient', string.format('%d', bal)
    end
  end
"#,
    first_write!(),
    r#"  local bal = 0
  if kind == 'purchase' then
    add(KEYS[k + 8], ARGV[a + 10], amount)
  else
    bal = first
    mine[cur] = first
  end
  local b = string.format('%d', bal)
  local rec = b .. '|' .. ARGV[a + 9]
  recs[txs][id] = rec
  append('HSET', txs, id, rec)
  append('ZADD', KEYS[k + 7], ARGV[a + 11], id)
  append('RPUSH', KEYS[k + 4], ARGV[a + 8] .. ',"balance_after":' .. b .. '}')
"#,
    day_totals!(),
    r#"local out = {}
for i = 0, n - 1 do
  local outcome, balance = step(i * 8, i * 12)
  out[#out + 1] = outcome
  out[#out + 1] = balance
end
-- The idempotency records first: once an event's balance is written, its tx id is known
-- before anything else of the call can fail.
for _, cmd in ipairs({'HSET', 'ZADD', 'RPUSH'}) do
  local group = lists[cmd]
  for _, key in ipairs(group) do redis.call(cmd, key, unpack(group[key])) end
end
for _, at in ipairs(sum_order) do
  local entry = sums[at[1]][at[2]]
  if entry.summed then
    redis.call('HINCRBY', at[1], at[2], string.format('%d', entry.sum))
  end
  for _, amount in ipairs(entry.alone) do redis.call('HINCRBY', at[1], at[2], amount) end
end
return out
"#
);

/// One money event as the script takes it: its keys and arguments, built before it waits
/// for a call, so that a call of many events only copies them into one command.
#[derive(Debug)]
pub(super) struct MoneyCall {
    keys: [Arc<str>; 8],
    tx_id: String,
    kind: &'static str,
    currency_id: String,
    amount: i64,
    import: bool,
    holdout: bool,
    ledger_head: String,
    fingerprint: String,
    player_id: String,
    received_ms: i64,
    cohort: String,
}

impl MoneyCall {
    /// The event `op`, received now, with its game's money keys `keys`.
    pub(super) fn new(keys: &MoneyKeys, op: &MoneyOp) -> StoreResult<Self> {
        let received_ms = Utc::now().timestamp_millis();
        let day = keys.day(op.ts.date_naive());
        Ok(Self {
            keys: [
                Arc::clone(&keys.tx),
                Arc::clone(&keys.kill),
                keys.wallet(&op.player_id),
                Arc::clone(&keys.ledger),
                day.totals,
                Arc::clone(&keys.spend),
                Arc::clone(&keys.tx_received),
                day.spend,
            ],
            tx_id: op.tx_id.clone(),
            kind: match op.kind {
                MoneyKind::Earned => "earned",
                MoneyKind::Spent => "spent",
                MoneyKind::Purchase => "purchase",
            },
            currency_id: op.currency_id.clone(),
            amount: op.amount,
            import: op.import,
            holdout: op.holdout,
            ledger_head: ledger_head(op, received_ms)?,
            fingerprint: op.fingerprint(),
            player_id: op.player_id.clone(),
            received_ms,
            cohort: op.cohort.clone().unwrap_or_default(),
        })
    }
}

/// The two wallet scripts, [`ONE_LUA`] for a call of one event and [`MANY_LUA`] for more.
pub(super) struct MoneyScripts {
    one: Script,
    many: Script,
}

impl MoneyScripts {
    /// Both scripts, not yet loaded into a server.
    pub(super) fn new() -> Self {
        Self {
            one: Script::new(ONE_LUA),
            many: Script::new(MANY_LUA),
        }
    }

    /// Both scripts, to load into the server at connect.
    pub(super) fn all(&self) -> [&Script; 2] {
        [&self.one, &self.many]
    }

    /// The script for a call of `events` events.
    fn for_call(&self, events: usize) -> &Script {
        if events == 1 { &self.one } else { &self.many }
    }
}

/// Runs a wallet script once over `calls` (one game's events, in order) within `timeout`: one
/// answer per event, or, when the call itself fails (Redis unreachable, no answer in time,
/// an unreadable reply), that one error for all of them.
pub(super) async fn run(
    conn: &CommandConn,
    scripts: &MoneyScripts,
    timeout: Duration,
    calls: &[&MoneyCall],
) -> StoreResult<Vec<StoreResult<MoneyOutcome>>> {
    let mut invocation = scripts.for_call(calls.len()).prepare_invoke();
    for call in calls {
        for key in &call.keys {
            invocation.key(key.as_ref());
        }
        invocation
            .arg(&call.tx_id)
            .arg(call.kind)
            .arg(&call.currency_id)
            .arg(call.amount)
            .arg(call.amount.saturating_neg())
            .arg(flag(call.import))
            .arg(flag(call.holdout))
            .arg(&call.ledger_head)
            .arg(&call.fingerprint)
            .arg(&call.player_id)
            .arg(call.received_ms)
            .arg(&call.cohort);
    }
    let mut conn = conn.clone();
    let reply: Vec<String> =
        bounded(timeout, "apply_money", invocation.invoke_async(&mut conn)).await?;
    if reply.len() != calls.len() * 2 {
        return Err(StoreError::Corrupt(format!(
            "wallet script answered {} values for {} events",
            reply.len(),
            calls.len()
        )));
    }
    Ok(reply
        .chunks_exact(2)
        .map(|pair| parse_outcome(&pair[0], &pair[1]))
        .collect())
}

/// The ledger entry's JSON without `balance_after` and without its closing brace, for the
/// script to complete once it knows the balance.
fn ledger_head(op: &MoneyOp, received_ms: i64) -> StoreResult<String> {
    /// A [`LedgerEntry`](super::super::LedgerEntry) without `balance_after` (the script
    /// appends it), borrowing from the operation so that nothing is copied. `rx`, when the
    /// engine received the event (Unix milliseconds), comes first: the retention sweep reads
    /// it at the line's start.
    #[derive(serde::Serialize)]
    struct Head<'a> {
        rx: i64,
        tx_id: &'a str,
        player_id: &'a str,
        kind: MoneyKind,
        currency_id: &'a str,
        amount: i64,
        #[serde(serialize_with = "offer_domain::timestamp::serialize")]
        ts: chrono::DateTime<chrono::Utc>,
    }
    let mut json = serde_json::to_string(&Head {
        rx: received_ms,
        tx_id: &op.tx_id,
        player_id: &op.player_id,
        kind: op.kind,
        currency_id: &op.currency_id,
        amount: op.amount,
        ts: op.ts,
    })
    .map_err(|err| StoreError::Corrupt(format!("ledger entry: {err}")))?;
    if json.pop() != Some('}') {
        return Err(StoreError::Corrupt("ledger entry is not an object".into()));
    }
    Ok(json)
}

/// Reads one event's `outcome, balance` pair of the reply. `error` is the server refusing
/// the event's first write: that event is unavailable, the others of its call are not.
fn parse_outcome(outcome: &str, balance: &str) -> StoreResult<MoneyOutcome> {
    if outcome == "error" {
        return Err(StoreError::Unavailable(format!("apply_money: {balance}")));
    }
    let corrupt = || StoreError::Corrupt(format!("wallet script answered {outcome:?} {balance:?}"));
    let balance: i64 = balance.parse().map_err(|_| corrupt())?;
    match outcome {
        "applied" => Ok(MoneyOutcome::Applied { balance }),
        "duplicate" => Ok(MoneyOutcome::Duplicate { balance }),
        "insufficient" => Ok(MoneyOutcome::InsufficientFunds { balance }),
        "kill" => Ok(MoneyOutcome::KillSwitch),
        "conflict" => Ok(MoneyOutcome::TxConflict),
        _ => Err(corrupt()),
    }
}
