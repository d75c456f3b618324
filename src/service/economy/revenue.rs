//! Revenue by proof over the last days: what counts (purchases the stores signed for while the
//! game checks receipts, or as the game reported them while it does not), what the stores
//! took back by refunds, and what was kept without a store's proof, side by side, so that a
//! studio sees its money as the bill sees it and what was left out of it.
//!
//! Read from the day aggregates only (the refunded total is kept per day by the wallet step),
//! so its cost does not grow with the ledger. While receipts are checked, the counted and
//! refunded amounts start on the day the checks began (`verified_since`): a day before it
//! counted what the game reported, which the verified figures leave out.

use chrono::{Days, NaiveDate, Utc};
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::holdout_arpu::RevenueBasis;
use serde::Serialize;
use utoipa::ToSchema;

use crate::service::economy::health;
use crate::service::{ServiceResult, Services};

/// The revenue of one environment over its last days, by how it was proven.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RevenueByProof {
    /// Days covered, ending today (UTC).
    pub days: u32,
    /// `verified` while the game checks store receipts, else `reported`.
    pub revenue_basis: RevenueBasis,
    /// The first day counted: the period's first, or the day receipt checks began when that
    /// is later.
    #[schema(value_type = String, format = Date)]
    pub counted_from: NaiveDate,
    /// Revenue in cents that counts in the holdout comparison and the bill, both groups, net
    /// of refunds.
    pub counted_cents: i64,
    /// Revenue in cents the stores' refunds took back over the same days (already
    /// subtracted from `counted_cents`). A refund the store reverses later stays counted
    /// here; its reversal is revenue again in `counted_cents`.
    pub refunded_cents: i64,
    /// Purchases in cents kept without a store's proof (unverified, imported production
    /// history, or sandbox transactions on a live key) over the period: never counted.
    pub unverified_cents: i64,
}

/// The revenue of `env` over the last `period_days` (1 to 90; anything else is a 422).
pub async fn over(
    state: &Services,
    handle: &GameHandle,
    env: Environment,
    period_days: i64,
) -> ServiceResult<RevenueByProof> {
    let days = health::period(period_days)?;
    let (game_id, verified_since) = {
        let view = handle.view();
        let since = view
            .stores
            .verification
            .is_on()
            .then_some(view.stores.verified_since)
            .flatten();
        (view.game.game_id, since)
    };
    let today = Utc::now().date_naive();
    let first = today
        .checked_sub_days(Days::new(u64::from(days - 1)))
        .unwrap_or(today);
    let dates: Vec<NaiveDate> = first.iter_days().take_while(|d| *d <= today).collect();
    let counted_from = verified_since.map_or(first, |at| at.date_naive().max(first));
    let aggregates = state.store.day_aggregates(game_id, env, &dates).await?;
    let mut out = RevenueByProof {
        days,
        revenue_basis: if verified_since.is_some() {
            RevenueBasis::Verified
        } else {
            RevenueBasis::Reported
        },
        counted_from,
        counted_cents: 0,
        refunded_cents: 0,
        unverified_cents: 0,
    };
    for (day, aggregate) in dates.iter().zip(&aggregates) {
        out.unverified_cents = out
            .unverified_cents
            .saturating_add(aggregate.revenue_unverified_cents);
        if *day < counted_from {
            continue;
        }
        out.counted_cents = out.counted_cents.saturating_add(
            aggregate
                .revenue_treatment_cents
                .saturating_add(aggregate.revenue_control_cents),
        );
        out.refunded_cents = out.refunded_cents.saturating_add(aggregate.refunded_cents);
    }
    Ok(out)
}
