//! The verdict line closing a report: a measured figure against its target.

/// Which side of its target a figure must stay on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Bound {
    /// The figure must be at least this.
    AtLeast(f64),
    /// The figure must be at most this.
    AtMost(f64),
}

/// `name: shown (target at least|most T: met|MISSED)` and a line break, where `shown` is
/// `measured` as the report prints it (`0.93`, `x1.20`).
pub(crate) fn target_line(name: &str, shown: &str, measured: f64, target: Bound) -> String {
    let (bound, limit, met) = match target {
        Bound::AtLeast(limit) => ("least", limit, measured >= limit),
        Bound::AtMost(limit) => ("most", limit, measured <= limit),
    };
    let verdict = if met { "met" } else { "MISSED" };
    format!("{name}: {shown} (target at {bound} {limit}: {verdict})\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(
            target_line("engine/direct", "0.93", 0.93, Bound::AtLeast(0.8)),
            "engine/direct: 0.93 (target at least 0.8: met)\n"
        );
        assert_eq!(
            target_line("engine/baseline", "x1.60", 1.6, Bound::AtMost(1.5)),
            "engine/baseline: x1.60 (target at most 1.5: MISSED)\n"
        );
    }
}
