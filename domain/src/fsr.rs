//! The faucet/sink ratio (FSR) report of a game: currency earned over currency spent in a
//! rolling 7-day window, classified against the genre's healthy range.
//!
//! The input is one [`Flows`] per UTC day (the store's per-day aggregates), so the cost is
//! proportional to the number of days asked for, never to the size of the ledger.
//!
//! Currencies are not worth the same (a gem may be worth a hundred gold), so the aggregate
//! weighs each currency by its USD value per unit when every currency that moved has one;
//! otherwise it falls back to raw units and says so in `weighting`. A window in which
//! nothing was spent has no ratio (`fsr: null`, never NaN or infinity): its quadrant is
//! `HYPER_INFL` when something was earned (pure faucet), and `null` when nothing moved.

use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, Days, NaiveDate};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::day_caps::{CapSource, CurrencyCaps};
use crate::economy::Quadrant;
use crate::schema::SnakeCaseId;

/// Length of the rolling window, in UTC calendar days (the day computed for included).
pub const WINDOW_DAYS: u32 = 7;
/// Most days of `daily_fsr` one report covers.
pub const MAX_PERIOD_DAYS: u32 = 90;

/// Units earned and spent per currency on one UTC day.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Flows {
    /// Units earned (faucet) per currency.
    pub earned: BTreeMap<String, i64>,
    /// Units spent (sink) per currency.
    pub spent: BTreeMap<String, i64>,
    /// What the players' day caps left out of `earned` and `spent` per currency (the whole
    /// game's, also for a cohort's flows).
    pub left_out: BTreeMap<String, LeftOut>,
}

/// Units the players' day caps left out of one currency's figures, and the players capped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Units earned left out.
    pub earned: i64,
    /// Units spent left out.
    pub spent: i64,
    /// Players whose earned units were capped (per day; added up over days).
    pub earned_players: i64,
    /// Players whose spent units were capped (per day; added up over days).
    pub spent_players: i64,
}

/// The genre's healthy FSR range, from the calibration table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct Thresholds {
    /// Lowest healthy FSR.
    pub min: f64,
    /// Highest healthy FSR.
    pub max: f64,
}

/// How currencies were added up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Each currency weighed by its USD value per unit.
    Usd,
    /// Raw units: some currency that moved has no USD value.
    Units,
}

/// The FSR of the window ending on one day.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DailyFsr {
    /// Last day of the window, `YYYY-MM-DD`.
    #[schema(value_type = String, format = Date)]
    pub date: NaiveDate,
    /// Earned over spent in that window; `null` when nothing was spent.
    pub fsr: Option<f64>,
}

/// One currency in the current window, in raw units.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CurrencyFsr {
    /// The currency.
    #[schema(value_type = SnakeCaseId)]
    pub currency_id: String,
    /// Units earned.
    pub earned: i64,
    /// Units spent.
    pub spent: i64,
    /// Earned over spent; `null` when nothing was spent.
    pub fsr: Option<f64>,
}

/// One currency's day caps in force and what they left out of the window ending today.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CurrencyDayCap {
    /// The currency.
    #[schema(value_type = SnakeCaseId)]
    pub currency_id: String,
    /// Most units earned one player's day counts in the figures; `null`: no cap.
    pub earned_cap: Option<i64>,
    /// Most units spent one player's day counts in the figures; `null`: no cap.
    pub spent_cap: Option<i64>,
    /// `studio` (the currency's `max_per_player_day`) or `derived` (from the game's players'
    /// day totals of the seven days before today); `null` when no cap is in force.
    pub cap_source: Option<CapSource>,
    /// Units earned above the players' caps in the window: in wallets and the ledger, not
    /// in `earned` nor in the ratio.
    pub earned_left_out: i64,
    /// Units spent above the players' caps in the window.
    pub spent_left_out: i64,
    /// Players capped on earned units, each day of the window added up (a player capped on
    /// two days counts twice).
    pub earned_players_capped: i64,
    /// Players capped on spent units, each day of the window added up.
    pub spent_players_capped: i64,
}

/// The FSR report of a game.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FsrReport {
    /// The game.
    pub game_id: Uuid,
    /// Its genre, whose calibration gives the thresholds.
    pub genre: String,
    /// Number of days in `daily_fsr`.
    pub period_days: u32,
    /// FSR of the window ending today; `null` when nothing was spent in it.
    pub fsr: Option<f64>,
    /// Quadrant of `fsr`; `HYPER_INFL` when currency was earned and none spent, `null` when
    /// nothing moved.
    pub quadrant: Option<Quadrant>,
    /// The genre's healthy range.
    pub thresholds: Thresholds,
    /// Whether the aggregates are weighed in USD or in raw units: one choice for the whole
    /// report (every window of `daily_fsr` compares with the others), `usd` when every
    /// currency that moved on any day the report reads has a USD value.
    pub weighting: Weighting,
    /// For each of the last `period_days` days, oldest first, the window ending that day.
    pub daily_fsr: Vec<DailyFsr>,
    /// Each currency that moved in the window ending today, by id, in raw units.
    pub currency_summary: Vec<CurrencyFsr>,
    /// Each currency of the game (and any other the day caps left units of), by id: the
    /// per-player day caps in force now and what they left out of the window ending today,
    /// for every player whatever the cohort asked for.
    pub day_caps: Vec<CurrencyDayCap>,
}

/// The days a report of `period_days` ending `today` reads, oldest first: the report's days
/// and the six before the first, which its first window reaches back to.
pub fn days_needed(today: NaiveDate, period_days: u32) -> Vec<NaiveDate> {
    let count = period_days + WINDOW_DAYS - 1;
    (0..count)
        .rev()
        .filter_map(|back| today.checked_sub_days(Days::new(u64::from(back))))
        .collect()
}

/// What a report needs besides the day flows.
#[derive(Debug, Clone)]
pub struct ReportInput<'a> {
    /// The game.
    pub game_id: Uuid,
    /// Its genre.
    pub genre: &'a str,
    /// The genre's healthy range.
    pub thresholds: Thresholds,
    /// USD per unit of each currency that has a value.
    pub usd_per_unit: &'a HashMap<String, f64>,
    /// The day caps in force for each currency of the game.
    pub caps: &'a BTreeMap<String, CurrencyCaps>,
}

/// Builds the report from the flows of [`days_needed`] (same order, same length).
pub fn report(input: &ReportInput<'_>, dates: &[NaiveDate], flows: &[Flows]) -> FsrReport {
    let window = WINDOW_DAYS as usize;
    let period = dates.len().saturating_sub(window - 1);
    let weights = weights(input.usd_per_unit, flows);
    let weighting = if weights.is_some() {
        Weighting::Usd
    } else {
        Weighting::Units
    };
    let weight = |currency: &str| {
        weights
            .as_ref()
            .and_then(|w| w.get(currency).copied())
            .unwrap_or(1.0)
    };
    let daily_fsr: Vec<DailyFsr> = (0..period)
        .map(|i| {
            let (earned, spent) = weighed(&window_totals(&flows[i..i + window]), &weight);
            DailyFsr {
                date: dates[i + window - 1],
                fsr: ratio(earned, spent),
            }
        })
        .collect();

    let current = window_totals(&flows[flows.len().saturating_sub(window)..]);
    let (earned, spent) = weighed(&current, &weight);
    let fsr = ratio(earned, spent);
    let quadrant = quadrant_of(earned, spent, input.thresholds);
    let currency_summary = current
        .into_iter()
        .map(|(currency_id, t)| CurrencyFsr {
            fsr: ratio(t.earned as f64, t.spent as f64),
            currency_id,
            earned: t.earned,
            spent: t.spent,
        })
        .collect();
    let day_caps = day_caps(input.caps, &flows[flows.len().saturating_sub(window)..]);
    FsrReport {
        day_caps,
        game_id: input.game_id,
        genre: input.genre.to_owned(),
        period_days: u32::try_from(period).unwrap_or(u32::MAX),
        fsr,
        quadrant,
        thresholds: input.thresholds,
        weighting,
        daily_fsr,
        currency_summary,
    }
}

/// Each currency's caps in force beside what they left out of `days`.
fn day_caps(caps: &BTreeMap<String, CurrencyCaps>, days: &[Flows]) -> Vec<CurrencyDayCap> {
    let mut left: BTreeMap<&str, LeftOut> = caps
        .keys()
        .map(|c| (c.as_str(), LeftOut::default()))
        .collect();
    for day in days {
        for (currency, l) in &day.left_out {
            let sum = left.entry(currency.as_str()).or_default();
            sum.earned = sum.earned.saturating_add(l.earned);
            sum.spent = sum.spent.saturating_add(l.spent);
            sum.earned_players = sum.earned_players.saturating_add(l.earned_players);
            sum.spent_players = sum.spent_players.saturating_add(l.spent_players);
        }
    }
    left.into_iter()
        .map(|(currency, l)| {
            let cap = caps.get(currency).copied().unwrap_or_default();
            CurrencyDayCap {
                currency_id: currency.to_owned(),
                earned_cap: cap.earned,
                spent_cap: cap.spent,
                cap_source: cap.source,
                earned_left_out: l.earned,
                spent_left_out: l.spent,
                earned_players_capped: l.earned_players,
                spent_players_capped: l.spent_players,
            }
        })
        .collect()
}

/// The quadrant of the window ending on each day of a period, oldest first, from the flows of
/// [`days_needed`] for that period (so `flows.len() - 6` days), weighed as [`report`] weighs
/// them (one choice for the whole period). `None` for a window in which nothing moved.
/// What the holdout comparison reads to leave out the days the economy was not healthy.
pub fn daily_quadrants(
    thresholds: Thresholds,
    usd_per_unit: &HashMap<String, f64>,
    flows: &[Flows],
) -> Vec<Option<Quadrant>> {
    let weights = weights(usd_per_unit, flows);
    let weight = |currency: &str| {
        weights
            .as_ref()
            .and_then(|w| w.get(currency).copied())
            .unwrap_or(1.0)
    };
    flows
        .windows(WINDOW_DAYS as usize)
        .map(|days| {
            let (earned, spent) = weighed(&window_totals(days), &weight);
            quadrant_of(earned, spent, thresholds)
        })
        .collect()
}

/// Weighted earned and spent totals of a window.
fn weighed(totals: &BTreeMap<String, Totals>, weight: &impl Fn(&str) -> f64) -> (f64, f64) {
    totals.iter().fold((0.0, 0.0), |(e, s), (c, t)| {
        (
            e + t.earned as f64 * weight(c),
            s + t.spent as f64 * weight(c),
        )
    })
}

/// A window's quadrant: its ratio's, `HYPER_INFL` when currency was earned and none spent,
/// `None` when nothing moved.
fn quadrant_of(earned: f64, spent: f64, thresholds: Thresholds) -> Option<Quadrant> {
    match ratio(earned, spent) {
        Some(value) => Some(Quadrant::classify(value, thresholds.min, thresholds.max)),
        None if earned > 0.0 => Some(Quadrant::HyperInfl),
        None => None,
    }
}

/// The install cohort of a day: its ISO week, `YYYY-Www` (`2026-W40`).
pub fn cohort_of(day: NaiveDate) -> String {
    let week = day.iso_week();
    format!("{}-W{:02}", week.year(), week.week())
}

/// A cohort as a request names it, checked: `YYYY-Www` with a week from 01 to 53. A week 53
/// in a year that has none is a well-formed cohort no player can be in (its report is
/// empty). `None` for anything else.
pub fn parse_cohort(text: &str) -> Option<String> {
    let (year, week) = text.split_once("-W")?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(year, 4) || !digits(week, 2) {
        return None;
    }
    let week: u32 = week.parse().ok()?;
    (1..=53).contains(&week).then(|| text.to_owned())
}

/// Earned over spent, or `None` when nothing was spent.
fn ratio(earned: f64, spent: f64) -> Option<f64> {
    (spent > 0.0).then(|| earned / spent)
}

/// One currency's units over a window.
#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    earned: i64,
    spent: i64,
}

/// Units per currency over the given days; only currencies that moved appear.
fn window_totals(days: &[Flows]) -> BTreeMap<String, Totals> {
    let mut totals: BTreeMap<String, Totals> = BTreeMap::new();
    for day in days {
        for (c, units) in &day.earned {
            let t = totals.entry(c.clone()).or_default();
            t.earned = t.earned.saturating_add(*units);
        }
        for (c, units) in &day.spent {
            let t = totals.entry(c.clone()).or_default();
            t.spent = t.spent.saturating_add(*units);
        }
    }
    totals.retain(|_, t| t.earned != 0 || t.spent != 0);
    totals
}

/// The USD weights, when every currency that moved on any of the days has a positive,
/// finite value; `None` (raw units) otherwise.
fn weights(usd_per_unit: &HashMap<String, f64>, flows: &[Flows]) -> Option<HashMap<String, f64>> {
    let mut out = HashMap::new();
    for day in flows {
        for (currency, units) in day.earned.iter().chain(&day.spent) {
            if *units == 0 {
                continue;
            }
            let value = usd_per_unit
                .get(currency)
                .copied()
                .filter(|v| v.is_finite() && *v > 0.0)?;
            out.insert(currency.clone(), value);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RPG: Thresholds = Thresholds { min: 0.8, max: 2.0 };

    #[test]
    fn cohorts_are_iso_weeks() {
        let d = |y, m, day| NaiveDate::from_ymd_opt(y, m, day).expect("date");
        assert_eq!(cohort_of(d(2026, 11, 24)), "2026-W48");
        // 1 January 2027 is a Friday: it belongs to the last ISO week of 2026.
        assert_eq!(cohort_of(d(2027, 1, 1)), "2026-W53");
        assert_eq!(parse_cohort("2026-W48").as_deref(), Some("2026-W48"));
        assert_eq!(parse_cohort("2026-W53").as_deref(), Some("2026-W53"));
        // Well formed, though 2025 has no week 53: a cohort nobody is in.
        assert_eq!(parse_cohort("2025-W53").as_deref(), Some("2025-W53"));
        for bad in [
            "2026-W00", "2026-W54", "2026W48", "26-W48", "2026-w48", "2026-W4", "2026-W4x",
        ] {
            assert_eq!(parse_cohort(bad), None, "{bad}");
        }
    }

    #[test]
    fn daily_quadrants_judge_the_window_ending_each_day() {
        let quiet = Flows::default();
        // Six quiet days, then a pure faucet, then a day spending it back down.
        let mut flows = vec![quiet.clone(); 6];
        flows.push(day(&[("gold", 100)], &[]));
        flows.push(day(&[], &[("gold", 100)]));
        flows.push(quiet);
        let quadrants = daily_quadrants(RPG, &HashMap::new(), &flows);
        assert_eq!(
            quadrants,
            vec![
                Some(Quadrant::HyperInfl),
                Some(Quadrant::Healthy),
                Some(Quadrant::Healthy)
            ]
        );
        assert_eq!(
            daily_quadrants(RPG, &HashMap::new(), &vec![Flows::default(); 7]),
            vec![None]
        );
    }

    fn day(earned: &[(&str, i64)], spent: &[(&str, i64)]) -> Flows {
        let map = |pairs: &[(&str, i64)]| {
            pairs
                .iter()
                .map(|(c, u)| ((*c).to_owned(), *u))
                .collect::<BTreeMap<_, _>>()
        };
        Flows {
            earned: map(earned),
            spent: map(spent),
            left_out: BTreeMap::new(),
        }
    }

    fn today() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, 10).expect("date")
    }

    /// A report of `period` days whose last day (today) has `last` and every other day
    /// nothing.
    fn run(period: u32, last: Flows, rates: &HashMap<String, f64>) -> FsrReport {
        let dates = days_needed(today(), period);
        let mut flows = vec![Flows::default(); dates.len()];
        if let Some(l) = flows.last_mut() {
            *l = last;
        }
        let input = ReportInput {
            game_id: Uuid::nil(),
            genre: "rpg",
            thresholds: RPG,
            usd_per_unit: rates,
            caps: &BTreeMap::new(),
        };
        report(&input, &dates, &flows)
    }

    #[test]
    fn days_needed_reaches_six_days_before_the_first() {
        let d = days_needed(today(), 1);
        assert_eq!(d.len(), 7);
        assert_eq!(d[0], NaiveDate::from_ymd_opt(2026, 3, 4).expect("date"));
        assert_eq!(d[6], today());
        assert_eq!(days_needed(today(), 90).len(), 96);
    }

    #[test]
    fn quadrant_boundaries() {
        let none = HashMap::new();
        let q = |earned: i64, spent: i64| {
            run(1, day(&[("gold", earned)], &[("gold", spent)]), &none).quadrant
        };
        assert_eq!(q(8, 10), Some(Quadrant::Healthy)); // exactly min
        assert_eq!(q(20, 10), Some(Quadrant::Healthy)); // exactly max
        assert_eq!(q(79, 100), Some(Quadrant::Deflation));
        assert_eq!(q(50, 10), Some(Quadrant::Inflation)); // exactly max x 2.5
        assert_eq!(q(501, 100), Some(Quadrant::HyperInfl));
        assert_eq!(q(21, 10), Some(Quadrant::Inflation));
    }

    #[test]
    fn nothing_spent_is_null_and_hyper_inflation_only_when_earned() {
        let none = HashMap::new();
        let earned_only = run(1, day(&[("gold", 5)], &[]), &none);
        assert_eq!(earned_only.fsr, None);
        assert_eq!(earned_only.quadrant, Some(Quadrant::HyperInfl));
        assert_eq!(earned_only.currency_summary[0].fsr, None);
        let quiet = run(3, Flows::default(), &none);
        assert_eq!(quiet.fsr, None);
        assert_eq!(quiet.quadrant, None);
        assert!(quiet.currency_summary.is_empty());
        assert!(quiet.daily_fsr.iter().all(|d| d.fsr.is_none()));
    }

    #[test]
    fn usd_weighting_when_every_moved_currency_has_a_value() {
        let flows = day(
            &[("gold", 1000), ("gems", 10)],
            &[("gold", 100), ("gems", 10)],
        );
        let rates = HashMap::from([("gold".to_owned(), 0.001), ("gems".to_owned(), 0.1)]);
        let r = run(1, flows.clone(), &rates);
        assert_eq!(r.weighting, Weighting::Usd);
        // (1000 x 0.001 + 10 x 0.1) / (100 x 0.001 + 10 x 0.1) = 2 / 1.1
        let fsr = r.fsr.expect("fsr");
        assert!((fsr - 2.0 / 1.1).abs() < 1e-12, "{fsr}");
        // Raw units in the summary whatever the weighting.
        assert_eq!(r.currency_summary[1].currency_id, "gold");
        assert_eq!(r.currency_summary[1].earned, 1000);

        let partial = HashMap::from([("gold".to_owned(), 0.001)]);
        let r = run(1, flows, &partial);
        assert_eq!(r.weighting, Weighting::Units);
        assert_eq!(r.fsr, Some(1010.0 / 110.0));
    }

    #[test]
    fn rolling_window_is_seven_days_ending_each_day() {
        let dates = days_needed(today(), 3);
        let mut flows = vec![Flows::default(); dates.len()];
        // Eight days before today: only in the window of the first reported day (today - 2).
        flows[0] = day(&[("gold", 10)], &[("gold", 10)]);
        // Today: only in the window ending today.
        flows[8] = day(&[("gold", 30)], &[("gold", 10)]);
        let none = HashMap::new();
        let input = ReportInput {
            game_id: Uuid::nil(),
            genre: "rpg",
            thresholds: RPG,
            usd_per_unit: &none,
            caps: &BTreeMap::new(),
        };
        let r = report(&input, &dates, &flows);
        assert_eq!(r.period_days, 3);
        let daily: Vec<Option<f64>> = r.daily_fsr.iter().map(|d| d.fsr).collect();
        assert_eq!(daily, vec![Some(1.0), None, Some(3.0)]);
        assert_eq!(r.daily_fsr[2].date, today());
        assert_eq!(r.fsr, Some(3.0));
    }

    #[test]
    fn day_caps_list_every_currency_and_add_up_what_the_window_left_out() {
        let dates = days_needed(today(), 1);
        let mut flows = vec![Flows::default(); dates.len()];
        let left = LeftOut {
            earned: 500,
            spent: 0,
            earned_players: 2,
            spent_players: 0,
        };
        flows[5].left_out.insert("gold".into(), left);
        flows[6].left_out.insert("gold".into(), left);
        let caps = BTreeMap::from([
            (
                "gold".to_owned(),
                CurrencyCaps {
                    earned: Some(3000),
                    spent: Some(2400),
                    source: Some(CapSource::Derived),
                },
            ),
            ("gems".to_owned(), CurrencyCaps::default()),
        ]);
        let none = HashMap::new();
        let input = ReportInput {
            game_id: Uuid::nil(),
            genre: "rpg",
            thresholds: RPG,
            usd_per_unit: &none,
            caps: &caps,
        };
        let r = report(&input, &dates, &flows);
        assert_eq!(r.day_caps.len(), 2);
        assert_eq!(r.day_caps[0].currency_id, "gems");
        assert_eq!(r.day_caps[0].cap_source, None);
        let gold = &r.day_caps[1];
        assert_eq!((gold.earned_cap, gold.spent_cap), (Some(3000), Some(2400)));
        assert_eq!(
            (gold.earned_left_out, gold.earned_players_capped),
            (1000, 4)
        );
        assert_eq!(gold.spent_left_out, 0);
    }
}
