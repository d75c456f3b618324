//! The wallet scripts and one call of them: the money events of one game, each applied in
//! order with every check of its own, each answered on its own.
//!
//! Every key of every event carries its game's hash tag, so a call of one game's events is
//! one slot on a Redis Cluster and the scripts stay legal there. A call of one event runs
//! [`ONE_LUA`], a call of more [`MANY_LUA`]; each is sent as one `EVALSHA` built here with
//! each key and argument copied once into the command (loading the script and sending again
//! when the server answers `NOSCRIPT`).
//!
//! [`ONE_LUA`] takes its event as nine keys and fourteen arguments and makes every check
//! before its first write, then writes one command at a time: the idempotency hash (a known
//! tx id answers `Duplicate` with the stored balance, or `conflict` when the change differs),
//! the kill level (3 answers `KillSwitch`, but for a refund), for a non-imported spend the
//! balance; then the balance (`HINCRBY`; for a purchase the lifetime spend) under
//! `redis.pcall`, the
//! idempotency record, the receive time, the ledger entry and the day aggregate. A read or a
//! later write the server refuses stops the script, and the event answers the error.
//!
//! [`MANY_LUA`] keeps every one of these rules for each event and answers each as it would be
//! answered alone, but reads first, then decides every event in order, then writes, so that
//! a call costs a few commands per call and one per event instead of about eight per event:
//!
//! 1. Reads that would stop the script come before any write: one `HMGET` of every tx id of
//!    the call per tx hash, one `GET` per kill key. A key there of the wrong type fails the
//!    whole call with nothing written.
//! 2. Each event in order makes every check before its own first write, seeing the events
//!    before it in the call: (a) the idempotency record (a known tx id, from the server or
//!    applied earlier in this call, answers `Duplicate` with the stored balance, or
//!    `conflict` when the change differs), (b) the kill level (3 answers `KillSwitch`, but
//!    for a refund), (c) for a non-imported spend, the balance, read under `redis.pcall` (a wallet the server cannot
//!    read fails that event alone). A refused event writes nothing and the next event goes
//!    on.
//! 3. The event's first write runs at once under `redis.pcall`: the balance `HINCRBY` (its
//!    reply is the event's balance), or for a purchase the lifetime spend. If the server
//!    refuses it (an increment that would overflow 64 bits, a key of the wrong type) the
//!    event answers an error of its own, having written nothing, and the others go on.
//! 4. Its other writes wait for the end of the call, combined per key: one `HSET` per tx hash
//!    of every idempotency record (first, so that every balance written has its record before
//!    anything else can fail), one `ZADD` per receive-time set, one `RPUSH` per ledger of its
//!    entries in arrival order, and one `HINCRBY` per (key, field) of the day aggregates and
//!    the purchase days, summed in the call (an amount whose sum could pass 2^53, beyond
//!    which a Lua number is no longer exact, is added on its own). One of these failing (a day
//!    total overflowing, a key of the wrong type) stops the script: the balances and records
//!    written stay, and the whole call answers the error.
//!
//! What Redis spends on a combined call is mostly per argument (each is parsed, allocated and
//! made a Lua string) and per Lua string, table entry or function call made for an event, so
//! [`MANY_LUA`] takes each value that events of a call share once: each key other than the
//! wallets once, an event's keys, kind, currency and cohort as one of the call's few
//! *groups*, consecutive events of one group as one *run*; what is left per event is its
//! wallet key and five arguments. Its reply is one string.
//!
//! An earned or spent event also adds its amount to its player's field of the day's
//! player-totals hash (one per game, environment and day, expiring after
//! [`PLAYER_DAYS_TTL_SECS`]); the part of it above the event's day cap is left out of the
//! day's earned or spent sum and added to `x<earned|spent>:<cur>` instead, and the player's
//! first capped event of the day adds 1 to `c<earned|spent>:<cur>`.
//!
//! A refund ([`MoneyKind::Refund`]) is handed to the scripts as a purchase of the negated
//! amount, so it moves the lifetime spend, the payer's day and the day's revenue of its group
//! down by what was refunded, and adds the amount to the day's `refunded` field; its ledger
//! entry keeps kind `refund` and the positive amount. Only a store's notification refunds,
//! for a purchase it signed, so a refund's revenue always counts: it never lands in the
//! unverified day hash, whose fields are all summed as unverified revenue.
//!
//! The ledger entry is the JSON of a [`LedgerEntry`](crate::store::LedgerEntry), built by
//! Rust with serde's field names except `balance_after`, which the script appends. The day
//! aggregate fields are `earned:<cur>`, `spent:<cur>` (and the same with `@<cohort>`),
//! `rev_t` for treatment revenue, `rev_c` for holdout and `refunded`. The tx record is
//! `<balance>|<fingerprint>`.

use std::sync::Arc;
use std::time::Duration;

use ::redis::{Cmd, ErrorKind, FromRedisValue, RedisResult, Script, ServerErrorKind};
use chrono::Utc;

use crate::store::keys::PLAYER_DAYS_TTL_SECS;
use crate::store::money::fingerprint;
use crate::store::redis::conn::CommandConn;
use crate::store::redis::money_keys::MoneyKeys;
use crate::store::redis::tx_layout::tx_field;
use crate::store::redis::{bounded, flag};
use crate::store::{MoneyKind, MoneyOp, MoneyOutcome, StoreError, StoreResult};

/// The wallet step over exactly one event, each check and write one command as it comes. A
/// call of one event costs Redis less this way than through [`MANY_LUA`], whose tables and
/// deferred writes pay off only from a few events a call.
///
/// KEYS: tx hash, kill key, wallet hash, ledger list, day hash, spend hash, tx receive-time
/// sorted set, spend-day hash, the day's player-totals hash. ARGV: tx id, kind, currency,
/// amount, -amount, import (1/0), holdout (1/0), ledger JSON without its closing brace,
/// fingerprint, player id, receive time, install cohort (empty when unknown), day cap (empty
/// when none), the player totals' time to live in seconds. Replies the outcome, the balance
/// (or `error` and the server's message) and the units left out by the day cap.
pub(in crate::store::redis) const ONE_LUA: &str = include_str!("one.lua");

/// The wallet step over two or more events (it is correct for one too).
///
/// KEYS: the wallet hash of each event, in order, then every other key of the call once.
/// ARGV: the number of groups, the number of runs and the player totals' time to live in
/// seconds; per group twelve values: the KEYS indexes of its tx hash, kill key, ledger list,
/// day hash, spend hash, tx receive-time sorted set, spend-day hash and player-totals hash,
/// then its kind code ([`kind_code`]), currency, install cohort (empty when unknown) and day
/// cap (empty when none); per run two: its group (from 1) and its number of events; then
/// five columns of one value per event, in order: tx id, amount, ledger JSON without its
/// closing brace, fingerprint, receive time.
///
/// An earned or spent event adds its amount to its player's day total (`HINCRBY` under
/// `redis.pcall`, so that a total the server refuses counts the event whole and stops
/// nothing); the part above the group's day cap goes to the day's left-out total instead of
/// its earned or spent sum.
///
/// Replies one string, a line per event: the balance for an applied event (followed by
/// `x<units>` when the day cap left units out), `d<balance>` for a
/// duplicate, `i<balance>` for insufficient funds, `k` for the kill switch, `c` for a tx
/// conflict, `e<message>` for the server refusing the event's first write (a server's error
/// message has no line break).
///
/// Per event the script makes no Lua function call of its own and no table beyond the
/// entries of its writes: a run's keys, fields and sums are kept in locals.
pub(in crate::store::redis) const MANY_LUA: &str = include_str!("many.lua");

/// One money event as the script takes it: its keys and arguments, built before it waits
/// for a call, so that a call of many events only copies them into one command.
#[derive(Debug)]
pub(in crate::store::redis) struct MoneyCall {
    keys: [Arc<str>; 9],
    /// The name of the event's idempotency record: the player's `tx_id` ([`tx_field`]).
    tx_field: String,
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
    /// The day cap, empty when none.
    day_cap: String,
}

impl MoneyCall {
    /// The event `op`, received now, with its game's money keys `keys`.
    pub(in crate::store::redis) fn new(keys: &MoneyKeys, op: &MoneyOp) -> StoreResult<Self> {
        let received_ms = Utc::now().timestamp_millis();
        let day = keys.day(op.ts.date_naive());
        // A purchase whose revenue does not count writes the same records under keys of
        // their own: the scripts need not know, and no reader of revenue sees it.
        let (totals, spend, spend_day) = if op.revenue_counts() {
            (day.totals, Arc::clone(&keys.spend), day.spend)
        } else {
            (
                day.unverified_totals,
                Arc::clone(&keys.spend_unverified),
                day.unverified_spend,
            )
        };
        Ok(Self {
            keys: [
                Arc::clone(&keys.tx),
                Arc::clone(&keys.kill),
                keys.wallet(&op.player_id),
                Arc::clone(&keys.ledger),
                totals,
                spend,
                Arc::clone(&keys.tx_received),
                spend_day,
                day.players,
            ],
            tx_field: tx_field(&op.player_id, &op.tx_id),
            kind: match op.kind {
                MoneyKind::Earned => "earned",
                MoneyKind::Spent => "spent",
                MoneyKind::Purchase | MoneyKind::Refund => "purchase",
            },
            currency_id: op.currency_id.clone(),
            amount: op.revenue_delta(),
            import: op.import,
            holdout: op.holdout,
            ledger_head: ledger_head(op, received_ms)?,
            fingerprint: script_fingerprint(op),
            player_id: op.player_id.clone(),
            received_ms,
            cohort: op.cohort.clone().unwrap_or_default(),
            day_cap: op.day_cap.map(|cap| cap.to_string()).unwrap_or_default(),
        })
    }
}

/// The two wallet scripts, [`ONE_LUA`] for a call of one event and [`MANY_LUA`] for more.
pub(in crate::store::redis) struct MoneyScripts {
    one: Script,
    many: Script,
}

impl MoneyScripts {
    /// Both scripts, not yet loaded into a server.
    pub(in crate::store::redis) fn new() -> Self {
        Self {
            one: Script::new(ONE_LUA),
            many: Script::new(MANY_LUA),
        }
    }

    /// Both scripts, to load into the server at connect.
    pub(in crate::store::redis) fn all(&self) -> [&Script; 2] {
        [&self.one, &self.many]
    }
}

/// Runs a wallet script once over `calls` (one game's events, in order) within `timeout`: one
/// answer per event, or, when the call itself fails (Redis unreachable, no answer in time,
/// an unreadable reply), that one error for all of them.
pub(in crate::store::redis) async fn run(
    conn: &CommandConn,
    scripts: &MoneyScripts,
    timeout: Duration,
    calls: &[&MoneyCall],
) -> StoreResult<Vec<StoreResult<MoneyOutcome>>> {
    let mut conn = conn.clone();
    match calls {
        [] => Ok(Vec::new()),
        [call] => {
            let cmd = one_command(&scripts.one, call);
            let reply: Vec<String> =
                bounded(timeout, "apply_money", eval(&mut conn, &scripts.one, &cmd)).await?;
            match reply.as_slice() {
                [outcome, balance, left_out] => Ok(vec![parse_outcome(outcome, balance, left_out)]),
                _ => Err(StoreError::Corrupt(format!(
                    "wallet script answered {} values for one event",
                    reply.len()
                ))),
            }
        }
        _ => {
            let cmd = many_command(&scripts.many, calls);
            let reply: String =
                bounded(timeout, "apply_money", eval(&mut conn, &scripts.many, &cmd)).await?;
            let answers: Vec<_> = reply.split('\n').map(parse_line).collect();
            if answers.len() != calls.len() {
                return Err(StoreError::Corrupt(format!(
                    "wallet script answered {} lines for {} events",
                    answers.len(),
                    calls.len()
                )));
            }
            Ok(answers)
        }
    }
}

/// Sends `cmd`, an `EVALSHA` of `script`; when the server does not know the script (after a
/// restart, a failover or a `SCRIPT FLUSH`), loads it and sends `cmd` again.
async fn eval<T: FromRedisValue>(
    conn: &mut CommandConn,
    script: &Script,
    cmd: &Cmd,
) -> RedisResult<T> {
    match cmd.query_async(conn).await {
        Err(err) if err.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
            script.load_async(conn).await?;
            cmd.query_async(conn).await
        }
        answer => answer,
    }
}

/// The index in [`MoneyCall`]'s keys of the wallet hash, the one key of an event that is
/// not shared by the other events of its game, environment and day.
const WALLET: usize = 2;

/// The indexes in [`MoneyCall`]'s keys of the keys a group of [`MANY_LUA`] names, in its
/// order: tx hash, kill key, ledger list, day hash, spend hash, receive-time set, spend-day
/// hash, player-totals hash.
const GROUP_KEYS: [usize; 8] = [0, 1, 3, 4, 5, 6, 7, 8];

/// The `EVALSHA` of [`ONE_LUA`] over one event.
fn one_command(script: &Script, call: &MoneyCall) -> Cmd {
    let bytes = call.keys.iter().map(|key| key.len()).sum::<usize>()
        + call.tx_field.len()
        + call.currency_id.len()
        + call.ledger_head.len()
        + call.fingerprint.len()
        + call.player_id.len()
        + call.cohort.len()
        + call.day_cap.len()
        + 140;
    let mut cmd = Cmd::with_capacity(3 + 9 + 14, bytes);
    cmd.arg("EVALSHA")
        .arg(script.get_hash())
        .arg(call.keys.len());
    for key in &call.keys {
        let key: &str = key;
        cmd.arg(key);
    }
    cmd.arg(call.tx_field.as_str())
        .arg(call.kind)
        .arg(call.currency_id.as_str())
        .arg(call.amount)
        .arg(call.amount.saturating_neg())
        .arg(flag(call.import))
        .arg(flag(call.holdout))
        .arg(call.ledger_head.as_str())
        .arg(call.fingerprint.as_str())
        .arg(call.player_id.as_str())
        .arg(call.received_ms)
        .arg(call.cohort.as_str())
        .arg(call.day_cap.as_str())
        .arg(PLAYER_DAYS_TTL_SECS);
    cmd
}

/// A group of [`MANY_LUA`]: what some events of a call share.
struct Group<'a> {
    /// The indexes in the call's shared keys of the keys of [`GROUP_KEYS`].
    keys: [usize; 8],
    /// [`kind_code`].
    code: &'static str,
    currency: &'a str,
    cohort: &'a str,
    day_cap: &'a str,
}

/// The `EVALSHA` of [`MANY_LUA`] over `calls`, in its layout: the wallets, then each other
/// key once; the groups, the runs, then the five columns.
fn many_command(script: &Script, calls: &[&MoneyCall]) -> Cmd {
    let mut shared: Vec<&str> = Vec::new();
    let mut groups: Vec<Group<'_>> = Vec::new();
    // (group, events): consecutive events of one group.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for call in calls {
        let group = group_of(&mut groups, &mut shared, call);
        match runs.last_mut() {
            Some((last, count)) if *last == group => *count += 1,
            _ => runs.push((group, 1)),
        }
    }
    let n = calls.len();
    let args = 3 + n + shared.len() + 3 + 12 * groups.len() + 2 * runs.len() + 5 * n;
    let bytes = 80
        + shared.iter().map(|key| key.len()).sum::<usize>()
        + groups
            .iter()
            .map(|group| 50 + group.currency.len() + group.cohort.len() + group.day_cap.len())
            .sum::<usize>()
        + 10 * runs.len()
        + calls
            .iter()
            .map(|call| {
                call.keys[WALLET].len()
                    + call.tx_field.len()
                    + call.ledger_head.len()
                    + call.fingerprint.len()
                    + 40
            })
            .sum::<usize>();
    let mut cmd = Cmd::with_capacity(args, bytes);
    cmd.arg("EVALSHA")
        .arg(script.get_hash())
        .arg(n + shared.len());
    for call in calls {
        let wallet: &str = &call.keys[WALLET];
        cmd.arg(wallet);
    }
    for key in &shared {
        cmd.arg(*key);
    }
    cmd.arg(groups.len())
        .arg(runs.len())
        .arg(PLAYER_DAYS_TTL_SECS);
    for group in &groups {
        for at in group.keys {
            // KEYS index (from 1) of the shared key, after the wallets.
            cmd.arg(n + at + 1);
        }
        cmd.arg(group.code)
            .arg(group.currency)
            .arg(group.cohort)
            .arg(group.day_cap);
    }
    for (group, count) in &runs {
        cmd.arg(group + 1).arg(*count);
    }
    for call in calls {
        cmd.arg(call.tx_field.as_str());
    }
    for call in calls {
        cmd.arg(call.amount);
    }
    for call in calls {
        cmd.arg(call.ledger_head.as_str());
    }
    for call in calls {
        cmd.arg(call.fingerprint.as_str());
    }
    for call in calls {
        cmd.arg(call.received_ms);
    }
    cmd
}

/// The index in `groups` of the group of `call`, added (with its keys added to `shared`
/// where they are new) when the call has none yet.
fn group_of<'a>(
    groups: &mut Vec<Group<'a>>,
    shared: &mut Vec<&'a str>,
    call: &'a MoneyCall,
) -> usize {
    let code = kind_code(call);
    let found = groups.iter().rposition(|group| {
        group.code == code
            && group.currency == call.currency_id
            && group.cohort == call.cohort
            && group.day_cap == call.day_cap
            && group
                .keys
                .iter()
                .zip(GROUP_KEYS)
                .all(|(&at, slot)| shared[at] == &*call.keys[slot])
    });
    if let Some(found) = found {
        return found;
    }
    let keys = GROUP_KEYS.map(|slot| {
        let key: &str = &call.keys[slot];
        match shared.iter().position(|known| *known == key) {
            Some(at) => at,
            None => {
                shared.push(key);
                shared.len() - 1
            }
        }
    });
    groups.push(Group {
        keys,
        code,
        currency: &call.currency_id,
        cohort: &call.cohort,
        day_cap: &call.day_cap,
    });
    groups.len() - 1
}

/// An event's kind as [`MANY_LUA`] takes it, with the flag that matters for that kind: `e`
/// earned, `s` spent, `i` spent and imported (no balance check), `p` a purchase, `h` a
/// purchase by a player of the holdout group.
fn kind_code(call: &MoneyCall) -> &'static str {
    match (call.kind, call.import, call.holdout) {
        ("earned", _, _) => "e",
        ("spent", false, _) => "s",
        ("spent", true, _) => "i",
        (_, _, false) => "p",
        (_, _, true) => "h",
    }
}

/// The fingerprint the scripts keep in `op`'s idempotency record. A refund goes to the
/// scripts as a purchase of the negated amount, and [`MANY_LUA`] reads a purchase's player
/// from its fingerprint as what lies before `|Purchase|<currency>|<amount>` (the amount as
/// the script receives it); so a refund's fingerprint is spelled that way too. It stays
/// apart from every purchase's, whose amount is never negative.
fn script_fingerprint(op: &MoneyOp) -> String {
    match op.kind {
        MoneyKind::Refund => fingerprint(
            &op.player_id,
            MoneyKind::Purchase,
            &op.currency_id,
            op.revenue_delta(),
        ),
        _ => op.fingerprint(),
    }
}

/// The ledger entry's JSON without `balance_after` and without its closing brace, for the
/// script to complete once it knows the balance.
fn ledger_head(op: &MoneyOp, received_ms: i64) -> StoreResult<String> {
    /// A [`LedgerEntry`](crate::store::LedgerEntry) without `balance_after` (the script
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
        #[serde(skip_serializing_if = "Option::is_none")]
        proof: Option<crate::store::Proof>,
    }
    let mut json = serde_json::to_string(&Head {
        rx: received_ms,
        tx_id: &op.tx_id,
        player_id: &op.player_id,
        kind: op.kind,
        currency_id: &op.currency_id,
        amount: op.amount,
        ts: op.ts,
        proof: op.proof,
    })
    .map_err(|err| StoreError::Corrupt(format!("ledger entry: {err}")))?;
    if json.pop() != Some('}') {
        return Err(StoreError::Corrupt("ledger entry is not an object".into()));
    }
    Ok(json)
}

/// Reads one event's `outcome, balance, left out` of the reply. `error` is the server
/// refusing the event's first write: that event is unavailable, the others of its call are
/// not.
fn parse_outcome(outcome: &str, balance: &str, left_out: &str) -> StoreResult<MoneyOutcome> {
    if outcome == "error" {
        return Err(StoreError::Unavailable(format!("apply_money: {balance}")));
    }
    let corrupt = || {
        StoreError::Corrupt(format!(
            "wallet script answered {outcome:?} {balance:?} {left_out:?}"
        ))
    };
    let balance: i64 = balance.parse().map_err(|_| corrupt())?;
    match outcome {
        "applied" => Ok(MoneyOutcome::Applied {
            balance,
            left_out: left_out.parse().map_err(|_| corrupt())?,
        }),
        "duplicate" => Ok(MoneyOutcome::Duplicate { balance }),
        "insufficient" => Ok(MoneyOutcome::InsufficientFunds { balance }),
        "kill" => Ok(MoneyOutcome::KillSwitch),
        "conflict" => Ok(MoneyOutcome::TxConflict),
        _ => Err(corrupt()),
    }
}

/// Reads one event's line of [`MANY_LUA`]'s reply. `e` is the server refusing the event's
/// first write: that event is unavailable, the others of its call are not.
fn parse_line(line: &str) -> StoreResult<MoneyOutcome> {
    let corrupt = || StoreError::Corrupt(format!("wallet script answered {line:?}"));
    let rest = line.get(1..).unwrap_or_default();
    let balance = |text: &str| text.parse::<i64>().map_err(|_| corrupt());
    match line.as_bytes().first() {
        Some(b'd') => Ok(MoneyOutcome::Duplicate {
            balance: balance(rest)?,
        }),
        Some(b'i') => Ok(MoneyOutcome::InsufficientFunds {
            balance: balance(rest)?,
        }),
        Some(b'k') if rest.is_empty() => Ok(MoneyOutcome::KillSwitch),
        Some(b'c') if rest.is_empty() => Ok(MoneyOutcome::TxConflict),
        Some(b'e') => Err(StoreError::Unavailable(format!("apply_money: {rest}"))),
        _ => {
            let (counted, left_out) = line.split_once('x').unwrap_or((line, "0"));
            Ok(MoneyOutcome::Applied {
                balance: balance(counted)?,
                left_out: balance(left_out)?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MoneyOutcome, StoreError, parse_line};
    use crate::store::{MoneyKind, MoneyOp};
    use offer_domain::environment::Environment;
    use uuid::Uuid;

    #[test]
    fn a_line_of_the_combined_reply_reads_as_its_outcome() {
        assert_eq!(
            parse_line("110").ok(),
            Some(MoneyOutcome::Applied {
                balance: 110,
                left_out: 0
            })
        );
        assert_eq!(
            parse_line("-5").ok(),
            Some(MoneyOutcome::Applied {
                balance: -5,
                left_out: 0
            })
        );
        assert_eq!(
            parse_line("d110").ok(),
            Some(MoneyOutcome::Duplicate { balance: 110 })
        );
        assert_eq!(
            parse_line("i30").ok(),
            Some(MoneyOutcome::InsufficientFunds { balance: 30 })
        );
        assert_eq!(
            parse_line("110x25").ok(),
            Some(MoneyOutcome::Applied {
                balance: 110,
                left_out: 25
            })
        );
        assert_eq!(parse_line("k").ok(), Some(MoneyOutcome::KillSwitch));
        assert_eq!(parse_line("c").ok(), Some(MoneyOutcome::TxConflict));
        assert!(matches!(
            parse_line("eWRONGTYPE Operation against a key"),
            Err(StoreError::Unavailable(message)) if message == "apply_money: WRONGTYPE Operation against a key"
        ));
        for bad in ["", "d", "x1", "k1", "applied", "1 2", "1x", "1x2x3"] {
            assert!(
                matches!(parse_line(bad), Err(StoreError::Corrupt(_))),
                "{bad:?}"
            );
        }
    }

    /// The combined script takes a purchase's player id from its fingerprint, as what is
    /// left before `|Purchase|<currency>|<amount>`.
    #[test]
    fn a_purchase_fingerprint_ends_with_its_kind_currency_and_amount() {
        let op = MoneyOp {
            game_id: Uuid::nil(),
            env: Environment::Production,
            player_id: "p|1".into(),
            tx_id: "t".into(),
            kind: MoneyKind::Purchase,
            currency_id: "usd".into(),
            amount: 499,
            ts: chrono::Utc::now(),
            holdout: false,
            import: false,
            cohort: None,
            proof: None,
            day_cap: None,
        };
        let print = op.fingerprint();
        let suffix = format!("|Purchase|{}|{}", op.currency_id, op.amount);
        assert_eq!(
            suffix.len(),
            op.currency_id.len() + op.amount.to_string().len() + 11
        );
        assert_eq!(print.strip_suffix(&suffix), Some("p|1"));
    }
}
