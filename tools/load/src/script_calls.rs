//! Redis round trips of the wallet script and the server's time in them, counted by the
//! server: the `calls` and `usec` of `eval` and `evalsha` in `INFO commandstats`, and the
//! server process's CPU time (`used_cpu_user` and `used_cpu_sys` in `INFO cpu`, which also
//! counts reading, parsing and answering each call), summed over the nodes a Redis URL names.
//!
//! Read before and after a run, the difference is how many script calls the run made and how
//! long Redis spent on them (plus any script the engine ran meanwhile in the background,
//! which on an idle game is none), so calls and time per operation show what combining one
//! game's events into one call saves.

use anyhow::{Context, Result};
use offer_engine::store::redis::target::RedisTarget;
use redis::aio::MultiplexedConnection;

/// Connections to every node a Redis URL names, for `INFO commandstats`.
pub(crate) struct ScriptCalls {
    nodes: Vec<MultiplexedConnection>,
}

impl ScriptCalls {
    /// Connects to each node of `url` (one server, or the cluster nodes it lists).
    pub(crate) async fn connect(url: &str) -> Result<Self> {
        let target =
            RedisTarget::parse(url).map_err(|err| anyhow::anyhow!("bad Redis URL {url}: {err}"))?;
        let mut nodes = Vec::new();
        for node in target.nodes() {
            let client = redis::Client::open(node.clone()).context("a Redis node's address")?;
            nodes.push(
                client
                    .get_multiplexed_async_connection()
                    .await
                    .context("connecting to count script calls")?,
            );
        }
        Ok(Self { nodes })
    }

    /// Script calls the nodes have answered since they started, and their time in them.
    pub(crate) async fn total(&mut self) -> Result<ScriptStats> {
        let mut total = ScriptStats::default();
        for node in &mut self.nodes {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .arg("cpu")
                .query_async(node)
                .await
                .context("INFO commandstats")?;
            let node = script_stats(&info);
            total.calls += node.calls;
            total.usec += node.usec;
            total.cpu_usec += node.cpu_usec;
        }
        Ok(total)
    }
}

/// Script calls and the server's time in them.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ScriptStats {
    /// Calls answered.
    pub(crate) calls: u64,
    /// Microseconds the server spent running them.
    pub(crate) usec: u64,
    /// Microseconds of CPU the server process used, on everything.
    pub(crate) cpu_usec: u64,
}

impl std::ops::Sub for ScriptStats {
    type Output = ScriptStats;

    fn sub(self, earlier: ScriptStats) -> ScriptStats {
        ScriptStats {
            calls: self.calls.saturating_sub(earlier.calls),
            usec: self.usec.saturating_sub(earlier.usec),
            cpu_usec: self.cpu_usec.saturating_sub(earlier.cpu_usec),
        }
    }
}

/// The `calls` and `usec` of `cmdstat_eval` and `cmdstat_evalsha` and the process's CPU
/// time in an `INFO commandstats cpu` reply.
fn script_stats(info: &str) -> ScriptStats {
    let mut total = ScriptStats::default();
    for line in info.lines() {
        let Some((name, stats)) = line.trim().split_once(':') else {
            continue;
        };
        if name == "used_cpu_user" || name == "used_cpu_sys" {
            // Seconds with six decimals.
            let seconds: f64 = stats.parse().unwrap_or(0.0);
            total.cpu_usec += (seconds * 1e6).round() as u64;
            continue;
        }
        if name != "cmdstat_eval" && name != "cmdstat_evalsha" {
            continue;
        }
        let field = |key: &str| {
            stats
                .split(',')
                .find_map(|field| field.strip_prefix(key))
                .and_then(|value| value.parse::<u64>().ok())
                .unwrap_or(0)
        };
        total.calls += field("calls=");
        total.usec += field("usec=");
    }
    total
}

#[cfg(test)]
mod tests {
    use super::script_stats;

    #[test]
    fn counts_eval_and_evalsha_and_the_process_cpu_only() {
        let info = "# CPU\r\n\
            used_cpu_sys:1.500000\r\n\
            used_cpu_user:2.250001\r\n\
            used_cpu_sys_children:9.000000\r\n\
            # Commandstats\r\n\
            cmdstat_evalsha:calls=120,usec=900,usec_per_call=7.50,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_eval:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_evalsha_ro:calls=50,usec=1,usec_per_call=0.02,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_get:calls=7,usec=1,usec_per_call=0.14,rejected_calls=0,failed_calls=0\r\n";
        let stats = script_stats(info);
        assert_eq!((stats.calls, stats.usec), (123, 930));
        assert_eq!(stats.cpu_usec, 3_750_001);
    }
}
