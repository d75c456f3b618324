//! The keys a money event touches, built once per game and environment on this node instead
//! of once per event.
//!
//! Every money event names nine keys. Eight of them are the same for every event of one
//! game and environment (the day keys change once a day), and formatting them, a game id
//! among them, took about a tenth of the node's CPU on the wallet path. The names themselves
//! still come from [`Keys`], so a key here is byte for byte the key the rest of the store
//! reads.

use std::sync::{Arc, Mutex, PoisonError};

use chrono::NaiveDate;
use dashmap::DashMap;
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::super::keys::Keys;

/// One game's and environment's money keys, shared by its events.
#[derive(Debug)]
pub(super) struct MoneyKeys {
    keys: Keys,
    game_id: Uuid,
    env: Environment,
    /// The idempotency records (tx id -> balance and fingerprint).
    pub(super) tx: Arc<str>,
    /// The kill-switch level.
    pub(super) kill: Arc<str>,
    /// The append-only ledger.
    pub(super) ledger: Arc<str>,
    /// Lifetime real-money spend per player.
    pub(super) spend: Arc<str>,
    /// The idempotency records' receive times.
    pub(super) tx_received: Arc<str>,
    /// Lifetime unverified purchases per player (see [`Keys::spend_unverified`]).
    pub(super) spend_unverified: Arc<str>,
    /// Every wallet key up to its player id, its last segment.
    wallet_prefix: String,
    /// Set once this node has brought the tx hash to the per-player layout
    /// ([`super::tx_layout`]).
    pub(super) per_player: tokio::sync::OnceCell<()>,
    /// The day keys of the day last asked for: events carry their own time, so a call near
    /// midnight may ask for two days in turn, and each change rebuilds them once.
    days: Mutex<Option<DayKeys>>,
}

/// The keys of one UTC day.
#[derive(Debug, Clone)]
pub(super) struct DayKeys {
    day: NaiveDate,
    /// The day's aggregate hash.
    pub(super) totals: Arc<str>,
    /// The payers' spend on the day.
    pub(super) spend: Arc<str>,
    /// The day's unverified purchases by group.
    pub(super) unverified_totals: Arc<str>,
    /// The payers' unverified purchases on the day.
    pub(super) unverified_spend: Arc<str>,
    /// Each player's totals of the day (what the day caps count against).
    pub(super) players: Arc<str>,
}

impl MoneyKeys {
    fn new(keys: &Keys, game_id: Uuid, env: Environment) -> Self {
        Self {
            keys: keys.clone(),
            game_id,
            env,
            tx: keys.tx(game_id, env).into(),
            kill: keys.kill(game_id).into(),
            ledger: keys.ledger(game_id, env).into(),
            spend: keys.spend(game_id, env).into(),
            tx_received: keys.tx_received(game_id, env).into(),
            spend_unverified: keys.spend_unverified(game_id, env).into(),
            wallet_prefix: keys.wallet(game_id, env, ""),
            per_player: tokio::sync::OnceCell::new(),
            days: Mutex::new(None),
        }
    }

    /// The keys of `day`, built only when the day differs from the last one asked for.
    pub(super) fn day(&self, day: NaiveDate) -> DayKeys {
        let mut last = self.days.lock().unwrap_or_else(PoisonError::into_inner);
        match &*last {
            Some(keys) if keys.day == day => keys.clone(),
            _ => {
                let keys = DayKeys {
                    day,
                    totals: self.keys.day(self.game_id, self.env, day).into(),
                    spend: self.keys.spend_day(self.game_id, self.env, day).into(),
                    unverified_totals: self.keys.day_unverified(self.game_id, self.env, day).into(),
                    unverified_spend: self
                        .keys
                        .spend_day_unverified(self.game_id, self.env, day)
                        .into(),
                    players: self.keys.player_days(self.game_id, self.env, day).into(),
                };
                *last = Some(keys.clone());
                keys
            }
        }
    }

    /// A player's wallet (one per player: built per event, from the game's wallet prefix,
    /// since formatting the whole key cost an event more than the rest of its keys).
    pub(super) fn wallet(&self, player_id: &str) -> Arc<str> {
        [self.wallet_prefix.as_str(), player_id].concat().into()
    }
}

/// Per game and environment, its money keys. An entry is a few hundred bytes and there are
/// at most two per game this node has applied money events for.
#[derive(Debug)]
pub(super) struct MoneyKeyCache {
    keys: Keys,
    games: DashMap<(Uuid, Environment), Arc<MoneyKeys>>,
}

impl MoneyKeyCache {
    /// An empty cache for the key space `keys`.
    pub(super) fn new(keys: Keys) -> Self {
        Self {
            keys,
            games: DashMap::new(),
        }
    }

    /// The money keys of `game_id` in `env`, built on first use.
    pub(super) fn get(&self, game_id: Uuid, env: Environment) -> Arc<MoneyKeys> {
        if let Some(found) = self.games.get(&(game_id, env)) {
            return Arc::clone(found.value());
        }
        Arc::clone(
            self.games
                .entry((game_id, env))
                .or_insert_with(|| Arc::new(MoneyKeys::new(&self.keys, game_id, env)))
                .value(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cached_keys_are_the_key_spaces_own() {
        let keys = Keys::new("p");
        let cache = MoneyKeyCache::new(keys.clone());
        let game = Uuid::new_v4();
        let env = Environment::Sandbox;
        let money = cache.get(game, env);
        assert!(Arc::ptr_eq(&money, &cache.get(game, env)), "built once");
        assert_eq!(&*money.tx, keys.tx(game, env));
        assert_eq!(&*money.kill, keys.kill(game));
        assert_eq!(&*money.ledger, keys.ledger(game, env));
        assert_eq!(&*money.spend, keys.spend(game, env));
        assert_eq!(&*money.tx_received, keys.tx_received(game, env));
        for player in ["pl", "a:{b}|é", ""] {
            assert_eq!(&*money.wallet(player), keys.wallet(game, env, player));
        }
        let (today, yesterday) = (
            NaiveDate::from_ymd_opt(2026, 11, 24).expect("date"),
            NaiveDate::from_ymd_opt(2026, 11, 23).expect("date"),
        );
        for day in [today, yesterday, yesterday, today] {
            let got = money.day(day);
            assert_eq!(&*got.totals, keys.day(game, env, day));
            assert_eq!(&*got.spend, keys.spend_day(game, env, day));
            assert_eq!(&*got.players, keys.player_days(game, env, day));
        }
        let other = cache.get(game, Environment::Production);
        assert_eq!(&*other.tx, keys.tx(game, Environment::Production));
    }
}
