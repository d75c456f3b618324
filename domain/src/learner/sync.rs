//! The statistics nodes add up: what one node learned since its last sync, as named
//! fixed-point counters the store adds to its totals, and those totals read back.
//!
//! Counter names:
//! - `n`: shown offers (the game's offer count, the clock of forgetting);
//! - `<epoch>:<cell>:q` and `<epoch>:<cell>:h`: the change of a weight cell's precision and
//!   precision x mean, in the units of the forgetting epoch `<epoch>`;
//! - `<epoch>:a<arm>`: the weight of the observations of an arm, for the model view;
//! - the same prefixed with `g<generation>.` once the learner has started again after a
//!   change of taste (generation 0 has no prefix), and `g<generation>.start`, 1 from each
//!   node that started that generation (two nodes may start it together: it is one
//!   generation all the same). Readers take the highest generation named and ignore the
//!   counters of the others.
//!
//! Values are fixed point with [`FIXED_POINT_ONE`] to one unit; the fraction a node could not
//! send is kept for its next sync, so rounding never drifts.

use std::collections::BTreeMap;

/// The integer that stands for 1.0 in a counter: 2^24, so a counter holds up to 5.5e11 units
/// and resolves 6e-8 of one.
pub const FIXED_POINT_ONE: f64 = (1u64 << 24) as f64;

/// What one node learned since its last sync.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Increments {
    /// The learner's generation: how many times it started again.
    pub generation: u32,
    /// Whether this node started that generation since its last sync.
    pub restarted: bool,
    /// The forgetting epoch the cell and arm values are in.
    pub epoch: u64,
    /// Offers shown.
    pub offers: u64,
    /// Per touched cell: change of precision and of precision x mean, fixed point.
    pub cells: Vec<(u32, i64, i64)>,
    /// Per arm (index in [`crate::bandit::Arm::all`] order): observation weight, fixed point.
    pub arms: Vec<(u32, i64)>,
}

impl Increments {
    /// The named counters the store adds to its totals; zero values are left out.
    pub fn to_counters(&self) -> Vec<(String, i64)> {
        let e = self.epoch;
        let g = match self.generation {
            0 => String::new(),
            g => format!("g{g}."),
        };
        let mut out = Vec::with_capacity(2 + 2 * self.cells.len() + self.arms.len());
        if self.offers > 0 {
            out.push((
                "n".to_owned(),
                i64::try_from(self.offers).unwrap_or(i64::MAX),
            ));
        }
        if self.restarted {
            out.push((format!("{g}start"), 1));
        }
        for (cell, q, h) in &self.cells {
            if *q != 0 {
                out.push((format!("{g}{e}:{cell}:q"), *q));
            }
            if *h != 0 {
                out.push((format!("{g}{e}:{cell}:h"), *h));
            }
        }
        for (arm, w) in &self.arms {
            if *w != 0 {
                out.push((format!("{g}{e}:a{arm}"), *w));
            }
        }
        out
    }
}

/// The store's totals, parsed: the offer count and, per epoch, the cells' and arms' sums.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Shown offers of the game.
    pub offers: u64,
    /// The highest generation named: the cells and arms below are its only.
    pub generation: u32,
    /// Per epoch: `(cell, precision sum, precision x mean sum)`, as units.
    pub cells: BTreeMap<u64, Vec<(usize, f64, f64)>>,
    /// Per epoch: `(arm index, weight sum)`, as units.
    pub arms: BTreeMap<u64, Vec<(usize, f64)>>,
}

impl Totals {
    /// Reads named counters; names it does not know, or cells and arms beyond the given
    /// bounds, are ignored.
    pub fn parse(counters: &[(String, i64)], cells: usize, arms: usize) -> Self {
        let mut out = Self {
            generation: counters
                .iter()
                .filter_map(|(name, _)| generation_of(name).map(|(g, _)| g))
                .max()
                .unwrap_or(0),
            ..Self::default()
        };
        let mut q: BTreeMap<(u64, usize), (f64, f64)> = BTreeMap::new();
        for (name, value) in counters {
            if name == "n" {
                out.offers = out
                    .offers
                    .saturating_add(u64::try_from(*value).unwrap_or(0));
                continue;
            }
            let Some((generation, name)) = generation_of(name) else {
                continue;
            };
            if generation != out.generation {
                continue;
            }
            if name == "start" {
                continue;
            }
            let v = *value as f64 / FIXED_POINT_ONE;
            let mut parts = name.split(':');
            let (Some(epoch), Some(key)) = (
                parts.next().and_then(|e| e.parse::<u64>().ok()),
                parts.next(),
            ) else {
                continue;
            };
            match (key.strip_prefix('a'), parts.next(), parts.next()) {
                (Some(arm), None, None) => {
                    if let Some(arm) = arm.parse::<usize>().ok().filter(|a| *a < arms) {
                        out.arms.entry(epoch).or_default().push((arm, v));
                    }
                }
                (None, Some(kind), None) => {
                    let Some(cell) = key.parse::<usize>().ok().filter(|c| *c < cells) else {
                        continue;
                    };
                    let slot = q.entry((epoch, cell)).or_default();
                    match kind {
                        "q" => slot.0 += v,
                        "h" => slot.1 += v,
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        for ((epoch, cell), (q, h)) in q {
            out.cells.entry(epoch).or_default().push((cell, q, h));
        }
        out
    }
}

/// The generation a counter's name belongs to and the name without its generation prefix;
/// `None` for a malformed prefix.
fn generation_of(name: &str) -> Option<(u32, &str)> {
    match name.strip_prefix('g') {
        None => Some((0, name)),
        Some(rest) => {
            let (g, name) = rest.split_once('.')?;
            Some((g.parse().ok()?, name))
        }
    }
}

/// Rounds `pending` to fixed point, leaving in it what could not be sent.
pub(super) fn take_fixed(pending: &mut f64) -> i64 {
    let units = (*pending * FIXED_POINT_ONE).round();
    // Out-of-range values saturate; the remainder is then kept for later.
    let fixed = units as i64;
    *pending -= fixed as f64 / FIXED_POINT_ONE;
    fixed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_round_trip() {
        let inc = Increments {
            epoch: 3,
            offers: 7,
            cells: vec![(5, 1 << 24, -(1 << 23)), (9, 0, 3)],
            arms: vec![(2, 1 << 25)],
            ..Increments::default()
        };
        let named = inc.to_counters();
        assert_eq!(named.len(), 5);
        let mut all = named.clone();
        all.push(("garbage".to_owned(), 1));
        all.push(("3:99999:q".to_owned(), 1));
        all.push(("3:a99".to_owned(), 1));
        let t = Totals::parse(&all, 100, 18);
        assert_eq!(t.offers, 7);
        assert_eq!(
            t.cells[&3],
            vec![(5, 1.0, -0.5), (9, 0.0, 3.0 / FIXED_POINT_ONE)]
        );
        assert_eq!(t.arms[&3], vec![(2, 2.0)]);
    }

    #[test]
    fn readers_take_the_newest_generation_only() {
        let old = Increments {
            epoch: 0,
            offers: 5,
            cells: vec![(1, 1 << 24, 1 << 24)],
            ..Increments::default()
        };
        let new = Increments {
            generation: 2,
            restarted: true,
            epoch: 0,
            offers: 3,
            cells: vec![(4, 1 << 25, 0)],
            arms: vec![(1, 1 << 24)],
        };
        let named = new.to_counters();
        assert!(named.contains(&("g2.start".to_owned(), 1)));
        assert!(named.contains(&("g2.0:4:q".to_owned(), 1 << 25)));
        let mut all = old.to_counters();
        all.extend(named);
        all.push(("g1.0:7:q".to_owned(), 1 << 24));
        all.push(("gx.0:7:q".to_owned(), 1 << 24));
        let t = Totals::parse(&all, 100, 18);
        assert_eq!((t.generation, t.offers), (2, 8));
        assert_eq!(t.cells[&0], vec![(4, 2.0, 0.0)]);
        assert_eq!(t.arms[&0], vec![(1, 1.0)]);
        // Without a newer one, generation 0 is read as before.
        let t = Totals::parse(&old.to_counters(), 100, 18);
        assert_eq!(
            (t.generation, t.cells[&0].clone()),
            (0, vec![(1, 1.0, 1.0)])
        );
    }

    #[test]
    fn rounding_keeps_the_remainder() {
        let mut p = 1.25 + 0.3 / FIXED_POINT_ONE;
        let f = take_fixed(&mut p);
        assert_eq!(f, (1.25 * FIXED_POINT_ONE) as i64);
        assert!((p * FIXED_POINT_ONE - 0.3).abs() < 1e-6);
    }
}
