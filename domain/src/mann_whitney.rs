//! Mann-Whitney U tests of revenue: one-sided ("treatment revenue is greater than control
//! revenue", [`greater`]) for the holdout, two-sided ([`two_sided`]) for price experiments.
//!
//! The holdout ARPU comparison needs a significance test that makes no assumption about the
//! shape of revenue (most players pay nothing, a few pay a lot), so it ranks the players
//! instead of averaging them. The result equals
//! `scipy.stats.mannwhitneyu(treatment, control, alternative="greater", method="asymptotic")`:
//! normal approximation, tie correction and continuity correction; [`two_sided`] equals the
//! same call with `alternative="two-sided"` (the larger of the two U statistics, the same
//! corrections, the upper tail doubled and capped at 1).
//!
//! Revenue is heavily tied at zero, so a group is given as a count of players who paid
//! nothing plus the amounts of its payers: every zero forms one tie block whose rank is
//! known without sorting it, and the cost is O(p log p) in the number of payers `p`, not
//! in the number of players.
//!
//! Conventions (where scipy refuses to answer): an empty group, or every value tied, gives
//! `p = 1.0` (no evidence of uplift). The upper tail is computed with `erfc` directly, never
//! as `1 - cdf`, so p-values far below `1e-16` keep their precision.

use statrs::function::erf::erfc;

/// One group's revenue in cents: players who paid nothing as a count, payers as amounts.
///
/// A zero inside `paid` is allowed and counts like one of `zeros`.
#[derive(Debug, Clone, Copy)]
pub struct Group<'a> {
    /// Players of the group with no revenue.
    pub zeros: u64,
    /// Revenue of each remaining player, in cents, in any order.
    pub paid: &'a [u64],
}

impl Group<'_> {
    /// Number of players in the group.
    pub fn len(&self) -> u64 {
        self.zeros + self.paid.len() as u64
    }

    /// Whether the group has no player at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The outcome of the test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// The U statistic of the treatment group (`None` when a group is empty).
    pub u: Option<f64>,
    /// Probability of a U at least this large if treatment and control came from the same
    /// distribution; in `[0, 1]`.
    pub p_value: f64,
}

/// Tests whether `treatment` tends to be greater than `control` (one-sided).
pub fn greater(treatment: Group<'_>, control: Group<'_>) -> MannWhitney {
    test(treatment, control, Tail::Greater)
}

/// Tests whether `a` and `b` differ in either direction (two-sided); `u` is the U statistic
/// of `a`, as scipy reports it.
pub fn two_sided(a: Group<'_>, b: Group<'_>) -> MannWhitney {
    test(a, b, Tail::Both)
}

/// Which alternative a test weighs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tail {
    /// The first group is greater.
    Greater,
    /// The groups differ.
    Both,
}

/// The asymptotic test with tie and continuity corrections.
fn test(treatment: Group<'_>, control: Group<'_>, tail: Tail) -> MannWhitney {
    let (n1, n2) = (treatment.len(), control.len());
    if n1 == 0 || n2 == 0 {
        return MannWhitney {
            u: None,
            p_value: 1.0,
        };
    }
    let mut t = treatment.paid.to_vec();
    let mut c = control.paid.to_vec();
    t.sort_unstable();
    c.sort_unstable();
    let ranks = rank_sums(treatment.zeros, &t, control.zeros, &c);

    // 2 * U1 = 2 * R1 - n1 (n1 + 1): exact in integers, halved once at the end.
    let (n1w, n2w) = (u128::from(n1), u128::from(n2));
    let u1 = (ranks.treatment_rank_sum_x2 - n1w * (n1w + 1)) as f64 / 2.0;
    let n = n1w + n2w;
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let mu = n1f * n2f / 2.0;
    let variance = n1f * n2f / 12.0 * ((nf + 1.0) - ranks.tie_term as f64 / (n * (n - 1)) as f64);
    if variance <= 0.0 {
        // Every value tied: ranks carry no information.
        return MannWhitney {
            u: Some(u1),
            p_value: 1.0,
        };
    }
    let (u, factor) = match tail {
        Tail::Greater => (u1, 0.5),
        // U1 + U2 = n1 n2: the larger of the two is the one further above the mean.
        Tail::Both => (u1.max(n1f * n2f - u1), 1.0),
    };
    let z = (u - mu - 0.5) / variance.sqrt();
    let p_value = (factor * erfc(z / std::f64::consts::SQRT_2)).clamp(0.0, 1.0);
    MannWhitney {
        u: Some(u1),
        p_value,
    }
}

/// What the test needs from the ranking of both groups together.
struct RankSums {
    /// Twice the sum of the treatment's (mid-)ranks, so half ranks stay integers.
    treatment_rank_sum_x2: u128,
    /// Sum over tie blocks of `t^3 - t`.
    tie_term: u128,
}

/// Ranks the zeros (one block) and then both sorted payer lists merged, block by block.
fn rank_sums(t_zeros: u64, t: &[u64], c_zeros: u64, c: &[u64]) -> RankSums {
    let mut acc = RankSums {
        treatment_rank_sum_x2: 0,
        tie_term: 0,
    };
    // Number of values ranked so far (the rank of the next block starts at `before + 1`).
    let mut before: u128 = 0;
    let mut block = |in_t: u128, in_c: u128| {
        let size = in_t + in_c;
        if size == 0 {
            return;
        }
        // Mid-rank of the block is before + (size + 1) / 2; doubled to stay an integer.
        acc.treatment_rank_sum_x2 += in_t * (2 * before + size + 1);
        acc.tie_term += size * size * size - size;
        before += size;
    };
    let (mut i, mut j) = (0, 0);
    // Zeros inside the payer lists join the zero block: values are unsigned, so 0 sorts first.
    while i < t.len() && t[i] == 0 {
        i += 1;
    }
    while j < c.len() && c[j] == 0 {
        j += 1;
    }
    block(
        u128::from(t_zeros) + i as u128,
        u128::from(c_zeros) + j as u128,
    );
    while i < t.len() || j < c.len() {
        let value = match (t.get(i), c.get(j)) {
            (Some(&a), Some(&b)) => a.min(b),
            (Some(&a), None) => a,
            (None, Some(&b)) => b,
            (None, None) => break,
        };
        let (start_i, start_j) = (i, j);
        while i < t.len() && t[i] == value {
            i += 1;
        }
        while j < c.len() && c[j] == value {
            j += 1;
        }
        block((i - start_i) as u128, (j - start_j) as u128);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_given_as_a_count_or_inside_paid_rank_the_same() {
        let as_count = greater(
            Group {
                zeros: 3,
                paid: &[5, 9],
            },
            Group {
                zeros: 2,
                paid: &[5],
            },
        );
        let inline = greater(
            Group {
                zeros: 0,
                paid: &[0, 9, 0, 5, 0],
            },
            Group {
                zeros: 0,
                paid: &[5, 0, 0],
            },
        );
        assert_eq!(as_count, inline);
    }

    #[test]
    fn degenerate_inputs_are_no_evidence() {
        let empty = Group {
            zeros: 0,
            paid: &[],
        };
        let some = Group {
            zeros: 1,
            paid: &[10],
        };
        assert_eq!(greater(empty, some).p_value, 1.0);
        assert_eq!(greater(some, empty).p_value, 1.0);
        let tied = Group {
            zeros: 7,
            paid: &[],
        };
        assert_eq!(greater(tied, tied).p_value, 1.0);
    }
}
