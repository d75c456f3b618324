//! A closed month's statement as CSV: one line per figure of its decision, in the order a
//! reader adds them up (the plan and its base fee, the uplift and the revenue share, the
//! amount due), for a studio's accounts; then the month's adjustment lines (refunds of
//! purchases of earlier months), their sum first and one row each, already counted in the
//! figures above.

use std::fmt::Write as _;

use crate::revenue_share::MonthDecision;

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
fn cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// The statement of `decision` as CSV with a `field,value` header. Amounts are in USD with
/// cents; no field holds a comma or a quote (plan names are the operator's plain words, and
/// are quoted should one ever hold either).
///
/// After the figures, `adjustments_usd` is the signed sum of the month's adjustment lines,
/// and each line is a row
/// `adjustment:<kind>:<store>:<transaction_id>:<purchase_month>:<group>,<amount_usd>` (kind
/// `refund` or `reversal`, group `treatment` or `holdout`, the amount negative for a
/// refund), so the file keeps its two columns and a spreadsheet adds the amounts up. The
/// lines are already counted in the figures above: `amount_due_usd` does not include them.
pub fn csv(game_id: &str, decision: &MonthDecision) -> String {
    let usd = |v: f64| format!("{v:.2}");
    let plan = cell(&decision.plan);
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
    let _ = writeln!(out, "adjustments_usd,{}", usd(decision.adjustments_usd));
    for line in &decision.adjustments {
        let field = format!(
            "adjustment:{}:{}:{}:{}:{}",
            line.kind.as_str(),
            line.store.as_str(),
            line.transaction_id,
            line.purchase_month,
            line.group.as_str()
        );
        let _ = writeln!(out, "{},{}", cell(&field), usd(line.amount_usd));
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
            "adjustments_usd,0.00",
        ] {
            assert!(lines.contains(&expected), "{expected} in {text}");
        }
        assert_eq!(lines.len(), 18);
    }

    #[test]
    fn each_adjustment_line_is_a_row_and_the_amount_due_leaves_them_out() {
        let stored: StoredMonthDecision = serde_json::from_value(serde_json::json!({
            "month": "2026-10", "eligible": false,
            "conditions": {
                "n_treatment_gte_10k": {"value": 2.0, "pass": false},
                "n_control_gte_1k": {"value": 1.0, "pass": false},
                "days_live_gte_30": {"value": 90.0, "pass": true},
                "p_value_lt_0_05": {"value": 0.5, "pass": false},
                "arpu_uplift_positive": {"value": 0.5, "pass": true}},
            "treatment_arpu_usd": 1.5, "control_arpu_usd": 1.0, "treated_players": 2,
            "uplift_revenue_usd": 1.0, "days_excluded": 0, "rate_pct": 12.5,
            "plan": "Indie", "monthly_players": 3, "base_fee_usd": 299.0,
            "revenue_share_usd": 0.0, "amount_due_usd": 299.0,
            "decided_at": "2026-11-01T00:00:00Z",
            "adjustments": [
                {"month": "2026-10", "purchase_month": "2026-08", "kind": "refund",
                 "store": "app_store", "transaction_id": "3000000000000001",
                 "amount_usd": -4.99, "group": "treatment",
                 "recorded_at": "2026-10-03T10:00:00Z"},
                {"month": "2026-10", "purchase_month": "2026-09", "kind": "reversal",
                 "store": "google_play", "transaction_id": "tok.en-1",
                 "amount_usd": 0.99, "group": "holdout",
                 "recorded_at": "2026-10-04T10:00:00Z"}],
            // A stored sum is not trusted: the lines' is.
            "adjustments_usd": 100.0}))
        .expect("reads");
        let decision = stored.into_decision(|| unreachable!());
        assert_eq!(decision.adjustments.len(), 2);
        assert_eq!(decision.adjustments_usd, -4.0);
        assert_eq!(decision.amount_due_usd, 299.0);
        let text = csv("g1", &decision);
        let lines: Vec<&str> = text.lines().collect();
        let tail: Vec<&str> = lines[lines.len() - 3..].to_vec();
        assert_eq!(
            tail,
            [
                "adjustments_usd,-4.00",
                "adjustment:refund:app_store:3000000000000001:2026-08:treatment,-4.99",
                "adjustment:reversal:google_play:tok.en-1:2026-09:holdout,0.99",
            ]
        );
        assert!(lines.contains(&"amount_due_usd,299.00"), "{text}");
        // Every row keeps the two columns.
        assert!(lines.iter().all(|l| l.split(',').count() == 2), "{text}");
    }

    #[test]
    fn a_cell_with_a_comma_or_a_quote_is_quoted() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
