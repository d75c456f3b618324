//! Per-player day caps: how much of one player's UTC day counts in a game's economy figures
//! (the FSR, its quadrant, the approval simulation), per currency, earned and spent each.
//!
//! A handful of players reporting absurd amounts would otherwise move the figures of a
//! whole game: the FSR report, the quadrant that switches AI levels off, the simulation an
//! approval reads. What a player reports above their cap still reaches their wallet and the
//! ledger; it is only left out of the figures, and shown as left out.
//!
//! The cap of a currency is the studio's `max_per_player_day` when set. Otherwise it is
//! derived from the game's own players: [`DERIVED_MULTIPLE`] times the 99th percentile of the
//! players' day totals over the [`DERIVED_WINDOW_DAYS`] days before today, once those days
//! hold at least [`MIN_PLAYER_DAYS`] player-days of that currency and kind; before that, no
//! cap. Today is left out of the derivation: its totals are still moving, and a burst of
//! absurd amounts today must not raise today's cap.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The derived cap is this many times the 99th percentile of player-day totals. Low enough
/// that a hundredth of a game's players, each at the cap every day, moves a week's totals
/// of a game whose players report about the same amounts by under one percent; high enough
/// that a player reporting a normal busy day is not capped.
pub const DERIVED_MULTIPLE: i64 = 3;

/// Player-days of a currency and kind needed before a cap is derived from them.
pub const MIN_PLAYER_DAYS: usize = 100;

/// Days before today whose player totals the derived caps read.
pub const DERIVED_WINDOW_DAYS: u32 = 7;

/// Where a cap in force comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CapSource {
    /// The currency's `max_per_player_day`, set by the studio.
    Studio,
    /// Derived from the game's own players' day totals.
    Derived,
}

/// The caps in force for one currency.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CurrencyCaps {
    /// Most units earned a player's day counts; `None`: no cap.
    pub earned: Option<i64>,
    /// Most units spent a player's day counts; `None`: no cap.
    pub spent: Option<i64>,
    /// Where they come from; `None` when neither is in force.
    pub source: Option<CapSource>,
}

/// The derived cap of one currency and kind from its player-day totals (in any order):
/// [`DERIVED_MULTIPLE`] times their 99th percentile (nearest rank), at least 1; `None` with
/// fewer than [`MIN_PLAYER_DAYS`] totals or no positive one.
pub fn derived_cap(mut totals: Vec<i64>) -> Option<i64> {
    if totals.len() < MIN_PLAYER_DAYS {
        return None;
    }
    totals.sort_unstable();
    // Nearest rank: the smallest total at or above 99 % of them.
    let rank = (totals.len() * 99).div_ceil(100);
    let p99 = totals[rank.saturating_sub(1)];
    (p99 > 0).then(|| p99.saturating_mul(DERIVED_MULTIPLE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_cap_below_the_minimum_of_player_days() {
        assert_eq!(derived_cap(vec![1000; MIN_PLAYER_DAYS - 1]), None);
        assert_eq!(derived_cap(vec![0; MIN_PLAYER_DAYS]), None);
        assert_eq!(derived_cap(vec![1000; MIN_PLAYER_DAYS]), Some(3000));
    }

    #[test]
    fn the_top_hundredth_does_not_move_the_cap() {
        // 990 ordinary days of 1 to 990 units, then 10 absurd ones.
        let mut totals: Vec<i64> = (1..=990).collect();
        totals.extend([1_000_000_000; 10]);
        assert_eq!(derived_cap(totals), Some(990 * DERIVED_MULTIPLE));
        // One more absurd day reaches the 99th percentile.
        let mut totals: Vec<i64> = (1..=989).collect();
        totals.extend([1_000_000_000; 11]);
        assert_eq!(derived_cap(totals), Some(3_000_000_000));
    }
}
