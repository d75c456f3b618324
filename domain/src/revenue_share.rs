//! The revenue-share standing: the five eligibility conditions as `{value, pass}`, the plan
//! a game's monthly players put it on, and the next billing day.
//!
//! Revenue share is owed only on measured uplift against the holdout, and eligibility never
//! depends on a calendar date. Re-testing p < 0.05 every time the figures are read would
//! inflate false eligibility, so the standing read at any moment is provisional: a bill
//! uses one decision taken at month close.

use chrono::{Datelike, NaiveDate};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::adjustment::{AdjustmentLine, MonthLines, total_usd};
use crate::holdout_arpu::{HoldoutArpu, RevenueBasis};

/// A plan of the plans table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Plan {
    /// Its name, as shown (`Indie`, `Studio`, ...).
    pub name: String,
    /// The most monthly players it covers; absent for the unlimited plan.
    #[serde(default)]
    pub max_monthly_players: Option<u64>,
    /// Its flat monthly fee in USD, due whatever the uplift; absent for a plan priced per
    /// studio, whose fee the operator sets for each studio.
    #[serde(default)]
    pub base_fee_usd: Option<f64>,
}

/// One condition's measured value and whether it holds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConditionValue {
    /// The measured value (for the uplift, treatment ARPU minus control ARPU in USD).
    pub value: f64,
    /// Whether the condition holds.
    pub pass: bool,
}

/// The five conditions, each under its key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Conditions {
    /// At least 10,000 treated players.
    pub n_treatment_gte_10k: ConditionValue,
    /// At least 1,000 holdout players.
    pub n_control_gte_1k: ConditionValue,
    /// At least 30 days since launch.
    pub days_live_gte_30: ConditionValue,
    /// The one-sided Mann-Whitney p-value is below 0.05.
    pub p_value_lt_0_05: ConditionValue,
    /// Treated players' ARPU is above the holdout's.
    pub arpu_uplift_positive: ConditionValue,
}

/// Whether a standing is the live, provisional reading or a month-close decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// Computed from the figures as they are now; not what a bill uses.
    Provisional,
}

/// The revenue-share result.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RevenueShare {
    /// Whether all five conditions hold.
    pub eligible: bool,
    /// The conditions.
    pub conditions: Conditions,
    /// The studio's agreed share of uplift revenue, in percent (set by the operator).
    pub rate_pct: f64,
    /// The plan the game's monthly players put it on.
    pub plan: String,
    /// Distinct production players that played in the last 30 days (an accepted event beyond
    /// `session_start`).
    pub monthly_players: u64,
    /// The plan's flat monthly fee in USD (on a plan priced per studio: the fee the
    /// operator set for that studio), due whatever the uplift.
    pub base_fee_usd: f64,
    /// The month so far: `uplift_revenue_month_to_date_usd x rate_pct / 100` while eligible,
    /// else 0.
    pub revenue_share_usd: f64,
    /// `base_fee_usd + revenue_share_usd`: what the month would bill if it closed now. The
    /// adjustment lines are not added to it: they are already counted in the month's figures.
    pub amount_due_usd: f64,
    /// The first day of the next UTC month.
    #[schema(value_type = String, format = Date)]
    pub next_bill: NaiveDate,
    /// Always `provisional` for this live reading.
    pub standing: Standing,
    /// Uplift revenue of the current month so far: `max(0, treatment ARPU - holdout ARPU)`
    /// over the month's counted days, times the treated players, in USD.
    pub uplift_revenue_month_to_date_usd: f64,
    /// The store refunds (and their reversals) that arrived this month so far for purchases
    /// of an earlier month, one line each, oldest first: the lines the month's close will
    /// list, as [`MonthDecision::adjustments`] does. Each is already counted in the month's
    /// figures so far, so none changes `amount_due_usd`.
    pub adjustments: Vec<AdjustmentLine>,
    /// The signed sum of `adjustments` in USD: already counted in the month's figures, not
    /// added to `amount_due_usd`.
    pub adjustments_usd: f64,
    /// The decision taken at the close of the last full month since launch, which the bill
    /// uses; `null` before a month has closed.
    pub last_decision: Option<MonthDecision>,
    /// What the live figures count: `verified` purchases while the game checks store
    /// receipts, else `reported` ones.
    pub revenue_basis: RevenueBasis,
}

/// The revenue-share decision of one closed month: taken once, stored, and what the bill
/// uses. Re-testing p < 0.05 at every read would inflate false eligibility; one test per
/// month does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MonthDecision {
    /// The month, `YYYY-MM` (UTC).
    pub month: String,
    /// Whether the five conditions held at the month's close.
    pub eligible: bool,
    /// The conditions at the month's close (figures from launch to the month's last day,
    /// unhealthy days left out).
    pub conditions: Conditions,
    /// Treated players' ARPU over the month's counted days, in USD.
    pub treatment_arpu_usd: f64,
    /// Holdout players' ARPU over the month's counted days, in USD.
    pub control_arpu_usd: f64,
    /// Treated players at the month's close.
    pub treated_players: u64,
    /// `max(0, treatment ARPU - holdout ARPU) x treated players`, in USD: the revenue the
    /// engine measurably added that month.
    pub uplift_revenue_usd: f64,
    /// Days of the month left out because the economy was not healthy.
    pub days_excluded: u32,
    /// The studio's rate when the decision was taken, in percent.
    pub rate_pct: f64,
    /// The plan the month's monthly players put the game on. A decision stored before plans
    /// were recorded reads with the plan of the game's standing when it is read.
    pub plan: String,
    /// Distinct production players that played in the month's last 30 days (0 in a
    /// decision stored before they were recorded).
    pub monthly_players: u64,
    /// The plan's flat monthly fee in USD, due whatever the uplift.
    pub base_fee_usd: f64,
    /// `uplift_revenue_usd x rate_pct / 100` when eligible, else 0: with no measurable
    /// uplift only the base fee is due.
    pub revenue_share_usd: f64,
    /// `base_fee_usd + revenue_share_usd`: what the month bills. The adjustment lines are
    /// not added to it: they are already counted in the month's figures.
    pub amount_due_usd: f64,
    /// When the decision was taken.
    #[schema(value_type = String, format = DateTime)]
    pub decided_at: chrono::DateTime<chrono::Utc>,
    /// What the month's figures counted (decisions stored before receipts were checked read
    /// as `reported`).
    #[serde(default)]
    pub revenue_basis: RevenueBasis,
    /// The store refunds (and their reversals) that arrived this month for purchases of an
    /// earlier month, one line each, oldest first. Each is already counted in this month's
    /// figures (its revenue came off, or back on, the day it arrived; the closed month of
    /// its purchase is never rewritten), so none changes `amount_due_usd`: they say why this
    /// month's revenue moved. A treated player's refund lowered the treatment ARPU, a holdout
    /// player's the holdout's. Empty in a decision stored before the lines were recorded.
    #[serde(default)]
    pub adjustments: Vec<AdjustmentLine>,
    /// The signed sum of `adjustments` in USD (negative when refunds outweigh reversals):
    /// already counted in the month's figures, not added to `amount_due_usd`.
    #[serde(default)]
    pub adjustments_usd: f64,
}

/// A month decision as stored, of any age: decisions stored before the base fee was billed
/// have no `plan`, `monthly_players`, `base_fee_usd` or `revenue_share_usd`, and their
/// `amount_due_usd` was the revenue share alone; those stored before adjustment lines were
/// recorded have no `adjustments`, and read with none.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredMonthDecision {
    month: String,
    eligible: bool,
    conditions: Conditions,
    treatment_arpu_usd: f64,
    control_arpu_usd: f64,
    treated_players: u64,
    uplift_revenue_usd: f64,
    days_excluded: u32,
    rate_pct: f64,
    #[serde(default)]
    plan: Option<String>,
    #[serde(default)]
    monthly_players: u64,
    #[serde(default)]
    base_fee_usd: Option<f64>,
    #[serde(default)]
    revenue_share_usd: Option<f64>,
    amount_due_usd: f64,
    decided_at: chrono::DateTime<chrono::Utc>,
    #[serde(default)]
    revenue_basis: RevenueBasis,
    #[serde(default)]
    adjustments: Vec<AdjustmentLine>,
}

impl StoredMonthDecision {
    /// The decision, an older one completed with `plan` and its fee (the plan the game is on
    /// when it is read, since the month's own was not recorded).
    pub fn into_decision(self, plan: impl FnOnce() -> (String, f64)) -> MonthDecision {
        let (revenue_share_usd, plan, base_fee_usd) =
            match (self.revenue_share_usd, self.plan, self.base_fee_usd) {
                (Some(share), Some(plan), Some(fee)) => (share, plan, fee),
                (share, _, _) => {
                    let (plan, fee) = plan();
                    (share.unwrap_or(self.amount_due_usd), plan, fee)
                }
            };
        MonthDecision {
            month: self.month,
            eligible: self.eligible,
            conditions: self.conditions,
            treatment_arpu_usd: self.treatment_arpu_usd,
            control_arpu_usd: self.control_arpu_usd,
            treated_players: self.treated_players,
            uplift_revenue_usd: self.uplift_revenue_usd,
            days_excluded: self.days_excluded,
            rate_pct: self.rate_pct,
            plan,
            monthly_players: self.monthly_players,
            base_fee_usd,
            revenue_share_usd,
            amount_due_usd: base_fee_usd + revenue_share_usd,
            decided_at: self.decided_at,
            revenue_basis: self.revenue_basis,
            // The sum is the lines', whatever was stored beside them.
            adjustments_usd: total_usd(&self.adjustments),
            adjustments: self.adjustments,
        }
    }
}

/// The revenue share owed on `uplift_usd` at `rate_pct`: nothing unless `eligible`.
pub fn revenue_share_usd(eligible: bool, uplift_usd: f64, rate_pct: f64) -> f64 {
    if eligible {
        uplift_usd * rate_pct / 100.0
    } else {
        0.0
    }
}

/// The uplift revenue of a month: what the treated players paid beyond the holdout's rate.
pub fn uplift_revenue_usd(treatment_arpu_usd: f64, control_arpu_usd: f64, treated: u64) -> f64 {
    (treatment_arpu_usd - control_arpu_usd).max(0.0) * treated as f64
}

/// The conditions of a comparison, in the shape the standing shows them.
pub fn conditions(arpu: &HoldoutArpu) -> Conditions {
    // `checks` gives the five in their fixed order.
    let [
        n_treatment_gte_10k,
        n_control_gte_1k,
        days_live_gte_30,
        p_value_lt_0_05,
        arpu_uplift_positive,
    ] = arpu.checks().map(|c| ConditionValue {
        value: c.value,
        pass: c.pass,
    });
    Conditions {
        n_treatment_gte_10k,
        n_control_gte_1k,
        days_live_gte_30,
        p_value_lt_0_05,
        arpu_uplift_positive,
    }
}

/// The live standing of a game's production players.
#[derive(Debug, Clone)]
pub struct StandingInput<'a> {
    /// The comparison as it stands now.
    pub arpu: &'a HoldoutArpu,
    /// The plans table.
    pub plans: &'a [Plan],
    /// Distinct production players that played in the last 30 days (an accepted event beyond
    /// `session_start`).
    pub monthly_players: u64,
    /// The studio's rate in percent.
    pub rate_pct: f64,
    /// Today (UTC).
    pub today: NaiveDate,
    /// Uplift revenue of the current month so far, in USD.
    pub month_to_date_usd: f64,
    /// The base fee of the plan the game is on, in USD.
    pub base_fee_usd: f64,
    /// The adjustment lines of the current month so far.
    pub adjustments: MonthLines,
}

/// The standing from a holdout comparison, the plans table, the studio's rate and today,
/// with the last month-close decision.
pub fn standing(input: StandingInput<'_>, last_decision: Option<MonthDecision>) -> RevenueShare {
    let eligible = input.arpu.revenue_share_eligible;
    let share = revenue_share_usd(eligible, input.month_to_date_usd, input.rate_pct);
    RevenueShare {
        eligible,
        conditions: conditions(input.arpu),
        rate_pct: input.rate_pct,
        plan: plan_for(input.plans, input.monthly_players)
            .map_or_else(String::new, |p| p.name.clone()),
        monthly_players: input.monthly_players,
        base_fee_usd: input.base_fee_usd,
        revenue_share_usd: share,
        amount_due_usd: input.base_fee_usd + share,
        next_bill: next_bill(input.today),
        standing: Standing::Provisional,
        uplift_revenue_month_to_date_usd: input.month_to_date_usd,
        adjustments: input.adjustments.lines,
        adjustments_usd: input.adjustments.total_usd,
        last_decision,
        revenue_basis: input.arpu.revenue_basis,
    }
}

/// The first and last day of the month before `today`'s.
pub fn previous_month(today: NaiveDate) -> Option<(NaiveDate, NaiveDate)> {
    let first_of_this = today.with_day(1)?;
    let last = first_of_this.pred_opt()?;
    Some((last.with_day(1)?, last))
}

/// The first plan (in table order) whose limit holds `monthly_players`, or the last plan;
/// `None` only for an empty table.
pub fn plan_for(plans: &[Plan], monthly_players: u64) -> Option<&Plan> {
    plans
        .iter()
        .find(|p| {
            p.max_monthly_players
                .is_none_or(|max| monthly_players <= max)
        })
        .or(plans.last())
}

/// The first day of the month after `today`'s.
pub fn next_bill(today: NaiveDate) -> NaiveDate {
    let (year, month) = if today.month() == 12 {
        (today.year() + 1, 1)
    } else {
        (today.year(), today.month() + 1)
    };
    NaiveDate::from_ymd_opt(year, month, 1).unwrap_or(today)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::holdout_arpu::compare;
    use crate::mann_whitney::Group;

    fn plans() -> Vec<Plan> {
        [
            ("Indie", Some(100_000), Some(299.0)),
            ("Studio", Some(500_000), Some(799.0)),
            ("Scale", Some(2_000_000), Some(2_499.0)),
            ("Enterprise", None, None),
        ]
        .into_iter()
        .map(|(name, max, fee)| Plan {
            name: name.into(),
            max_monthly_players: max,
            base_fee_usd: fee,
        })
        .collect()
    }

    /// The live standing of `arpu` with 15,000 monthly players at 20%.
    fn live(arpu: &HoldoutArpu, today: NaiveDate) -> RevenueShare {
        let plans = plans();
        let input = StandingInput {
            arpu,
            plans: &plans,
            monthly_players: 15_000,
            rate_pct: 20.0,
            today,
            month_to_date_usd: 1_000.0,
            base_fee_usd: 799.0,
            adjustments: MonthLines::default(),
        };
        standing(input, None)
    }

    #[test]
    fn the_month_so_far_lists_its_adjustment_lines_without_adding_them() {
        use crate::adjustment::{AdjustmentGroup, AdjustmentKind};
        let line = |tx: &str, usd: f64, hour: u32| AdjustmentLine {
            month: "2026-11".into(),
            purchase_month: "2026-10".into(),
            kind: if usd < 0.0 {
                AdjustmentKind::Refund
            } else {
                AdjustmentKind::Reversal
            },
            store: crate::product_ids::Store::AppStore,
            transaction_id: tx.into(),
            amount_usd: usd,
            group: AdjustmentGroup::Treatment,
            recorded_at: NaiveDate::from_ymd_opt(2026, 11, 3)
                .and_then(|d| d.and_hms_opt(hour, 0, 0))
                .expect("time")
                .and_utc(),
        };
        let paid = vec![1_000u64; 10];
        let g = Group {
            zeros: 10,
            paid: &paid,
        };
        let arpu = compare(g, g, 30);
        let plans = plans();
        let input = StandingInput {
            arpu: &arpu,
            plans: &plans,
            monthly_players: 20,
            rate_pct: 20.0,
            today: NaiveDate::from_ymd_opt(2026, 11, 24).expect("date"),
            month_to_date_usd: 0.0,
            base_fee_usd: 299.0,
            adjustments: MonthLines::of(vec![line("b", 0.99, 9), line("a", -4.99, 8)]),
        };
        let r = standing(input, None);
        let listed: Vec<(&str, f64)> = r
            .adjustments
            .iter()
            .map(|l| (l.transaction_id.as_str(), l.amount_usd))
            .collect();
        assert_eq!(listed, [("a", -4.99), ("b", 0.99)]);
        assert_eq!(r.adjustments_usd, -4.0);
        // Already counted in the month's figures: the amount due is the base fee alone.
        assert_eq!(r.amount_due_usd, 299.0);
    }

    #[test]
    fn the_previous_month_and_its_uplift_revenue() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).expect("date");
        assert_eq!(
            previous_month(d(2026, 11, 24)),
            Some((d(2026, 10, 1), d(2026, 10, 31)))
        );
        assert_eq!(
            previous_month(d(2026, 1, 1)),
            Some((d(2025, 12, 1), d(2025, 12, 31)))
        );
        assert_eq!(uplift_revenue_usd(2.5, 1.0, 1_000), 1_500.0);
        assert_eq!(uplift_revenue_usd(1.0, 2.5, 1_000), 0.0);
    }

    #[test]
    fn plan_boundaries_are_inclusive() {
        let p = plans();
        let on =
            |players| plan_for(&p, players).map(|plan| (plan.name.as_str(), plan.base_fee_usd));
        assert_eq!(on(0), Some(("Indie", Some(299.0))));
        assert_eq!(on(100_000), Some(("Indie", Some(299.0))));
        assert_eq!(on(100_001), Some(("Studio", Some(799.0))));
        assert_eq!(on(500_000), Some(("Studio", Some(799.0))));
        assert_eq!(on(500_001), Some(("Scale", Some(2_499.0))));
        assert_eq!(on(2_000_000), Some(("Scale", Some(2_499.0))));
        assert_eq!(on(2_000_001), Some(("Enterprise", None)));
        assert_eq!(plan_for(&[], 1), None);
    }

    #[test]
    fn next_bill_is_the_first_of_the_next_month() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).expect("date");
        assert_eq!(next_bill(d(2026, 11, 24)), d(2026, 12, 1));
        assert_eq!(next_bill(d(2026, 12, 31)), d(2027, 1, 1));
        assert_eq!(next_bill(d(2026, 1, 1)), d(2026, 2, 1));
    }

    #[test]
    fn each_condition_fails_alone() {
        // Enough players, days and a strong uplift: eligible.
        let paid_t = vec![1_000u64; 5_000];
        let paid_c = vec![10u64; 100];
        let t = Group {
            zeros: 5_000,
            paid: &paid_t,
        };
        let c = Group {
            zeros: 900,
            paid: &paid_c,
        };
        let today = NaiveDate::from_ymd_opt(2026, 11, 24).expect("date");
        let ok = live(&compare(t, c, 30), today);
        assert!(ok.eligible, "{ok:?}");
        // Eligible: the base fee and 20% of the month's $1,000 uplift.
        assert_eq!(
            (ok.base_fee_usd, ok.revenue_share_usd, ok.amount_due_usd),
            (799.0, 200.0, 999.0)
        );
        assert_eq!(ok.conditions.n_treatment_gte_10k.value, 10_000.0);
        assert!(ok.conditions.arpu_uplift_positive.value > 0.0);
        // Too few days.
        let r = live(&compare(t, c, 29), today);
        assert!(!r.eligible && !r.conditions.days_live_gte_30.pass);
        // Not eligible: only the base fee is due.
        assert_eq!((r.revenue_share_usd, r.amount_due_usd), (0.0, 799.0));
        assert!(r.conditions.n_treatment_gte_10k.pass && r.conditions.p_value_lt_0_05.pass);
        // Too few treated players.
        let small = Group {
            zeros: 4_999,
            paid: &paid_t,
        };
        let r = live(&compare(small, c, 30), today);
        assert!(!r.eligible && !r.conditions.n_treatment_gte_10k.pass);
        assert!(r.conditions.n_control_gte_1k.pass);
        // Too few holdout players.
        let few = Group {
            zeros: 899,
            paid: &paid_c,
        };
        let r = live(&compare(t, few, 30), today);
        assert!(!r.eligible && !r.conditions.n_control_gte_1k.pass);
        // No uplift (and so no significance): the holdout spends the same.
        let same = vec![1_000u64; 500];
        let even = Group {
            zeros: 500,
            paid: &same,
        };
        let r = live(&compare(t, even, 30), today);
        assert!(!r.conditions.arpu_uplift_positive.pass && !r.conditions.p_value_lt_0_05.pass);
        assert_eq!(r.plan, "Indie");
        assert_eq!(r.standing, Standing::Provisional);
    }

    #[test]
    fn a_decision_stored_before_the_base_fee_reads_its_amount_as_the_revenue_share() {
        let old = serde_json::json!({
            "month": "2026-09", "eligible": true,
            "conditions": {
                "n_treatment_gte_10k": {"value": 12000.0, "pass": true},
                "n_control_gte_1k": {"value": 1300.0, "pass": true},
                "days_live_gte_30": {"value": 90.0, "pass": true},
                "p_value_lt_0_05": {"value": 0.01, "pass": true},
                "arpu_uplift_positive": {"value": 0.5, "pass": true}},
            "treatment_arpu_usd": 1.5, "control_arpu_usd": 1.0, "treated_players": 12000,
            "uplift_revenue_usd": 6000.0, "days_excluded": 0, "rate_pct": 10.0,
            "amount_due_usd": 600.0, "decided_at": "2026-10-01T00:00:00Z"});
        let stored: StoredMonthDecision = serde_json::from_value(old).expect("reads");
        let d = stored.into_decision(|| ("Studio".into(), 799.0));
        assert_eq!(d.plan, "Studio");
        // Stored before adjustment lines: none.
        assert!(d.adjustments.is_empty());
        assert_eq!(d.adjustments_usd, 0.0);
        assert_eq!(
            (d.base_fee_usd, d.revenue_share_usd, d.amount_due_usd),
            (799.0, 600.0, 1_399.0)
        );
        // A new decision reads back as written, never asking for a plan.
        let again: StoredMonthDecision =
            serde_json::from_value(serde_json::to_value(&d).expect("json")).expect("reads");
        let same = again.into_decision(|| unreachable!("a new decision records its plan"));
        assert_eq!(same, d);
    }
}
