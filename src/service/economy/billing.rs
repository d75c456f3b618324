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
//! players; the revenue share is that times the studio's rate when the month was eligible,
//! and the amount due is the plan's base fee plus the revenue share: with no measurable
//! uplift only the base fee is due. A month's statement is its decision.
//!
//! The decision also lists the month's adjustment lines (`adjustments`): the store refunds,
//! and their reversals, that arrived in the month for purchases of an earlier month. Their
//! revenue came off (or back on) the day they arrived, so the month's figures already count
//! them and the amount due stays the base fee plus the revenue share; the lines say why the
//! month's revenue moved without a closed month ever being rewritten. The live standing lists
//! the current month's lines so far, read the same way ([`adjustments::of_month`]), so what it
//! shows is what the month's close will list.

use chrono::{NaiveDate, Utc};
use offer_actors::GameHandle;
use offer_domain::adjustment::month_of;
use offer_domain::environment::Environment;
use offer_domain::revenue_share::{
    self, MonthDecision, RevenueShare, StandingInput, StoredMonthDecision, conditions,
    previous_month,
};
use uuid::Uuid;

use crate::service::economy::{adjustments, holdout};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// A game's month-close decisions, by month (`YYYY-MM`).
fn decisions(game_id: Uuid) -> Collection {
    Collection::game(game_id, "billing_decisions")
}

/// The live, provisional revenue-share standing of a game's production players: the
/// comparison's five conditions, the plan its monthly players put it on, the studio's
/// contracted rate (operator configuration), the next billing day, the month's uplift
/// revenue and adjustment lines so far and the last month-close decision.
pub async fn revenue_share(
    state: &Services,
    game: &GameHandle,
    studio_id: &str,
) -> ServiceResult<RevenueShare> {
    let figures = holdout::comparison(state, game, Environment::Production).await?;
    let terms = Terms::of(state, studio_id, figures.monthly);
    let now = Utc::now();
    let last_decision = last_decision(state, game, &terms, now.date_naive()).await?;
    let game_id = game.view().game.game_id;
    let input = StandingInput {
        arpu: &figures.arpu,
        plans: &state.plans,
        monthly_players: figures.monthly,
        rate_pct: terms.rate_pct,
        today: now.date_naive(),
        month_to_date_usd: figures.month.uplift_revenue_usd(),
        base_fee_usd: terms.base_fee_usd,
        adjustments: adjustments::of_month(state, game_id, &month_of(now)).await?,
    };
    Ok(revenue_share::standing(input, last_decision))
}

/// The studio's terms for a game with `monthly_players`: its rate, and the plan those
/// players put the game on with the plan's fee.
struct Terms {
    rate_pct: f64,
    plan: String,
    base_fee_usd: f64,
}

impl Terms {
    fn of(state: &Services, studio_id: &str, monthly_players: u64) -> Self {
        let plan = revenue_share::plan_for(&state.plans, monthly_players);
        Self {
            rate_pct: state.settings.billing.rate_pct(studio_id),
            plan: plan.map_or_else(String::new, |p| p.name.clone()),
            base_fee_usd: state.settings.billing.base_fee_usd(studio_id, plan),
        }
    }
}

/// The statement of a closed month (`YYYY-MM`): its stored decision. A month that is not
/// `YYYY-MM` is refused (422 on `month`). A month that has not closed yet, or closed before
/// the game launched, has none (404); so has a month whose decision was never taken (the
/// decision of the last closed month is taken when the standing is first read after it
/// closed; older months were decided then or never).
pub async fn statement(
    state: &Services,
    game: &GameHandle,
    studio_id: &str,
    month: &str,
) -> ServiceResult<MonthDecision> {
    let well_formed = month.len() == 7
        && chrono::NaiveDate::parse_from_str(&format!("{month}-01"), "%Y-%m-%d").is_ok();
    if !well_formed {
        return Err(ServiceError::invalid(
            "month",
            "a month as YYYY-MM, for example 2026-10",
        ));
    }
    let monthly = holdout::comparison(state, game, Environment::Production)
        .await?
        .monthly;
    let terms = Terms::of(state, studio_id, monthly);
    // The last month's decision is taken first, so a statement read before the standing was
    // ever read after the month closed finds it.
    last_decision(state, game, &terms, Utc::now().date_naive()).await?;
    let game_id = game.view().game.game_id;
    match state.store.get(decisions(game_id), month).await? {
        Some(bytes) => Ok(read_decision(&bytes, &terms)?),
        None => Err(ServiceError::NotFound("statement")),
    }
}

/// A stored decision; one stored before plans were recorded gets the plan of `terms`.
fn read_decision(bytes: &[u8], terms: &Terms) -> ServiceResult<MonthDecision> {
    let stored: StoredMonthDecision = decode(bytes)?;
    Ok(stored.into_decision(|| (terms.plan.clone(), terms.base_fee_usd)))
}

/// The decision of the last month closed by `today` (UTC), taken now when it has not been
/// yet; `None` when the game had not launched by that month's end.
async fn last_decision(
    state: &Services,
    game: &GameHandle,
    terms: &Terms,
    today: NaiveDate,
) -> ServiceResult<Option<MonthDecision>> {
    let view = game.view();
    let game_id = view.game.game_id;
    let Some((first, last)) = previous_month(today) else {
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
        return Ok(Some(read_decision(&bytes, terms)?));
    }
    let figures = holdout::compare_at(state, game, Environment::Production, last).await?;
    let uplift = figures.month.uplift_revenue_usd();
    let eligible = figures.arpu.revenue_share_eligible;
    let month_plan = revenue_share::plan_for(&state.plans, figures.monthly);
    let base_fee_usd = state
        .settings
        .billing
        .base_fee_usd(&view.game.studio_id, month_plan);
    let share = revenue_share::revenue_share_usd(eligible, uplift, terms.rate_pct);
    let lines = adjustments::of_month(state, game_id, &month).await?;
    let decision = MonthDecision {
        month: month.clone(),
        eligible,
        conditions: conditions(&figures.arpu),
        treatment_arpu_usd: figures.month.treatment_arpu_usd,
        control_arpu_usd: figures.month.control_arpu_usd,
        treated_players: figures.month.treated_players,
        uplift_revenue_usd: uplift,
        days_excluded: figures.month.days_excluded,
        rate_pct: terms.rate_pct,
        plan: month_plan.map_or_else(String::new, |p| p.name.clone()),
        monthly_players: figures.monthly,
        base_fee_usd,
        revenue_share_usd: share,
        amount_due_usd: base_fee_usd + share,
        decided_at: Utc::now(),
        revenue_basis: figures.arpu.revenue_basis,
        // Listed, not added: the month's figures already count them.
        adjustments_usd: lines.total_usd,
        adjustments: lines.lines,
    };
    // The first decision of the month stands: another node's, taken at the same moment,
    // is read back.
    state
        .store
        .insert_new(decisions(game_id), &month, encode(&decision)?)
        .await?;
    match state.store.get(decisions(game_id), &month).await? {
        Some(bytes) => Ok(Some(read_decision(&bytes, terms)?)),
        None => Ok(Some(decision)),
    }
}

#[cfg(test)]
mod tests {
    use chrono::Datelike;
    use offer_domain::adjustment::{AdjustmentGroup, AdjustmentKind, AdjustmentLine};
    use offer_domain::product_ids::Store;
    use offer_domain::revenue_share::next_bill;

    use super::*;
    use crate::service::game::games::mark_launched;
    use crate::service::test_support::{new_game, with_services};

    #[test]
    fn the_month_close_lists_the_adjustment_lines_the_live_standing_showed() {
        with_services(async |state| {
            let game = new_game(&state, "adjusted").await;
            let game_id = game.view().game.game_id;
            let now = Utc::now();
            let first = now
                .date_naive()
                .with_day(1)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .expect("the first of the month")
                .and_utc();
            mark_launched(&state, &game, Environment::Production, first)
                .await
                .expect("launched");
            // A refund, this month, of a purchase of the month before, as its step records it.
            let line = AdjustmentLine {
                month: month_of(now),
                purchase_month: month_of(first - chrono::Duration::days(1)),
                kind: AdjustmentKind::Refund,
                store: Store::AppStore,
                transaction_id: "3000000000000005".into(),
                amount_usd: -4.99,
                group: AdjustmentGroup::Treatment,
                recorded_at: now,
            };
            adjustments::record(&state, game_id, "refund:app_store:3000000000000005", &line)
                .await
                .expect("recorded");

            let live = revenue_share(&state, &game, "studio")
                .await
                .expect("the standing");
            assert_eq!(live.adjustments, [line]);
            assert_eq!(live.adjustments_usd, -4.99);
            assert_eq!(
                live.amount_due_usd,
                live.base_fee_usd + live.revenue_share_usd
            );

            // The month closes: its decision lists what the standing showed, and bills alike.
            let terms = Terms::of(&state, "studio", 0);
            let closed = last_decision(&state, &game, &terms, next_bill(now.date_naive()))
                .await
                .expect("decided")
                .expect("a decision of this month");
            assert_eq!(closed.month, month_of(now));
            assert_eq!(closed.adjustments, live.adjustments);
            assert_eq!(closed.adjustments_usd, live.adjustments_usd);
            assert_eq!(
                closed.amount_due_usd,
                closed.base_fee_usd + closed.revenue_share_usd
            );
        });
    }
}
