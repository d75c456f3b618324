//! The revenue-share standing of a game's production players, and the month-close decisions
//! a bill uses.
//!
//! The live standing is the holdout comparison as it is now: provisional, since re-testing
//! p < 0.05 at every read would inflate false eligibility. The bill uses one decision per
//! closed UTC month, taken the first time the standing is read after the month closed (any
//! node; `insert_new`, so the first decision stands and is never re-taken), from the figures
//! as of the month's last day: players installed by then, revenue from launch to that day
//! with the unhealthy days left out. The month's uplift revenue is
//! `max(0, treatment ARPU - holdout ARPU)` over the month's counted days times its treated
//! players; the amount due is that times the studio's rate when the month was eligible.

use chrono::Utc;
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::revenue_share::{
    self, MonthDecision, RevenueShare, StandingInput, conditions, previous_month,
};
use uuid::Uuid;

use crate::service::{ServiceResult, Services, economy::holdout};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// A game's month-close decisions, by month (`YYYY-MM`).
fn decisions(game_id: Uuid) -> Collection {
    Collection::game(game_id, "billing_decisions")
}

/// The live, provisional revenue-share standing of a game's production players: the
/// comparison's five conditions, the plan its monthly players put it on, the studio's
/// contracted rate (operator configuration), the next billing day, the month's uplift
/// revenue so far and the last month-close decision.
pub async fn revenue_share(
    state: &Services,
    game: &GameHandle,
    studio_id: &str,
) -> ServiceResult<RevenueShare> {
    let figures = holdout::comparison(state, game, Environment::Production).await?;
    let rate_pct = state.settings.billing.rate_pct(studio_id);
    let last_decision = last_decision(state, game, rate_pct).await?;
    let input = StandingInput {
        arpu: &figures.arpu,
        plans: &state.plans,
        monthly_players: figures.monthly,
        rate_pct,
        today: Utc::now().date_naive(),
        month_to_date_usd: figures.month.uplift_revenue_usd(),
    };
    Ok(revenue_share::standing(input, last_decision))
}

/// The decision of the last closed month, taken now when it has not been yet; `None` when
/// the game had not launched by that month's end.
async fn last_decision(
    state: &Services,
    game: &GameHandle,
    rate_pct: f64,
) -> ServiceResult<Option<MonthDecision>> {
    let view = game.view();
    let game_id = view.game.game_id;
    let Some((first, last)) = previous_month(Utc::now().date_naive()) else {
        return Ok(None);
    };
    if view
        .game
        .launched_at
        .is_none_or(|at| at.date_naive() > last)
    {
        return Ok(None);
    }
    let month = first.format("%Y-%m").to_string();
    if let Some(bytes) = state.store.get(decisions(game_id), &month).await? {
        return Ok(Some(decode(&bytes)?));
    }
    let figures = holdout::compare_at(state, game, Environment::Production, last).await?;
    let uplift = figures.month.uplift_revenue_usd();
    let eligible = figures.arpu.revenue_share_eligible;
    let decision = MonthDecision {
        month: month.clone(),
        eligible,
        conditions: conditions(&figures.arpu),
        treatment_arpu_usd: figures.month.treatment_arpu_usd,
        control_arpu_usd: figures.month.control_arpu_usd,
        treated_players: figures.month.treated_players,
        uplift_revenue_usd: uplift,
        days_excluded: figures.month.days_excluded,
        rate_pct,
        amount_due_usd: if eligible {
            uplift * rate_pct / 100.0
        } else {
            0.0
        },
        decided_at: Utc::now(),
        revenue_basis: figures.arpu.revenue_basis,
    };
    // The first decision of the month stands: another node's, taken at the same moment,
    // is read back.
    state
        .store
        .insert_new(decisions(game_id), &month, encode(&decision)?)
        .await?;
    match state.store.get(decisions(game_id), &month).await? {
        Some(bytes) => Ok(Some(decode(&bytes)?)),
        None => Ok(Some(decision)),
    }
}
