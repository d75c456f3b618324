//! The per-player day caps in force for a game's currencies: the studio's
//! `max_per_player_day`, or else the cap derived from the game's own players (see
//! [`offer_domain::day_caps`]).
//!
//! Deriving reads every player's day totals of the seven days before today (one store read
//! per day, never the ledger), so each node derives a game's caps once per
//! `economy.day_caps_refresh_ms` per environment and keeps them ([`Inner::day_caps`](crate::service::Inner::day_caps)):
//! a money event only looks the cap of its currency up. A currency the studio capped needs
//! no derivation at all. Each node derives from the shared store, so nodes agree within one
//! refresh interval.

use std::collections::BTreeMap;

use chrono::{Days, Utc};
use offer_domain::currency::Currency;
use offer_domain::day_caps::{CapSource, CurrencyCaps, DERIVED_WINDOW_DAYS, derived_cap};
use offer_domain::environment::Environment;
use offer_domain::game::Game;
use uuid::Uuid;

use crate::service::{ServiceResult, Services};
use crate::store::MoneyKind;

/// The caps derived from a game's players, per currency id: earned and spent.
#[derive(Debug, Default)]
pub struct DerivedCaps {
    by_currency: BTreeMap<String, (Option<i64>, Option<i64>)>,
}

impl DerivedCaps {
    /// The derived cap of one currency and kind, if its players had enough days.
    fn of(&self, currency_id: &str, kind: MoneyKind) -> Option<i64> {
        let (earned, spent) = self.by_currency.get(currency_id).copied()?;
        match kind {
            MoneyKind::Earned => earned,
            MoneyKind::Spent => spent,
            MoneyKind::Purchase | MoneyKind::Refund => None,
        }
    }
}

/// The studio's cap of `currency_id`, if it set one.
pub fn studio_cap(game: &Game, currency_id: &str) -> Option<i64> {
    currency(game, currency_id).and_then(|c| c.max_per_player_day)
}

fn currency<'a>(game: &'a Game, currency_id: &str) -> Option<&'a Currency> {
    game.currencies
        .iter()
        .find(|c| c.currency_id == currency_id)
}

/// The day cap of one live `currency_earned` or `currency_spent` of `game` in `env`: the
/// studio's cap, else the derived one (from this node's cache, derived again once older than
/// the refresh interval).
pub async fn cap_for(
    state: &Services,
    game: &Game,
    env: Environment,
    kind: MoneyKind,
    currency_id: &str,
) -> ServiceResult<Option<i64>> {
    if let Some(cap) = studio_cap(game, currency_id) {
        return Ok(Some(cap));
    }
    let derived = derived(state, game.game_id, env).await?;
    Ok(derived.of(currency_id, kind))
}

/// The caps in force for every currency of `game` in `env`.
pub async fn in_force(
    state: &Services,
    game: &Game,
    env: Environment,
) -> ServiceResult<BTreeMap<String, CurrencyCaps>> {
    let derived = derived(state, game.game_id, env).await?;
    Ok(game
        .currencies
        .iter()
        .map(|c| {
            let caps = match c.max_per_player_day {
                Some(cap) => CurrencyCaps {
                    earned: Some(cap),
                    spent: Some(cap),
                    source: Some(CapSource::Studio),
                },
                None => {
                    let earned = derived.of(&c.currency_id, MoneyKind::Earned);
                    let spent = derived.of(&c.currency_id, MoneyKind::Spent);
                    CurrencyCaps {
                        earned,
                        spent,
                        source: (earned.is_some() || spent.is_some()).then_some(CapSource::Derived),
                    }
                }
            };
            (c.currency_id.clone(), caps)
        })
        .collect())
}

/// This node's derived caps of a game, derived again when older than the refresh interval.
async fn derived(
    state: &Services,
    game_id: Uuid,
    env: Environment,
) -> ServiceResult<std::sync::Arc<DerivedCaps>> {
    state
        .day_caps
        .get_or_compute(game_id, env, || derive(state, game_id, env))
        .await
}

/// Derives a game's caps from its players' day totals of the days before today.
async fn derive(state: &Services, game_id: Uuid, env: Environment) -> ServiceResult<DerivedCaps> {
    let today = Utc::now().date_naive();
    let days: Vec<_> = (1..=u64::from(DERIVED_WINDOW_DAYS))
        .filter_map(|back| today.checked_sub_days(Days::new(back)))
        .collect();
    let totals = state.store.player_day_totals(game_id, env, &days).await?;
    let mut by_kind: BTreeMap<(String, bool), Vec<i64>> = BTreeMap::new();
    for t in totals {
        by_kind
            .entry((t.currency_id, t.kind == MoneyKind::Earned))
            .or_default()
            .push(t.total);
    }
    let mut caps = DerivedCaps::default();
    for ((currency_id, earned), totals) in by_kind {
        let cap = derived_cap(totals);
        let entry = caps.by_currency.entry(currency_id).or_default();
        if earned {
            entry.0 = cap;
        } else {
            entry.1 = cap;
        }
    }
    Ok(caps)
}
