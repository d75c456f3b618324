//! Redis round trips of the wallet script, counted by the server: the `calls` of `eval` and
//! `evalsha` in `INFO commandstats`, summed over the nodes a Redis URL names.
//!
//! Read before and after a run, the difference is how many script calls the run made (plus
//! any script the engine ran meanwhile in the background, which on an idle game is none),
//! so calls per operation show what combining one game's events into one call saves.

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

    /// Script calls the nodes have answered since they started.
    pub(crate) async fn total(&mut self) -> Result<u64> {
        let mut total = 0;
        for node in &mut self.nodes {
            let info: String = redis::cmd("INFO")
                .arg("commandstats")
                .query_async(node)
                .await
                .context("INFO commandstats")?;
            total += script_calls(&info);
        }
        Ok(total)
    }
}

/// The `calls` of `cmdstat_eval` and `cmdstat_evalsha` in an `INFO commandstats` reply.
fn script_calls(info: &str) -> u64 {
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.trim().split_once(':')?;
            if name != "cmdstat_eval" && name != "cmdstat_evalsha" {
                return None;
            }
            stats
                .split(',')
                .find_map(|field| field.strip_prefix("calls="))
                .and_then(|calls| calls.parse::<u64>().ok())
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::script_calls;

    #[test]
    fn counts_eval_and_evalsha_calls_only() {
        let info = "# Commandstats\r\n\
            cmdstat_evalsha:calls=120,usec=900,usec_per_call=7.50,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_eval:calls=3,usec=30,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_evalsha_ro:calls=50,usec=1,usec_per_call=0.02,rejected_calls=0,failed_calls=0\r\n\
            cmdstat_get:calls=7,usec=1,usec_per_call=0.14,rejected_calls=0,failed_calls=0\r\n";
        assert_eq!(script_calls(info), 123);
    }
}
