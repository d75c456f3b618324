//! Adjustment lines: a store refund (or its reversal) carried out in a later UTC month than
//! its purchase's, listed on the statement of the month it arrived in.
//!
//! A refund's revenue comes off the day it arrives, so a refund of a purchase whose month has
//! closed moves the month it arrives in and never rewrites the closed one. The line says so
//! on that month's statement: which purchase of which month, how much, for which group. It
//! is *already counted* in the month's figures; it is listed, never added to the amount due.
//! A line never names the player.

use chrono::{DateTime, Datelike, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::product_ids::Store;

/// What an adjustment line moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdjustmentKind {
    /// A store refund took the revenue back: a negative amount.
    Refund,
    /// A store reversed a refund (App Store `REFUND_REVERSED`): a positive amount.
    Reversal,
}

impl AdjustmentKind {
    /// The kind's name on the wire and in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refund => "refund",
            Self::Reversal => "reversal",
        }
    }
}

/// The group of the purchase's player: a treated player's refund lowers the treatment
/// revenue, a holdout player's the holdout's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AdjustmentGroup {
    /// The permanent holdout.
    Holdout,
    /// Everyone else.
    Treatment,
}

impl AdjustmentGroup {
    /// The group's name on the wire and in the CSV.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Holdout => "holdout",
            Self::Treatment => "treatment",
        }
    }
}

/// One adjustment line: a refund or reversal of a purchase made in an earlier UTC month,
/// counted in the figures of the month it arrived in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AdjustmentLine {
    /// The month the refund or reversal arrived in, `YYYY-MM` (UTC): the statement that
    /// lists it.
    pub month: String,
    /// The month the purchase was made in, `YYYY-MM` (UTC), earlier than `month`.
    pub purchase_month: String,
    /// Refund or reversal.
    pub kind: AdjustmentKind,
    /// The store that refunded.
    pub store: Store,
    /// The store's id of the purchase: Apple's `transactionId`, Google's `purchaseToken`.
    pub transaction_id: String,
    /// The revenue it moved in USD: negative for a refund, positive for a reversal.
    pub amount_usd: f64,
    /// The group of the purchase's player.
    pub group: AdjustmentGroup,
    /// When the refund or reversal was carried out.
    #[schema(value_type = String, format = DateTime)]
    pub recorded_at: DateTime<Utc>,
}

/// A refund step carried out, as an adjustment line sees it.
#[derive(Debug, Clone, Copy)]
pub struct Moved<'a> {
    /// Refund or reversal.
    pub kind: AdjustmentKind,
    /// The store.
    pub store: Store,
    /// The store's id of the purchase.
    pub transaction_id: &'a str,
    /// The revenue moved, in cents, positive.
    pub cents: i64,
    /// Whether the purchase's player is in the holdout.
    pub holdout: bool,
    /// When the purchase was made.
    pub bought_at: DateTime<Utc>,
    /// When the step was carried out (its revenue is on that day).
    pub at: DateTime<Utc>,
}

/// The month of `at`, `YYYY-MM` (UTC).
pub fn month_of(at: DateTime<Utc>) -> String {
    at.format("%Y-%m").to_string()
}

/// The adjustment line of `moved`: `None` when it moved nothing or arrived in its purchase's
/// own month (that month's figures hold both, nothing closed in between).
pub fn line(moved: Moved<'_>) -> Option<AdjustmentLine> {
    let month = |at: DateTime<Utc>| (at.year(), at.month());
    if moved.cents <= 0 || month(moved.at) <= month(moved.bought_at) {
        return None;
    }
    let usd = moved.cents as f64 / 100.0;
    Some(AdjustmentLine {
        month: month_of(moved.at),
        purchase_month: month_of(moved.bought_at),
        kind: moved.kind,
        store: moved.store,
        transaction_id: moved.transaction_id.to_owned(),
        amount_usd: match moved.kind {
            AdjustmentKind::Refund => -usd,
            AdjustmentKind::Reversal => usd,
        },
        group: if moved.holdout {
            AdjustmentGroup::Holdout
        } else {
            AdjustmentGroup::Treatment
        },
        recorded_at: moved.at,
    })
}

/// A month's adjustment lines as its statement lists them, and as the live standing lists
/// those of the current month so far: one rule for both, so the month close lists what the
/// standing showed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MonthLines {
    /// The lines, oldest first.
    pub lines: Vec<AdjustmentLine>,
    /// Their signed sum in USD ([`total_usd`]).
    pub total_usd: f64,
}

impl MonthLines {
    /// `lines` in the order a statement lists them (by arrival, then transaction and kind,
    /// so two lines of the same instant always list alike) with their sum.
    pub fn of(mut lines: Vec<AdjustmentLine>) -> Self {
        lines.sort_by(|a, b| {
            (a.recorded_at, &a.transaction_id, a.kind.as_str()).cmp(&(
                b.recorded_at,
                &b.transaction_id,
                b.kind.as_str(),
            ))
        });
        Self {
            total_usd: total_usd(&lines),
            lines,
        }
    }
}

/// The signed sum of `lines` in USD, added up in whole cents so that it carries no
/// floating-point residue.
pub fn total_usd(lines: &[AdjustmentLine]) -> f64 {
    let cents: i64 = lines
        .iter()
        .map(|l| (l.amount_usd * 100.0).round() as i64)
        .sum();
    cents as f64 / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s)
            .expect("a time")
            .with_timezone(&Utc)
    }

    fn moved(kind: AdjustmentKind, bought: &str, now: &str) -> Moved<'static> {
        Moved {
            kind,
            store: Store::AppStore,
            transaction_id: "3000000000000001",
            cents: 499,
            holdout: false,
            bought_at: at(bought),
            at: at(now),
        }
    }

    #[test]
    fn a_refund_in_a_later_month_is_a_negative_line_of_that_month() {
        let line = line(moved(
            AdjustmentKind::Refund,
            "2026-08-31T23:59:59Z",
            "2026-09-01T00:00:00Z",
        ))
        .expect("a line");
        assert_eq!(
            (line.month.as_str(), line.purchase_month.as_str()),
            ("2026-09", "2026-08")
        );
        assert_eq!(line.amount_usd, -4.99);
        assert_eq!(line.group, AdjustmentGroup::Treatment);
        // A year later, across a new year, still a later month.
        let late = super::line(moved(
            AdjustmentKind::Reversal,
            "2025-12-15T00:00:00Z",
            "2026-01-02T00:00:00Z",
        ))
        .expect("a line");
        assert_eq!((late.month.as_str(), late.amount_usd), ("2026-01", 4.99));
    }

    #[test]
    fn the_purchases_own_month_and_an_empty_step_are_no_line() {
        assert_eq!(
            line(moved(
                AdjustmentKind::Refund,
                "2026-09-01T00:00:00Z",
                "2026-09-30T23:59:59Z",
            )),
            None
        );
        let nothing = Moved {
            cents: 0,
            ..moved(
                AdjustmentKind::Refund,
                "2026-08-01T00:00:00Z",
                "2026-09-01T00:00:00Z",
            )
        };
        assert_eq!(line(nothing), None);
        // A purchase time after the refund's (a client clock ahead) is no line either.
        assert_eq!(
            line(moved(
                AdjustmentKind::Refund,
                "2026-10-01T00:00:00Z",
                "2026-09-30T23:00:00Z",
            )),
            None
        );
    }

    #[test]
    fn the_total_is_added_in_cents() {
        let refund = line(moved(
            AdjustmentKind::Refund,
            "2026-08-01T00:00:00Z",
            "2026-09-02T00:00:00Z",
        ))
        .expect("a line");
        let small = AdjustmentLine {
            amount_usd: -0.1,
            ..refund.clone()
        };
        let back = AdjustmentLine {
            amount_usd: 0.2,
            ..refund.clone()
        };
        assert_eq!(total_usd(&[refund.clone(), small, back]), -4.89);
        assert_eq!(total_usd(&[]), 0.0);
        assert_eq!(MonthLines::of(Vec::new()), MonthLines::default());
        // Listed by arrival whatever order they were read in, with their sum.
        let later = AdjustmentLine {
            kind: AdjustmentKind::Reversal,
            amount_usd: 4.99,
            recorded_at: refund.recorded_at + chrono::Duration::hours(1),
            ..refund.clone()
        };
        let listed = MonthLines::of(vec![later.clone(), refund.clone()]);
        assert_eq!(listed.lines, [refund, later]);
        assert_eq!(listed.total_usd, 0.0);
    }
}
