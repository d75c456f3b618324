//! The holdout ARPU comparison: average revenue per player of the treated group against the
//! permanent holdout, its significance, and whether it qualifies for the revenue share.
//!
//! Every player of a group counts, non-payers as 0, so the ARPU is revenue over players, not
//! over payers. The significance test is the one-sided Mann-Whitney U of
//! [`crate::mann_whitney`] (revenue is power-law distributed, so a t-test is never used).
//! Eligibility needs all five conditions; each failing one is reported with its value and
//! what it requires, so a studio sees how far it is from qualifying.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::mann_whitney::{self, Group};

/// Fewest treated players for the uplift to be billed.
pub const MIN_TREATMENT: u64 = 10_000;
/// Fewest holdout players.
pub const MIN_CONTROL: u64 = 1_000;
/// Fewest days since launch.
pub const MIN_DAYS_LIVE: i64 = 30;
/// Largest p-value counted as significant.
pub const MAX_P_VALUE: f64 = 0.05;

/// One of the five eligibility conditions, named on the wire as the revenue-share result's
/// condition keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum Condition {
    /// At least 10,000 treated players.
    #[serde(rename = "n_treatment_gte_10k")]
    NTreatmentGte10k,
    /// At least 1,000 holdout players.
    #[serde(rename = "n_control_gte_1k")]
    NControlGte1k,
    /// At least 30 days since launch.
    #[serde(rename = "days_live_gte_30")]
    DaysLiveGte30,
    /// The one-sided p-value is below 0.05.
    #[serde(rename = "p_value_lt_0_05")]
    PValueLt005,
    /// Treated players spend more on average than holdout players.
    #[serde(rename = "arpu_uplift_positive")]
    ArpuUpliftPositive,
}

/// A condition that does not hold: its measured value and what it requires.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IneligibleReason {
    /// Which condition.
    pub condition: Condition,
    /// The measured value (for the uplift, treatment ARPU minus control ARPU in USD).
    pub value: f64,
    /// The bound it must reach (at least, or for the p-value below; the uplift above it).
    pub required: f64,
}

/// What the revenue of the figures is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RevenueBasis {
    /// Purchases as the game reported them (store receipts are not checked).
    #[default]
    Reported,
    /// Purchases a store signed for, net of refunds, from the day receipt checks began
    /// (`verified_since`); what the game reported before is shown apart.
    Verified,
}

impl RevenueBasis {
    /// Its name, as the API writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reported => "reported",
            Self::Verified => "verified",
        }
    }
}

/// The holdout ARPU result.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HoldoutArpu {
    /// Revenue of treated players over their number, in USD.
    pub treatment_arpu: f64,
    /// Revenue of holdout players over their number, in USD.
    pub control_arpu: f64,
    /// Relative uplift in percent; `null` when the control ARPU is 0.
    pub uplift_pct: Option<f64>,
    /// One-sided Mann-Whitney U p-value of treatment over control.
    pub p_value: f64,
    /// Treated players.
    pub n_treatment: u64,
    /// Holdout players.
    pub n_control: u64,
    /// Whole days since launch.
    pub days_live: i64,
    /// Days since launch whose revenue was left out because the economy's quadrant that
    /// day was DEFLATION, INFLATION or HYPER_INFL (revenue-share figures are measured in a
    /// healthy economy; a day with no movement to judge counts).
    pub days_excluded: u32,
    /// Whether all five conditions hold.
    pub revenue_share_eligible: bool,
    /// The conditions that do not hold (empty when eligible).
    pub ineligible_reasons: Vec<IneligibleReason>,
    /// `verified` while the game checks store receipts (revenue from `verified_since` on,
    /// verified purchases only), else `reported`.
    pub revenue_basis: RevenueBasis,
    /// When receipt checks began; `null` while purchases are taken as reported.
    #[schema(value_type = Option<String>, format = DateTime)]
    pub verified_since: Option<chrono::DateTime<chrono::Utc>>,
    /// On the verified basis, the revenue of these players counted in no figure because it
    /// came before `verified_since` (reported, or imported history), in USD; 0 otherwise.
    pub revenue_before_verified_usd: f64,
}

/// Compares the groups' revenue in cents (non-payers as the groups' zero counts).
pub fn compare(treatment: Group<'_>, control: Group<'_>, days_live: i64) -> HoldoutArpu {
    let arpu = |g: &Group<'_>| {
        let players = g.len();
        if players == 0 {
            0.0
        } else {
            // A fold from +0.0, not `sum`: an empty float sum is -0.0, which would print as an
            // ARPU of `-0.0` for a group with no payers.
            g.paid.iter().fold(0.0, |sum, c| sum + *c as f64) / players as f64 / 100.0
        }
    };
    let (treatment_arpu, control_arpu) = (arpu(&treatment), arpu(&control));
    let uplift_pct =
        (control_arpu > 0.0).then(|| (treatment_arpu - control_arpu) / control_arpu * 100.0);
    let p_value = mann_whitney::greater(treatment, control).p_value;
    let (n_treatment, n_control) = (treatment.len(), control.len());
    let mut result = HoldoutArpu {
        treatment_arpu,
        control_arpu,
        uplift_pct,
        p_value,
        n_treatment,
        n_control,
        days_live,
        days_excluded: 0,
        revenue_share_eligible: false,
        ineligible_reasons: Vec::new(),
        revenue_basis: RevenueBasis::Reported,
        verified_since: None,
        revenue_before_verified_usd: 0.0,
    };
    result.ineligible_reasons = result
        .checks()
        .into_iter()
        .filter(|c| !c.pass)
        .map(|c| IneligibleReason {
            condition: c.condition,
            value: c.value,
            required: c.required,
        })
        .collect();
    result.revenue_share_eligible = result.ineligible_reasons.is_empty();
    result
}

/// One eligibility condition judged on a result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Check {
    /// Which condition.
    pub condition: Condition,
    /// The measured value (for the uplift, treatment ARPU minus control ARPU in USD).
    pub value: f64,
    /// The bound it must reach.
    pub required: f64,
    /// Whether it holds.
    pub pass: bool,
}

impl HoldoutArpu {
    /// The five eligibility conditions judged on this result, always in this order:
    /// treated players, holdout players, days live, p-value, uplift.
    pub fn checks(&self) -> [Check; 5] {
        let check = |condition, value, required, pass| Check {
            condition,
            value,
            required,
            pass,
        };
        [
            check(
                Condition::NTreatmentGte10k,
                self.n_treatment as f64,
                MIN_TREATMENT as f64,
                self.n_treatment >= MIN_TREATMENT,
            ),
            check(
                Condition::NControlGte1k,
                self.n_control as f64,
                MIN_CONTROL as f64,
                self.n_control >= MIN_CONTROL,
            ),
            check(
                Condition::DaysLiveGte30,
                self.days_live as f64,
                MIN_DAYS_LIVE as f64,
                self.days_live >= MIN_DAYS_LIVE,
            ),
            check(
                Condition::PValueLt005,
                self.p_value,
                MAX_P_VALUE,
                self.p_value < MAX_P_VALUE,
            ),
            check(
                Condition::ArpuUpliftPositive,
                self.treatment_arpu - self.control_arpu,
                0.0,
                self.treatment_arpu > self.control_arpu,
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_payers_count_and_a_zero_control_has_no_uplift() {
        let r = compare(
            Group {
                zeros: 3,
                paid: &[400],
            },
            Group {
                zeros: 2,
                paid: &[],
            },
            10,
        );
        // 4 USD over 4 players.
        assert_eq!(r.treatment_arpu, 1.0);
        assert_eq!(r.control_arpu, 0.0);
        assert_eq!(r.uplift_pct, None);
        assert_eq!((r.n_treatment, r.n_control), (4, 2));
        assert!(!r.revenue_share_eligible);
        let failing: Vec<Condition> = r.ineligible_reasons.iter().map(|x| x.condition).collect();
        assert_eq!(
            failing,
            vec![
                Condition::NTreatmentGte10k,
                Condition::NControlGte1k,
                Condition::DaysLiveGte30,
                Condition::PValueLt005
            ]
        );
        assert_eq!(r.ineligible_reasons[2].value, 10.0);
        assert_eq!(r.ineligible_reasons[2].required, 30.0);
    }

    #[test]
    fn a_group_without_payers_has_an_arpu_of_plain_zero() {
        let none = || Group {
            zeros: 5,
            paid: &[],
        };
        let r = compare(none(), none(), 10);
        assert!(r.treatment_arpu.is_sign_positive() && r.control_arpu.is_sign_positive());
        let json = serde_json::to_string(&r).expect("json");
        assert!(!json.contains("-0"), "{json}");
    }

    #[test]
    fn a_large_significant_uplift_is_eligible() {
        // 20,000 treated: 10% pay 10 USD; 2,000 holdout: 5% pay 10 USD.
        let t = vec![1000; 2000];
        let c = vec![1000; 100];
        let r = compare(
            Group {
                zeros: 18_000,
                paid: &t,
            },
            Group {
                zeros: 1_900,
                paid: &c,
            },
            45,
        );
        assert_eq!(r.treatment_arpu, 1.0);
        assert_eq!(r.control_arpu, 0.5);
        assert_eq!(r.uplift_pct, Some(100.0));
        assert!(r.p_value < 1e-10, "{}", r.p_value);
        assert!(r.revenue_share_eligible, "{:?}", r.ineligible_reasons);
        assert!(r.ineligible_reasons.is_empty());
        let json = serde_json::to_value(&r).expect("json");
        assert_eq!(json["uplift_pct"], 100.0);
    }

    #[test]
    fn no_uplift_reports_the_difference() {
        let r = compare(
            Group {
                zeros: 1,
                paid: &[100],
            },
            Group {
                zeros: 0,
                paid: &[100, 300],
            },
            40,
        );
        let uplift = r
            .ineligible_reasons
            .iter()
            .find(|x| x.condition == Condition::ArpuUpliftPositive)
            .expect("uplift fails");
        assert_eq!(uplift.value, 0.5 - 2.0);
        assert_eq!(r.uplift_pct, Some(-75.0));
        assert_eq!(
            serde_json::to_value(uplift).expect("json")["condition"],
            "arpu_uplift_positive"
        );
    }
}
