//! The SQLite file's layout: how a connection is opened and set up, the tables, and how the
//! store's values are written into columns.
//!
//! | table | key | content |
//! | --- | --- | --- |
//! | `docs` | scope, collection, id | the JSON bytes of one document (every collection) |
//! | `kill` | game | the kill-switch level the money step reads |
//! | `wallets` | game, env, player, currency | balance |
//! | `spend` | game, env, player | lifetime real-money spend in cents |
//! | `ledger` | id (append order, never reused) | one money event; indexed by game and env |
//! | `tx` | the ledger id of a `tx_id`'s line | a hash of game, env, player and `tx_id` (indexed) |
//! | `received` | a ledger id | when every line up to it had been received ([`super::retention`]) |
//! | `days` | game, env, day, field, currency | one total of a day aggregate |
//! | `spend_days` | game, env, day, player | a payer's real-money spend on one day, in cents |
//! | `decisions` | decision id | a game's decision record and when it expires ([`super::decisions`]) |
//! | `expiring` | scope, collection, id | a short-lived document and when it expires ([`super::expiring`]) |
//! | `exposures` | game, env, experiment, variant, player | offers shown, purchases and revenue of one player in an experiment ([`super::exposures`]) |
//!
//! A game is its 16 UUID bytes, the deployment-wide scope the empty blob; an environment,
//! a kind and a day field are small integers ([`env_code`], [`kind_code`], [`DayField`]); a
//! day is its number of days from the common era; an event time is its Unix seconds and
//! nanoseconds (any time the SDK may send reads back exactly). Tables keyed by their natural
//! key are clustered on it (`WITHOUT ROWID`), so the key is stored once.
//!
//! A `tx_id` is unique per player, not per game: one player's ids never collide with
//! another's, so no player can spoil another's event by guessing its `tx_id`.
//! The idempotency record holds no copy of the `tx_id`: its hash finds the candidate ledger
//! lines and the lookup compares their game, environment, player and `tx_id` exactly, so a hash
//! collision costs one more row read, never a wrong answer. Since ledger ids grow with time,
//! the retention sweep deletes records by id range up to the last `received` mark old
//! enough, without an index by age. Per money event the file grows by about 160 bytes: the
//! ledger line (about 90 bytes with a 36-character `tx_id`) and its index entry (30), kept,
//! and the idempotency record with its hash index (35), deleted after the retention.
//!
//! `PRAGMA user_version` is the layout's version: a file of an older layout is brought up to
//! date when opened (each step adds tables, in one transaction), a file of a newer layout
//! is refused rather than misread.

use std::path::Path;
use std::time::Duration;

use offer_domain::environment::Environment;
use rusqlite::{Connection, OpenFlags};

use super::super::{MoneyKind, Scope, StoreError, StoreResult};
use super::SyncMode;

/// The layout this build writes: 1 the first, 2 added `decisions`, 3 `expiring` and
/// `spend_days`, 4 keys each idempotency record by player as well ([`tx_hash`]), 5 adds the
/// ledger's `proof` column (how a purchase was proven, [`Proof::code`](super::super::Proof::code)),
/// 6 adds `player_days` (each player's day totals, what the day caps count against), 7
/// `exposures` (the per-player totals of price experiments), 8 drops the decision records'
/// index by expiry ([`DECISIONS_BY_ID_ONLY`]).
const VERSION: i64 = 8;

/// Layout 8: decision records are kept by id alone. Their ids are time-ordered, so the
/// oldest records are the first ids and the sweep finds the expired ones there; an index by
/// expiry cost every record written a second B-tree insertion (about a quarter of the
/// write).
const DECISIONS_BY_ID_ONLY: &str = "DROP INDEX IF EXISTS decisions_by_expiry;";

/// Layout 6: each player's units per day, kind and currency, every unit reported (`total`)
/// and the part of them left out of the figures by the day cap (`left_out`). Keyed by day
/// and player first, so a day's totals (the derived caps) and one player's days (the player
/// record) are each a range read. A file brought up from an older layout starts its
/// players' days at 0. Indexed by day alone for the sweep that forgets old days (a new
/// row per player, day, kind and currency; an event that only adds to a total leaves the
/// index alone).
const PLAYER_DAYS: &str = "
CREATE TABLE IF NOT EXISTS player_days (
  game BLOB NOT NULL, env INTEGER NOT NULL, day INTEGER NOT NULL, player TEXT NOT NULL,
  kind INTEGER NOT NULL, currency TEXT NOT NULL, total INTEGER NOT NULL,
  left_out INTEGER NOT NULL,
  PRIMARY KEY (game, env, day, player, kind, currency)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS player_days_by_day ON player_days (day);
";

/// The per-player totals of price experiments (layout 7).
const EXPOSURES: &str = "
CREATE TABLE IF NOT EXISTS exposures (
  game BLOB NOT NULL, env INTEGER NOT NULL, experiment BLOB NOT NULL, variant TEXT NOT NULL,
  player TEXT NOT NULL, shown INTEGER NOT NULL, purchases INTEGER NOT NULL,
  revenue INTEGER NOT NULL,
  PRIMARY KEY (game, env, experiment, variant, player)
) WITHOUT ROWID;
";

/// Layout 5: the ledger line's proof (0 for every line written before).
const PROOF: &str = "ALTER TABLE ledger ADD COLUMN proof INTEGER NOT NULL DEFAULT 0;";

/// The decision records (written and read by `decisions.rs`) and their index by expiry
/// (layout 2; the index is dropped by layout 8).
const DECISIONS: &str = "
CREATE TABLE decisions (
  id BLOB NOT NULL PRIMARY KEY, game BLOB NOT NULL, expires_ms INTEGER NOT NULL,
  value BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX decisions_by_expiry ON decisions (expires_ms);
";

/// The short-lived documents (written and read by `expiring.rs`) and their index by
/// expiry (layout 3).
const EXPIRING: &str = "
CREATE TABLE expiring (
  scope BLOB NOT NULL, coll TEXT NOT NULL, id TEXT NOT NULL, expires_ms INTEGER NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (scope, coll, id)
) WITHOUT ROWID;
CREATE INDEX expiring_by_expiry ON expiring (expires_ms);
";

/// The payers' revenue by day (layout 3). A file brought up from an older layout has no
/// days for the purchases it applied before: those count on no day.
const SPEND_DAYS: &str = "
CREATE TABLE spend_days (
  game BLOB NOT NULL, env INTEGER NOT NULL, day INTEGER NOT NULL, player TEXT NOT NULL,
  cents INTEGER NOT NULL,
  PRIMARY KEY (game, env, day, player)
) WITHOUT ROWID;
";

/// The tables and their indexes, created once in a new file.
const CREATE: &str = "
CREATE TABLE docs (
  scope BLOB NOT NULL, coll TEXT NOT NULL, id TEXT NOT NULL, value BLOB NOT NULL,
  PRIMARY KEY (scope, coll, id)
) WITHOUT ROWID;
CREATE TABLE kill (
  game BLOB NOT NULL PRIMARY KEY, level INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE wallets (
  game BLOB NOT NULL, env INTEGER NOT NULL, player TEXT NOT NULL, currency TEXT NOT NULL,
  balance INTEGER NOT NULL,
  PRIMARY KEY (game, env, player, currency)
) WITHOUT ROWID;
CREATE TABLE spend (
  game BLOB NOT NULL, env INTEGER NOT NULL, player TEXT NOT NULL, cents INTEGER NOT NULL,
  PRIMARY KEY (game, env, player)
) WITHOUT ROWID;
CREATE TABLE ledger (
  id INTEGER PRIMARY KEY,
  game BLOB NOT NULL, env INTEGER NOT NULL,
  tx_id TEXT NOT NULL, player TEXT NOT NULL, kind INTEGER NOT NULL, currency TEXT NOT NULL,
  amount INTEGER NOT NULL, balance_after INTEGER NOT NULL,
  ts INTEGER NOT NULL, ts_nanos INTEGER NOT NULL
);
CREATE INDEX ledger_by_game ON ledger (game, env);
CREATE TABLE tx (
  id INTEGER PRIMARY KEY, hash INTEGER NOT NULL
);
CREATE INDEX tx_by_hash ON tx (hash);
CREATE TABLE received (
  id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL
);
CREATE TABLE days (
  game BLOB NOT NULL, env INTEGER NOT NULL, day INTEGER NOT NULL, field INTEGER NOT NULL,
  currency TEXT NOT NULL, total INTEGER NOT NULL,
  PRIMARY KEY (game, env, day, field, currency)
) WITHOUT ROWID;
";

/// Prepared statements kept per connection: every statement of the store fits.
const STATEMENT_CACHE: usize = 64;

/// Where the data lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite file (its folder is created when missing).
    File(std::path::PathBuf),
    /// SQLite in memory: one connection, nothing kept when the store is dropped.
    Memory,
}

/// Opens the connection that writes: creates the file when missing (its folder must exist), turns
/// on write-ahead logging (so readers never wait for the writer) with `sync`, and creates
/// the tables in a new file.
/// `busy` bounds a wait for a lock held by another connection (a checkpoint, or a tool
/// reading the file).
pub fn open_writer(location: &Location, sync: SyncMode, busy: Duration) -> StoreResult<Connection> {
    let conn = match location {
        Location::Memory => Connection::open_in_memory()?,
        Location::File(path) => {
            let conn = Connection::open(path).map_err(|e| {
                StoreError::Unavailable(format!("cannot open {}: {e}", path.display()))
            })?;
            let mode: String =
                conn.pragma_update_and_check(None, "journal_mode", "wal", |row| row.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                return Err(StoreError::Unavailable(format!(
                    "{} cannot use write-ahead logging (journal mode {mode})",
                    path.display()
                )));
            }
            let level = match sync {
                SyncMode::Full => "FULL",
                SyncMode::Normal => "NORMAL",
            };
            conn.pragma_update(None, "synchronous", level)?;
            conn.busy_timeout(busy)?;
            conn
        }
    };
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    migrate(&conn)?;
    Ok(conn)
}

/// Opens one more connection to `path` that only reads (the read pool of a file store).
/// It opens the file read-write without creating it (write-ahead logging needs a reader to
/// write its shared-memory index) and then refuses writes with `query_only`.
pub fn open_reader(path: &Path, busy: Duration) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.pragma_update(None, "query_only", true)?;
    conn.busy_timeout(busy)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    Ok(conn)
}

/// Creates the tables in a new file, brings a file of an older layout up to date (adds the
/// later tables, and from layout 3 down rehashes the kept idempotency records by player);
/// refuses a file of a newer layout. All of it in one transaction.
fn migrate(conn: &Connection) -> StoreResult<()> {
    let version: i64 = conn.pragma_query_value(None, "user_version", |row| row.get(0))?;
    let steps = match version {
        0 => format!(
            "{CREATE} {DECISIONS} {EXPIRING} {SPEND_DAYS} {PROOF} {PLAYER_DAYS} {EXPOSURES} \
             {DECISIONS_BY_ID_ONLY}"
        ),
        1 => format!(
            "{DECISIONS} {EXPIRING} {SPEND_DAYS} {PROOF} {PLAYER_DAYS} {EXPOSURES} \
             {DECISIONS_BY_ID_ONLY}"
        ),
        2 => format!(
            "{EXPIRING} {SPEND_DAYS} {PROOF} {PLAYER_DAYS} {EXPOSURES} {DECISIONS_BY_ID_ONLY}"
        ),
        3 | 4 => format!("{PROOF} {PLAYER_DAYS} {EXPOSURES} {DECISIONS_BY_ID_ONLY}"),
        5 => format!("{PLAYER_DAYS} {EXPOSURES} {DECISIONS_BY_ID_ONLY}"),
        6 => format!("{EXPOSURES} {DECISIONS_BY_ID_ONLY}"),
        7 => DECISIONS_BY_ID_ONLY.to_owned(),
        VERSION => return Ok(()),
        other => {
            return Err(StoreError::Corrupt(format!(
                "the SQLite file has layout version {other}; this build reads version {VERSION}"
            )));
        }
    };
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(&steps)?;
    if (1..4).contains(&version) {
        rehash_by_player(&tx)?;
    }
    tx.pragma_update(None, "user_version", VERSION)?;
    tx.commit()?;
    Ok(())
}

/// Layout 4: every kept idempotency record hashed again with its ledger line's player, so a
/// retry of an event applied before the upgrade is still recognised, and two players' equal
/// `tx_id`s no longer collide. Reads all records first (they are bounded by the retention),
/// then rewrites them.
fn rehash_by_player(conn: &Connection) -> StoreResult<()> {
    let records = conn
        .prepare(
            "SELECT t.id, l.game, l.env, l.player, l.tx_id FROM tx t JOIN ledger l ON l.id = t.id",
        )?
        .query_map([], |row| {
            let game: Vec<u8> = row.get(1)?;
            let player: String = row.get(3)?;
            let tx_id: String = row.get(4)?;
            Ok((
                row.get::<_, i64>(0)?,
                tx_hash_of(&game, row.get(2)?, &player, &tx_id),
            ))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut update = conn.prepare("UPDATE tx SET hash = ?2 WHERE id = ?1")?;
    for (id, hash) in records {
        update.execute(rusqlite::params![id, hash])?;
    }
    Ok(())
}

/// The key of a document's scope: a game's 16 bytes, or nothing for the deployment.
pub fn scope_key(scope: Scope) -> Vec<u8> {
    match scope {
        Scope::Global => Vec::new(),
        Scope::Game(game_id) => game_id.as_bytes().to_vec(),
    }
}

/// An environment as stored.
pub fn env_code(env: Environment) -> i64 {
    match env {
        Environment::Production => 0,
        Environment::Sandbox => 1,
    }
}

/// A money kind as stored.
pub fn kind_code(kind: MoneyKind) -> i64 {
    match kind {
        MoneyKind::Earned => 0,
        MoneyKind::Spent => 1,
        MoneyKind::Purchase => 2,
        MoneyKind::Refund => 3,
    }
}

/// A stored money kind read back.
pub fn kind_from_code(code: i64) -> StoreResult<MoneyKind> {
    match code {
        0 => Ok(MoneyKind::Earned),
        1 => Ok(MoneyKind::Spent),
        2 => Ok(MoneyKind::Purchase),
        3 => Ok(MoneyKind::Refund),
        other => Err(StoreError::Corrupt(format!("unknown money kind {other}"))),
    }
}

/// One total of a day aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayField {
    /// Units of a currency earned.
    Earned,
    /// Units of a currency spent.
    Spent,
    /// Revenue in cents from treated players (no currency).
    RevenueTreatment,
    /// Revenue in cents from holdout players (no currency).
    RevenueControl,
    /// Purchases in cents kept without a store's proof, both groups (no currency).
    RevenueUnverified,
    /// Units of a currency earned above the players' day caps.
    LeftOutEarned,
    /// Units of a currency spent above the players' day caps.
    LeftOutSpent,
    /// Players whose earned units of a currency were capped that day.
    CappedEarned,
    /// Players whose spent units of a currency were capped that day.
    CappedSpent,
    /// Revenue in cents the stores' refunds took back, both groups (no currency).
    Refunded,
}

impl DayField {
    /// As stored.
    pub fn code(self) -> i64 {
        match self {
            Self::Earned => 0,
            Self::Spent => 1,
            Self::RevenueTreatment => 2,
            Self::RevenueControl => 3,
            Self::RevenueUnverified => 4,
            Self::LeftOutEarned => 5,
            Self::LeftOutSpent => 6,
            Self::CappedEarned => 7,
            Self::CappedSpent => 8,
            Self::Refunded => 9,
        }
    }

    /// A stored field read back.
    pub fn from_code(code: i64) -> StoreResult<Self> {
        match code {
            0 => Ok(Self::Earned),
            1 => Ok(Self::Spent),
            2 => Ok(Self::RevenueTreatment),
            3 => Ok(Self::RevenueControl),
            4 => Ok(Self::RevenueUnverified),
            5 => Ok(Self::LeftOutEarned),
            6 => Ok(Self::LeftOutSpent),
            7 => Ok(Self::CappedEarned),
            8 => Ok(Self::CappedSpent),
            9 => Ok(Self::Refunded),
            other => Err(StoreError::Corrupt(format!("unknown day field {other}"))),
        }
    }
}

/// The idempotency record's hash of one player's `tx_id` in one game and environment: the
/// first 8 bytes of SHA-256 over the game's 16 bytes, the environment's code, the player id's
/// length, the player id and the `tx_id` (each field fixed-length or length-prefixed, so no
/// two inputs run together). Stable across builds, since it is stored.
pub fn tx_hash(game_id: uuid::Uuid, env: Environment, player_id: &str, tx_id: &str) -> i64 {
    tx_hash_of(game_id.as_bytes(), env_code(env), player_id, tx_id)
}

/// [`tx_hash`] over the stored forms of game and environment (the layout migration reads
/// them from ledger lines).
fn tx_hash_of(game: &[u8], env: i64, player_id: &str, tx_id: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(game);
    hasher.update(env.to_be_bytes());
    hasher.update((player_id.len() as u64).to_be_bytes());
    hasher.update(player_id.as_bytes());
    hasher.update(tx_id.as_bytes());
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(first)
}

/// A UTC day as stored.
pub fn day_code(day: chrono::NaiveDate) -> i64 {
    i64::from(chrono::Datelike::num_days_from_ce(&day))
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use rusqlite::params;
    use sha2::{Digest, Sha256};
    use uuid::Uuid;

    use super::*;
    use crate::store::sqlite::money::apply;
    use crate::store::{MoneyOp, MoneyOutcome};

    fn earn(game_id: Uuid, player_id: &str, amount: i64) -> MoneyOp {
        MoneyOp {
            game_id,
            env: Environment::Production,
            player_id: player_id.into(),
            tx_id: "t-1".into(),
            kind: MoneyKind::Earned,
            currency_id: "gold".into(),
            amount,
            ts: Utc::now(),
            holdout: false,
            import: false,
            cohort: None,
            proof: None,
            day_cap: None,
        }
    }

    /// The hash layout 3 gave a record: game, environment and `tx_id`, no player.
    fn game_wide_hash(game_id: Uuid, tx_id: &str) -> i64 {
        let mut hasher = Sha256::new();
        hasher.update(game_id.as_bytes());
        hasher.update(env_code(Environment::Production).to_be_bytes());
        hasher.update(tx_id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&hasher.finalize()[..8]);
        i64::from_be_bytes(first)
    }

    #[test]
    fn a_layout_3_file_keeps_its_records_per_player() {
        let conn =
            open_writer(&Location::Memory, SyncMode::Full, Duration::from_secs(1)).expect("open");
        let game = Uuid::new_v4();
        assert_eq!(
            apply(&conn, &earn(game, "p1", 40)).expect("apply"),
            MoneyOutcome::Applied {
                balance: 40,
                left_out: 0
            }
        );
        // Make the file what layout 3 wrote: the record hashed without its player, no proof
        // column on the ledger, no player days and no exposures.
        conn.execute(
            "UPDATE tx SET hash = ?1",
            params![game_wide_hash(game, "t-1")],
        )
        .expect("old hash");
        conn.execute("ALTER TABLE ledger DROP COLUMN proof", [])
            .expect("layout 3 ledger");
        for table in ["exposures", "player_days"] {
            conn.execute(&format!("DROP TABLE {table}"), [])
                .expect("layout 3 tables");
        }
        conn.pragma_update(None, "user_version", 3)
            .expect("layout 3");
        migrate(&conn).expect("migrate");
        let version: i64 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .expect("version");
        assert_eq!(version, VERSION);
        assert_eq!(
            apply(&conn, &earn(game, "p1", 40)).expect("retry"),
            MoneyOutcome::Duplicate { balance: 40 }
        );
        assert_eq!(
            apply(&conn, &earn(game, "p2", 5)).expect("another player"),
            MoneyOutcome::Applied {
                balance: 5,
                left_out: 0
            }
        );
    }
}
