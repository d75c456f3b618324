//! A closed month's statement as CSV: one line per figure of its decision, in the order a
//! reader adds them up (the plan and its base fee, the uplift and the revenue share, the
//! amount due), for a studio's accounts.

use std::fmt::Write as _;

use crate::revenue_share::MonthDecision;

/// The statement of `decision` as CSV with a `field,value` header. Amounts are in USD with
/// cents; no field holds a comma or a quote (plan names are the operator's plain words, and
/// are quoted should one ever hold either).
pub fn csv(game_id: &str, decision: &MonthDecision) -> String {
    let usd = |v: f64| format!("{v:.2}");
    let plan = if decision.plan.contains([',', '"']) {
        format!("\"{}\"", decision.plan.replace('"', "\"\""))
    } else {
        decision.plan.clone()
    };
    let rows: [(&str, String); 16] = [
        ("game_id", game_id.to_owned()),
        ("month", decision.month.clone()),
        ("plan", plan),
        ("monthly_players", decision.monthly_players.to_string()),
        ("base_fee_usd", usd(decision.base_fee_usd)),
        ("eligible", decision.eligible.to_string()),
        (
            "treatment_arpu_usd",
            format!("{:.4}", decision.treatment_arpu_usd),
        ),
        (
            "control_arpu_usd",
            format!("{:.4}", decision.control_arpu_usd),
        ),
        ("treated_players", decision.treated_players.to_string()),
        ("days_excluded", decision.days_excluded.to_string()),
        ("uplift_revenue_usd", usd(decision.uplift_revenue_usd)),
        ("rate_pct", decision.rate_pct.to_string()),
        ("revenue_share_usd", usd(decision.revenue_share_usd)),
        ("amount_due_usd", usd(decision.amount_due_usd)),
        ("revenue_basis", decision.revenue_basis.as_str().to_owned()),
        ("decided_at", decision.decided_at.to_rfc3339()),
    ];
    let mut out = String::from("field,value\n");
    for (field, value) in rows {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{field},{value}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::revenue_share::StoredMonthDecision;

    #[test]
    fn every_figure_on_its_own_line_with_cents() {
        let stored: StoredMonthDecision = serde_json::from_value(serde_json::json!({
            "month": "2026-10", "eligible": true,
            "conditions": {
                "n_treatment_gte_10k": {"value": 12000.0, "pass": true},
                "n_control_gte_1k": {"value": 1300.0, "pass": true},
                "days_live_gte_30": {"value": 90.0, "pass": true},
                "p_value_lt_0_05": {"value": 0.01, "pass": true},
                "arpu_uplift_positive": {"value": 0.5, "pass": true}},
            "treatment_arpu_usd": 1.5, "control_arpu_usd": 1.0, "treated_players": 12000,
            "uplift_revenue_usd": 6000.0, "days_excluded": 2, "rate_pct": 12.5,
            "plan": "Studio", "monthly_players": 130000, "base_fee_usd": 799.0,
            "revenue_share_usd": 750.0, "amount_due_usd": 1549.0,
            "decided_at": "2026-11-01T00:00:00Z"}))
        .expect("reads");
        let text = csv("g1", &stored.into_decision(|| unreachable!()));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "field,value");
        for expected in [
            "plan,Studio",
            "base_fee_usd,799.00",
            "revenue_share_usd,750.00",
            "amount_due_usd,1549.00",
            "rate_pct,12.5",
            "revenue_basis,reported",
        ] {
            assert!(lines.contains(&expected), "{expected} in {text}");
        }
        assert_eq!(lines.len(), 17);
    }
}
