//! The approval simulation (`POST /v1/approvals/{approval_id}/simulate`): what a pending
//! offer would do to the production economy, run before a human decides.
//!
//! This module gathers the inputs and stores the result; the model itself (buckets, trials,
//! percentiles) is the domain's `simulation` module:
//! - the population: the production players whose latest session is in the 7-day window
//!   ending today, each with its earned and spent amounts of that window (from the ledger's
//!   lines of the window) and its L1 segment (its last `platform` attribute and lifetime
//!   spend);
//! - the weighting: the FSR report's choice for the window (USD per unit when every currency
//!   that moved has a value, raw units otherwise), applied to the players' amounts and to the
//!   offer alike;
//! - the offer: the units its currency packs grant (faucet) and the `earned_price` of its
//!   items (sink); the chance that a player takes it is the L1 learner's estimate for the
//!   offer's arm (the arm it was picked as, or its item's category at the nearest price
//!   point) at the offer's trigger, for a player of the segment's platform and spender tier.
//!
//! The trials run on a blocking thread. The result is stored on the approval with a
//! compare-and-swap that retries against a concurrent change, and a decision racing with it
//! retries the same way (see `approvals::decide`), so simulating never blocks approving.

use std::collections::HashMap;

use chrono::{Days, Utc};
use offer_actors::GameHandle;
use offer_domain::approval::{Approval, ApprovalKind, ApprovalStatus, OfferDefinition};
use offer_domain::bandit::{Arm, Platform, SEGMENT_COUNT, Segment, SpenderTier, WHALE_SPEND_CENTS};
use offer_domain::catalogue::{currency_rates, granted_currency};
use offer_domain::environment::Environment;
use offer_domain::fsr::{Thresholds, WINDOW_DAYS, Weighting};
use offer_domain::learner::{Context, Features, Learner, nearest_arm};
use offer_domain::simulation::{
    GenreContext, ObservedPlayer, OfferEffect, Population, Simulation, TRIALS,
};

use crate::service::{
    ServiceError, ServiceResult, Services, approval::approvals, economy::health,
    economy::population,
};
use crate::store::MoneyKind;

/// Runs the simulation of a pending offer approval and stores its result on the record.
/// `seed` fixes the trials' random numbers (a fresh one when absent; the result names it).
pub async fn simulate(
    state: &Services,
    handle: &GameHandle,
    approval: &Approval,
    seed: Option<u64>,
) -> ServiceResult<Approval> {
    let offer = match (&approval.kind, approval.status, &approval.offer) {
        (ApprovalKind::Offer, ApprovalStatus::Pending, Some(offer)) => offer,
        (ApprovalKind::Offer, ApprovalStatus::Pending, None) => {
            return Err(ServiceError::Internal(
                "an offer approval without its offer".into(),
            ));
        }
        (ApprovalKind::CustomPage, ..) => {
            return Err(ServiceError::Conflict(
                "only offer approvals are simulated; a custom page does not move the economy"
                    .into(),
            ));
        }
        (_, status, _) => {
            return Err(ServiceError::Conflict(format!(
                "the approval is already {}: only a pending approval is simulated",
                status.as_str()
            )));
        }
    };
    let env = Environment::Production;
    let report = health::fsr_report(state, handle, env, 1, None).await?;
    let view = handle.view();
    let game = &view.game;
    let weights: HashMap<String, f64> = match report.weighting {
        Weighting::Usd => currency_rates(&view.items, &game.currencies),
        Weighting::Units => HashMap::new(),
    };
    let weight = |currency: &str| weights.get(currency).copied().unwrap_or(1.0);

    let population = active_population(state, game.game_id, env, &weight).await?;
    let effect = offer_effect(handle, offer, &weight);
    let context = GenreContext {
        genre: game.genre.clone(),
        healthy_fsr_min: report.thresholds.min,
        healthy_fsr_max: report.thresholds.max,
        quadrant: report.quadrant.or(Some(view.snapshot.quadrant())),
    };
    let thresholds: Thresholds = report.thresholds;
    let pass_threshold = state.settings.economy.simulation_pass_threshold;
    let seed = seed.unwrap_or_else(rand::random);
    let result = tokio::task::spawn_blocking(move || {
        Simulation {
            population: &population,
            offer: effect,
            thresholds,
            pass_threshold,
            trials: TRIALS,
            seed,
        }
        .run(context)
    })
    .await
    .map_err(|e| ServiceError::Internal(format!("simulation: {e}")))?;
    approvals::attach_simulation(state, approval.approval_id, result).await
}

/// The players of the window with their weighted amounts, summarised.
async fn active_population(
    state: &Services,
    game_id: uuid::Uuid,
    env: Environment,
    weight: &impl Fn(&str) -> f64,
) -> ServiceResult<Population> {
    let today = Utc::now().date_naive();
    let first_day = today
        .checked_sub_days(Days::new(u64::from(WINDOW_DAYS - 1)))
        .unwrap_or(today);
    let since = first_day.and_time(chrono::NaiveTime::MIN).and_utc();
    let spends: HashMap<String, i64> = state
        .store
        .spends(game_id, env)
        .await?
        .into_iter()
        .collect();
    let mut players: HashMap<String, ObservedPlayer> =
        population::population_since(state, game_id, env, first_day)
            .await?
            .into_iter()
            .map(|(player_id, entry)| {
                let spent_cents = spends.get(&player_id).copied().unwrap_or(0);
                let segment = Segment::of(entry.platform.as_deref(), spent_cents);
                let observed = ObservedPlayer {
                    segment,
                    earned: 0.0,
                    spent: 0.0,
                };
                (player_id, observed)
            })
            .collect();
    for line in state.store.ledger(game_id, env).await? {
        if line.ts < since {
            continue;
        }
        let Some(player) = players.get_mut(&line.player_id) else {
            continue;
        };
        let amount = line.amount as f64 * weight(&line.currency_id);
        match line.kind {
            MoneyKind::Earned => player.earned += amount,
            MoneyKind::Spent => player.spent += amount,
            MoneyKind::Purchase | MoneyKind::Refund => {}
        }
    }
    Ok(Population::summarise(players.into_values()))
}

/// What one taker of the offer does to the economy, and how likely each segment takes it.
fn offer_effect(
    handle: &GameHandle,
    offer: &OfferDefinition,
    weight: &impl Fn(&str) -> f64,
) -> OfferEffect {
    let view = handle.view();
    let (mut grant, mut sink) = (0.0, 0.0);
    let mut category = None;
    for item_id in &offer.item_ids {
        let Some(item) = view.items.iter().find(|i| &i.item_id == item_id) else {
            continue;
        };
        category.get_or_insert(item.category);
        if let Some(currency) = granted_currency(item, &view.game.currencies) {
            grant += item.quantity.unwrap_or(0).max(0) as f64 * weight(currency);
        }
        if let Some(ep) = &item.earned_price {
            sink += ep.amount as f64 * weight(&ep.currency_id);
        }
    }
    let arm = offer
        .arm
        .or_else(|| category.and_then(|c| nearest_arm(c, offer.price_cents)));
    let learner = view.snapshot.learner();
    let mut take_rate = [0.0; SEGMENT_COUNT];
    if let Some(arm) = arm {
        for segment in Segment::all() {
            if let Some(slot) = take_rate.get_mut(segment.index()) {
                *slot = segment_take_rate(learner, &offer.trigger, segment, arm);
            }
        }
    }
    OfferEffect {
        take_rate,
        grant,
        sink,
    }
}

/// The learner's estimated conversion of `arm` at `trigger` for a player of `segment` of
/// whom nothing else is known: the platform, and a lifetime spend typical of the tier.
fn segment_take_rate(learner: &Learner, trigger: &str, segment: Segment, arm: Arm) -> f64 {
    let attributes = HashMap::new();
    let context = Context {
        trigger,
        platform: match segment.platform {
            Platform::Ios => Some("ios"),
            Platform::Android => Some("android"),
            Platform::Other => None,
        },
        country: None,
        spend_cents: match segment.tier {
            SpenderTier::NonPayer => 0,
            SpenderTier::Payer => WHALE_SPEND_CENTS / 10,
            SpenderTier::Whale => WHALE_SPEND_CENTS,
        },
        days_since_install: None,
        attributes: &attributes,
    };
    let features = Features::extract(&context, &learner.settings().ignored_attributes);
    learner
        .estimate(&features, arm)
        .map_or(0.0, |e| e.conversion())
}
