//! History import (`POST /v1/games/{game_id}/events/import`): a game's past money events,
//! appended to the ledger and the day aggregates as they happened.
//!
//! History has no opening balance and may arrive out of order, so an imported spend is not
//! checked against the balance; `tx_id` still deduplicates, so an import can be re-run.
//! Every event is checked before the first is written: one bad event refuses the whole call
//! (422 naming its index) and nothing is written. A production import that appended
//! anything recomputes the game's FSR quadrant on this node straight away.
//!
//! Imported history never counts towards production's billing figures, whatever the game's
//! receipt checks: an imported production purchase carries no store's proof, so it is kept
//! as unverified (its revenue shown apart, counted in no figure the holdout comparison, the
//! bill or the spender tier reads), an imported production player counts in the billing
//! figures only once it plays live, and production's `launched_at` is its first live
//! session. Imported currency still counts in the economy's health figures (the faucet/sink
//! ratio, the quadrant, the approval simulation). In the sandbox imported history counts in
//! every figure, so a studio can try the verdict on its real history without touching a bill.
//!
//! An imported `session_start` writes no ledger line: it enters its player in the
//! environment's population (install day the earliest session seen) and, in the sandbox,
//! moves `sandbox_launched_at` back to it when it is earlier.

use std::collections::HashMap;

use chrono::{Duration, Utc};
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_domain::holdout::is_holdout;
use offer_domain::validation::FieldError;
use offer_wire::event::SdkEvent;
use serde::Serialize;
use utoipa::ToSchema;

use crate::service::economy::day_caps;
use crate::service::economy::population::{self, Sighting};
use crate::service::play::events::{Refusal, Rejected, validate_fields};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::{MoneyKind, MoneyOp, MoneyOutcome, Proof};

/// Most events one import call takes (more is a 413).
pub const MAX_IMPORT: usize = 10_000;
/// Longest player id.
const MAX_PLAYER_ID: usize = 128;
/// How far in the future an imported `ts` may be: history is in the past, give or take the
/// clocks of the machines it comes from.
const MAX_FUTURE_HOURS: i64 = 24;
/// The earliest imported `ts`: 2000-01-01T00:00:00Z, in Unix seconds. No game's history is
/// older, and an older time (`0001-01-01`, a zeroed clock's 1970) would move the game's launch
/// day and every figure counted from it.
const EARLIEST_TS: i64 = 946_684_800;

/// One past event of one player.
#[derive(Debug, Clone)]
pub struct ImportedEvent {
    /// The player it belongs to.
    pub player_id: String,
    /// The event; its `ts` is required.
    pub event: SdkEvent,
}

/// What an import did.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ImportOutcome {
    /// Money events appended now, and `session_start` events taken into the population.
    pub imported: usize,
    /// Events whose `tx_id` was already applied with the same change (nothing written).
    pub duplicates: usize,
    /// Events refused by the store (a `tx_id` used for another change, the SDK turned off),
    /// by index; nothing of them was written.
    pub rejected: Vec<Rejected>,
}

/// Checks every event, then appends them in order.
pub async fn import(
    state: &Services,
    handle: &GameHandle,
    env: Environment,
    events: Vec<ImportedEvent>,
) -> ServiceResult<ImportOutcome> {
    if events.len() > MAX_IMPORT {
        return Err(ServiceError::PayloadTooLarge(format!(
            "at most {MAX_IMPORT} events per import, got {}",
            events.len()
        )));
    }
    let view = handle.view();
    let game = &view.game;
    let latest = Utc::now() + Duration::hours(MAX_FUTURE_HOURS);
    let errors: Vec<FieldError> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            check(game, e, latest)
                .err()
                .map(|reason| FieldError::new("events", reason).at(i))
        })
        .collect();
    if !errors.is_empty() {
        return Err(ServiceError::Validation(errors));
    }
    let mut outcome = ImportOutcome {
        imported: 0,
        duplicates: 0,
        rejected: Vec::new(),
    };
    let mut first_session: Option<chrono::DateTime<Utc>> = None;
    // Each player's install cohort, looked up once per import (none for a player with no
    // session, live or imported before its money events).
    let mut cohorts: HashMap<String, Option<String>> = HashMap::new();
    for (index, e) in events.into_iter().enumerate() {
        if let SdkEvent::SessionStart { ts: Some(ts) } = e.event {
            population::register(
                state,
                game.game_id,
                env,
                &e.player_id,
                ts.date_naive(),
                None,
                Sighting::Imported,
            )
            .await?;
            first_session = Some(first_session.map_or(ts, |first| first.min(ts)));
            outcome.imported += 1;
            continue;
        }
        let cohort = match cohorts.get(&e.player_id) {
            Some(known) => known.clone(),
            None => {
                let entry = population::entry(state, game.game_id, env, &e.player_id).await?;
                let known = entry.map(|entry| cohort_of(entry.install_day));
                cohorts.insert(e.player_id.clone(), known.clone());
                known
            }
        };
        let Some(mut op) = money_op(game.game_id, env, e, cohort) else {
            continue;
        };
        // Imported production revenue carries no store's proof: it is kept apart like any
        // unverified purchase, whatever the game's verification, so no import moves the
        // holdout verdict, the bill or a player's spender tier.
        if op.kind.is_revenue() && env == Environment::Production {
            op.proof = Some(Proof::Unverified);
        }
        // History is capped by the studio's cap only: the derived caps describe the days
        // before today, not the imported ones.
        if !op.kind.is_revenue() {
            op.day_cap = day_caps::studio_cap(game, &op.currency_id);
        }
        let refusal = match state.store.apply_money(&op).await? {
            MoneyOutcome::Applied { .. } => {
                outcome.imported += 1;
                continue;
            }
            MoneyOutcome::Duplicate { .. } => {
                outcome.duplicates += 1;
                continue;
            }
            MoneyOutcome::TxConflict => Refusal::TxIdReused { tx_id: op.tx_id },
            MoneyOutcome::KillSwitch => Refusal::SdkDisabled,
            // Imports skip the balance check; a store answering this is not following it.
            MoneyOutcome::InsufficientFunds { .. } => {
                return Err(ServiceError::Internal(
                    "the store checked the balance of an imported spend".into(),
                ));
            }
        };
        outcome.rejected.push(Rejected {
            index,
            code: refusal.code(),
            message: refusal.message(),
        });
    }
    // Production's launch is its first live session; the sandbox's may be imported.
    if let (Some(at), Environment::Sandbox) = (first_session, env) {
        crate::service::game::games::mark_launched(state, handle, env, at).await?;
    }
    // History can move the production window at once; the schedule would see it within an
    // interval anyway, so a failed refresh is logged rather than failing what was written.
    if env == Environment::Production
        && outcome.imported > 0
        && let Err(e) = crate::service::economy::health::refresh_quadrant(state, handle).await
    {
        tracing::warn!(game_id = %game.game_id, error = %e, "refreshing the FSR quadrant after an import failed");
    }
    Ok(outcome)
}

/// One event's rules: a player id, a `ts` from 2000 on and at most a day ahead, a money event,
/// its fields.
fn check(
    game: &offer_domain::game::Game,
    e: &ImportedEvent,
    latest: chrono::DateTime<Utc>,
) -> Result<(), String> {
    let len = e.player_id.chars().count();
    if len == 0 || len > MAX_PLAYER_ID {
        return Err(format!("player_id must be 1 to {MAX_PLAYER_ID} characters"));
    }
    match e.event.ts() {
        None => return Err("ts is required in an import".into()),
        Some(ts) if ts > latest => {
            return Err(format!(
                "ts is more than {MAX_FUTURE_HOURS} hours in the future: history is past"
            ));
        }
        Some(ts) if ts.timestamp() < EARLIEST_TS => {
            return Err("ts is before 2000-01-01T00:00:00Z: no game's history is older".into());
        }
        Some(_) => {}
    }
    if !matches!(
        e.event,
        SdkEvent::CurrencyEarned { .. }
            | SdkEvent::CurrencySpent { .. }
            | SdkEvent::Purchase { .. }
            | SdkEvent::SessionStart { .. }
    ) {
        return Err(format!(
            "`{}` is not imported: only session_start, currency_earned, currency_spent and \
             purchase are",
            e.event.kind()
        ));
    }
    validate_fields(game, &e.event)
}

/// The ledger change of a checked money event.
fn money_op(
    game_id: uuid::Uuid,
    env: Environment,
    e: ImportedEvent,
    cohort: Option<String>,
) -> Option<MoneyOp> {
    let (kind, currency_id, amount, tx_id, ts) = match e.event {
        SdkEvent::CurrencyEarned {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => (MoneyKind::Earned, currency_id, amount, tx_id, ts),
        SdkEvent::CurrencySpent {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => (MoneyKind::Spent, currency_id, amount, tx_id, ts),
        SdkEvent::Purchase {
            price_cents,
            tx_id,
            ts,
            ..
        } => (MoneyKind::Purchase, String::new(), price_cents, tx_id, ts),
        _ => return None,
    };
    Some(MoneyOp {
        game_id,
        env,
        holdout: is_holdout(&e.player_id, game_id),
        player_id: e.player_id,
        tx_id,
        kind,
        currency_id,
        amount,
        ts: ts?,
        import: true,
        cohort,
        proof: None,
        day_cap: None,
    })
}
