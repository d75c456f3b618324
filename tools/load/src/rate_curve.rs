//! The constant-rate curve of `compare --curve`: after the closed-loop rounds, the engine
//! and the other target are driven at fixed fractions of the other target's maximum rate
//! (its median closed-loop rps), wrk2-style, and their latency quantiles are compared at
//! the same offered load.
//!
//! At a rate both can sustain the closed-loop ratio says nothing about latency; these rows
//! do: a request that waited behind a slow answer is timed from when it should have been
//! sent (see [`crate::drive::Pace`]).

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::child::Server;
use crate::drive::{self, Pace, Plan, Stats};
use crate::figures::{median, ratio};

/// One target at one rate, over its rounds.
struct Point {
    rps: Vec<f64>,
    merged: Stats,
}

impl Point {
    fn new() -> Result<Self> {
        Ok(Self {
            rps: Vec::new(),
            merged: Stats::new()?,
        })
    }

    fn add(&mut self, stats: &Stats) -> Result<()> {
        self.rps.push(stats.rps());
        self.merged.merge(stats)
    }
}

/// What one curve run needs: the two targets, their plans and servers.
pub(crate) struct Curve<'a> {
    /// The two targets' names, engine first.
    pub names: [&'a str; 2],
    /// Their request plans.
    pub plans: [&'a Arc<Plan>; 2],
    /// Their processes, checked after each run.
    pub servers: [&'a mut Server; 2],
    /// Connections of every run.
    pub connections: usize,
    /// Length of every run.
    pub duration: Duration,
    /// Rounds per rate (each is one run per target).
    pub rounds: usize,
}

/// Drives both targets at each `percent` of `max_rps`, alternating them, and returns the
/// table.
pub(crate) async fn run(curve: Curve<'_>, max_rps: f64, percents: &[u32]) -> Result<String> {
    let Curve {
        names,
        plans,
        servers,
        connections,
        duration,
        rounds,
    } = curve;
    let mut out = format!(
        "\nConstant rate ({connections} connections, {rounds} rounds of {duration:?} per rate, \
         latency from the scheduled send), as a share of the {}'s maximum {max_rps:.0} rps\n\
         {:>4} {:>9} {:<9} {:>10} {:>9} {:>9} {:>9}\n",
        names[1], "%", "rate", "target", "rps(med)", "p50 ms", "p99 ms", "p99.9 ms"
    );
    for &percent in percents {
        let rate = max_rps * f64::from(percent) / 100.0;
        let mut points = [Point::new()?, Point::new()?];
        for round in 1..=rounds {
            for i in 0..2 {
                let stats =
                    drive::run_paced(plans[i], connections, duration, Pace { rps: rate }).await?;
                servers[i].check_alive()?;
                eprintln!(
                    "rate {percent}% round {round} {:<8} {:>9.0} rps  p50 {:.3} ms  p99 {:.3} ms  \
                     p99.9 {:.3} ms  {}",
                    names[i],
                    stats.rps(),
                    stats.quantile_ms(0.5),
                    stats.quantile_ms(0.99),
                    stats.quantile_ms(0.999),
                    stats.status_line()
                );
                points[i].add(&stats)?;
            }
        }
        for (name, p) in names.iter().zip(&points) {
            out.push_str(&format!(
                "{percent:>3}% {rate:>9.0} {name:<9} {:>10.0} {:>9.3} {:>9.3} {:>9.3}\n",
                median(&p.rps),
                p.merged.quantile_ms(0.5),
                p.merged.quantile_ms(0.99),
                p.merged.quantile_ms(0.999),
            ));
        }
        let q = |i: usize, x: f64| points[i].merged.quantile_ms(x);
        out.push_str(&format!(
            "{percent:>3}% {}/{}: p50 x{:.2}, p99 x{:.2}, p99.9 x{:.2}\n",
            names[0],
            names[1],
            ratio(q(0, 0.5), q(1, 0.5)),
            ratio(q(0, 0.99), q(1, 0.99)),
            ratio(q(0, 0.999), q(1, 0.999)),
        ));
    }
    Ok(out)
}
