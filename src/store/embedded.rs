//! The in-process store: the default backend, so the service runs with no setup.
//!
//! Documents live in one map guarded by a `std::sync::Mutex`; money lives in one
//! mutex-guarded struct per game (wallets, idempotency record, ledger, day aggregates and
//! kill level together), so [`Store::apply_money`] checks and writes under a single lock and
//! is atomic exactly like the Redis script. No lock is ever held across an `.await`, and
//! every critical section is short and cannot panic, so a poisoned lock (a panic elsewhere
//! while holding it) still guards consistent data and is simply taken over.
//!
//! Nothing is persisted: a restart loses everything. The bus is a `tokio::sync::broadcast`
//! channel, which reaches the one node there is.
//!
//! Imported spends ([`MoneyOp::import`]) skip the balance check but still move the balance,
//! so a wallet may go negative when history arrives out of order; the ledger then still sums
//! to the balance.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use chrono::NaiveDate;
use tokio::sync::broadcast;
use uuid::Uuid;

use super::{
    BusMessage, Collection, DayAggregate, Environment, LedgerEntry, MoneyKind, MoneyOp,
    MoneyOutcome, Scope, Store, StoreResult,
};

/// How many bus messages a slow subscriber may lag behind before it misses some.
const BUS_CAPACITY: usize = 1024;

/// One collection's documents: id -> JSON bytes.
type Documents = HashMap<String, Vec<u8>>;

/// The in-process backend. Cheap to create; every instance is an independent store.
#[derive(Debug)]
pub struct EmbeddedStore {
    docs: Mutex<HashMap<(Scope, &'static str), Documents>>,
    games: Mutex<HashMap<Uuid, Arc<Mutex<GameMoney>>>>,
    bus: broadcast::Sender<BusMessage>,
}

/// Everything money-related of one game, behind one lock.
#[derive(Debug, Default)]
struct GameMoney {
    kill_level: u8,
    production: EnvMoney,
    sandbox: EnvMoney,
}

impl GameMoney {
    fn env(&mut self, env: Environment) -> &mut EnvMoney {
        match env {
            Environment::Production => &mut self.production,
            Environment::Sandbox => &mut self.sandbox,
        }
    }
}

/// The money of one game and environment.
#[derive(Debug, Default)]
struct EnvMoney {
    /// (player id, currency id) -> balance.
    wallets: HashMap<(String, String), i64>,
    /// tx id -> balance recorded when first applied.
    /// tx id -> (balance after, fingerprint).
    tx: HashMap<String, (i64, String)>,
    /// player id -> lifetime purchase cents.
    spend: HashMap<String, i64>,
    ledger: Vec<LedgerEntry>,
    days: HashMap<NaiveDate, DayAggregate>,
}

/// Takes a lock even if a panic elsewhere poisoned it (see the module doc).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl EmbeddedStore {
    /// An empty store with its own bus.
    pub fn new() -> Self {
        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        Self {
            docs: Mutex::new(HashMap::new()),
            games: Mutex::new(HashMap::new()),
            bus,
        }
    }

    /// The money of one game, created on first use.
    fn game(&self, game_id: Uuid) -> Arc<Mutex<GameMoney>> {
        Arc::clone(lock(&self.games).entry(game_id).or_default())
    }

    /// The money of one game if it was ever touched (reads never create it).
    fn existing_game(&self, game_id: Uuid) -> Option<Arc<Mutex<GameMoney>>> {
        lock(&self.games).get(&game_id).map(Arc::clone)
    }
}

impl Default for EmbeddedStore {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Store for EmbeddedStore {
    async fn ping(&self) -> StoreResult<()> {
        Ok(())
    }

    async fn get(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(lock(&self.docs)
            .get(&(coll.scope, coll.name))
            .and_then(|docs| docs.get(id).cloned()))
    }

    async fn list(&self, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>> {
        Ok(lock(&self.docs)
            .get(&(coll.scope, coll.name))
            .map(|docs| {
                docs.iter()
                    .map(|(id, value)| (id.clone(), value.clone()))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn put_all(&self, coll: Collection, entries: Vec<(String, Vec<u8>)>) -> StoreResult<()> {
        if entries.is_empty() {
            return Ok(());
        }
        lock(&self.docs)
            .entry((coll.scope, coll.name))
            .or_default()
            .extend(entries);
        Ok(())
    }

    async fn insert_new(&self, coll: Collection, id: &str, value: Vec<u8>) -> StoreResult<bool> {
        let mut docs = lock(&self.docs);
        let coll_docs = docs.entry((coll.scope, coll.name)).or_default();
        if coll_docs.contains_key(id) {
            return Ok(false);
        }
        coll_docs.insert(id.to_owned(), value);
        Ok(true)
    }

    async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        let mut docs = lock(&self.docs);
        let coll_docs = docs.entry((coll.scope, coll.name)).or_default();
        if coll_docs.get(id).map(Vec::as_slice) != expected {
            return Ok(false);
        }
        coll_docs.insert(id.to_owned(), new);
        Ok(true)
    }

    async fn delete(&self, coll: Collection, id: &str) -> StoreResult<bool> {
        Ok(lock(&self.docs)
            .get_mut(&(coll.scope, coll.name))
            .is_some_and(|docs| docs.remove(id).is_some()))
    }

    async fn set_kill_level(&self, game_id: Uuid, level: u8) -> StoreResult<()> {
        lock(&self.game(game_id)).kill_level = level;
        Ok(())
    }

    async fn apply_money(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome> {
        let game = self.game(op.game_id);
        let mut game = lock(&game);
        // Checks first, in the same order as the Redis script.
        let fingerprint = op.fingerprint();
        if let Some((balance, first)) = game.env(op.env).tx.get(&op.tx_id) {
            return Ok(if *first == fingerprint {
                MoneyOutcome::Duplicate { balance: *balance }
            } else {
                MoneyOutcome::TxConflict
            });
        }
        if game.kill_level >= 3 {
            return Ok(MoneyOutcome::KillSwitch);
        }
        let money = game.env(op.env);
        let wallet_key = (op.player_id.clone(), op.currency_id.clone());
        let current = money.wallets.get(&wallet_key).copied().unwrap_or(0);
        if op.kind == MoneyKind::Spent && !op.import && current < op.amount {
            return Ok(MoneyOutcome::InsufficientFunds { balance: current });
        }
        // Writes: balance, idempotency record, ledger, day aggregate.
        let balance_after = match op.kind {
            MoneyKind::Earned => current.saturating_add(op.amount),
            MoneyKind::Spent => current.saturating_sub(op.amount),
            MoneyKind::Purchase => 0,
        };
        if op.kind != MoneyKind::Purchase {
            money.wallets.insert(wallet_key, balance_after);
        }
        if op.kind == MoneyKind::Purchase {
            let spend = money.spend.entry(op.player_id.clone()).or_default();
            *spend = spend.saturating_add(op.amount);
        }
        money
            .tx
            .insert(op.tx_id.clone(), (balance_after, fingerprint));
        money.ledger.push(LedgerEntry {
            tx_id: op.tx_id.clone(),
            player_id: op.player_id.clone(),
            kind: op.kind,
            currency_id: op.currency_id.clone(),
            amount: op.amount,
            balance_after,
            ts: op.ts,
        });
        let day = money.days.entry(op.ts.date_naive()).or_default();
        let total = match op.kind {
            MoneyKind::Earned => day.earned.entry(op.currency_id.clone()).or_default(),
            MoneyKind::Spent => day.spent.entry(op.currency_id.clone()).or_default(),
            MoneyKind::Purchase if op.holdout => &mut day.revenue_control_cents,
            MoneyKind::Purchase => &mut day.revenue_treatment_cents,
        };
        *total = total.saturating_add(op.amount);
        Ok(MoneyOutcome::Applied {
            balance: balance_after,
        })
    }

    async fn spend_cents(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> StoreResult<i64> {
        let Some(game) = self.existing_game(game_id) else {
            return Ok(0);
        };
        let mut game = lock(&game);
        Ok(game.env(env).spend.get(player_id).copied().unwrap_or(0))
    }

    async fn balance(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currency_id: &str,
    ) -> StoreResult<i64> {
        let Some(game) = self.existing_game(game_id) else {
            return Ok(0);
        };
        let mut game = lock(&game);
        Ok(game
            .env(env)
            .wallets
            .get(&(player_id.to_owned(), currency_id.to_owned()))
            .copied()
            .unwrap_or(0))
    }

    async fn ledger(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>> {
        let Some(game) = self.existing_game(game_id) else {
            return Ok(Vec::new());
        };
        let mut game = lock(&game);
        Ok(game.env(env).ledger.clone())
    }

    async fn day_aggregates(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[NaiveDate],
    ) -> StoreResult<Vec<DayAggregate>> {
        let Some(game) = self.existing_game(game_id) else {
            return Ok(vec![DayAggregate::default(); days.len()]);
        };
        let mut game = lock(&game);
        let money = game.env(env);
        Ok(days
            .iter()
            .map(|day| money.days.get(day).cloned().unwrap_or_default())
            .collect())
    }

    async fn publish(&self, msg: &BusMessage) -> StoreResult<()> {
        // No subscriber is not an error: the message simply has nobody to reach.
        let _ = self.bus.send(msg.clone());
        Ok(())
    }

    fn subscribe(&self) -> broadcast::Receiver<BusMessage> {
        self.bus.subscribe()
    }
}
