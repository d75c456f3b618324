//! The command connection: one multiplexed connection to a single Redis, or the
//! cluster-aware connection to a Redis Cluster.
//!
//! Both reconnect by themselves and both speak the redis crate's [`ConnectionLike`], so every
//! command, pipeline and script of the store is written once. On a cluster each command goes
//! to the master that owns its first key's hash slot (following `MOVED` and `ASK` when the
//! slots move), a script goes to the owner of its first key (the server refuses one whose
//! keys span slots), a pipeline must stay within one slot, `SCRIPT LOAD` goes to every node,
//! and a command without a key (`PUBLISH`) to a node that is connected.
//!
//! Readiness ([`CommandConn::check`]) is the server's `PING` for a single Redis. For a
//! cluster it is the cluster's own verdict, `cluster_state:ok` in `CLUSTER INFO` (every slot
//! served by a reachable master), asked of any connected node: a master that stops answering
//! makes its own slots fail at once, and the whole deployment unready once the cluster has
//! declared it failed (after its `cluster-node-timeout`, unless a replica took over).

use std::time::Duration;

use ::redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use ::redis::cluster::ClusterClient;
use ::redis::cluster_async::ClusterConnection;
use ::redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use ::redis::{
    Client, Cmd, ErrorKind, FromRedisValue, Pipeline, RedisFuture, RedisResult, ServerErrorKind,
    Value,
};

use super::target::RedisTarget;

/// How often a command is retried on a lost connection or a slot move, and the pauses
/// between tries; the store's timeout bounds the whole call anyway.
const RETRIES: u32 = 2;
const RETRY_MIN: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(1);

/// A connection to a single Redis or to a Redis Cluster; cheap to clone (clones share it).
#[derive(Clone)]
pub(super) enum CommandConn {
    /// One server.
    Single(ConnectionManager),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
}

impl CommandConn {
    /// Connects to `target`, each connection attempt and each answer bounded by `timeout`.
    pub(super) async fn open(target: &RedisTarget, timeout: Duration) -> RedisResult<Self> {
        match target {
            RedisTarget::Single(node) => {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(timeout))
                    .set_response_timeout(Some(timeout))
                    .set_number_of_retries(RETRIES as usize)
                    .set_min_delay(RETRY_MIN)
                    .set_max_delay(RETRY_MAX);
                let client = Client::open(node.clone())?;
                Ok(Self::Single(
                    ConnectionManager::new_with_config(client, config).await?,
                ))
            }
            RedisTarget::Cluster(seeds) => {
                let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
                let client = ClusterClient::builder(seeds.iter().cloned())
                    .connection_timeout(timeout)
                    .response_timeout(timeout)
                    .retries(RETRIES)
                    .min_retry_wait(millis(RETRY_MIN))
                    .max_retry_wait(millis(RETRY_MAX))
                    .build()?;
                Ok(Self::Cluster(client.get_async_connection().await?))
            }
        }
    }

    /// Sends `cmd`, a command that names no key (`SCAN`), to the server that holds `key`:
    /// on a cluster the master of `key`'s hash slot, where `SCAN` walks that master's keys.
    pub(super) async fn query_beside<T: FromRedisValue>(
        &mut self,
        key: &str,
        cmd: Cmd,
    ) -> RedisResult<T> {
        match self {
            Self::Single(conn) => cmd.query_async(conn).await,
            Self::Cluster(conn) => {
                let route = Route::with_key(key, SlotAddr::Master);
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                let value = conn.route_command(cmd, routing).await?;
                Ok(::redis::from_redis_value(value)?)
            }
        }
    }

    /// Answers `Ok` when the backend serves every key: see the module documentation.
    pub(super) async fn check(&mut self) -> RedisResult<()> {
        match self {
            Self::Single(conn) => {
                ::redis::cmd("PING").query_async::<String>(conn).await?;
                Ok(())
            }
            Self::Cluster(conn) => {
                let info: String = ::redis::cmd("CLUSTER")
                    .arg("INFO")
                    .query_async(conn)
                    .await?;
                if info.lines().any(|line| line.trim() == "cluster_state:ok") {
                    Ok(())
                } else {
                    Err((
                        ErrorKind::Server(ServerErrorKind::ClusterDown),
                        "the cluster does not serve every slot",
                    )
                        .into())
                }
            }
        }
    }
}

impl ConnectionLike for CommandConn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(conn) => conn.req_packed_command(cmd),
            Self::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Self::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(conn) => conn.get_db(),
            Self::Cluster(conn) => conn.get_db(),
        }
    }
}
