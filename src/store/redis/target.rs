//! Where the Redis backend connects, read from `store.redis_url`: one Redis server or a Redis
//! Cluster.
//!
//! The accepted forms:
//!
//! | form | target |
//! | --- | --- |
//! | `redis://[user:password@]host:port[/db]` | one Redis server |
//! | `redis+cluster://[user:password@]host:port,host:port,...` | a Redis Cluster, through these seed nodes |
//! | `redis://host:port,redis://host:port,...` | a Redis Cluster, each seed node a full URL |
//!
//! This build has no TLS: a `rediss://` URL is refused with that reason.
//!
//! A cluster form with one seed node is still a cluster. The client learns every other node
//! from the seeds, so one reachable seed is enough to start; the bus listens on one seed node
//! at a time and moves to the next when it goes away, so a deployment lists several. A
//! Redis Cluster has only database 0: a seed naming another database is refused.

use std::fmt;

use ::redis::{ConnectionInfo, IntoConnectionInfo};

/// The scheme of the cluster form.
const CLUSTER_SCHEME: &str = "redis+cluster://";

/// A parsed `store.redis_url`.
#[derive(Debug, Clone)]
pub enum RedisTarget {
    /// One Redis server.
    Single(ConnectionInfo),
    /// A Redis Cluster, reached first through these seed nodes.
    Cluster(Vec<ConnectionInfo>),
}

impl RedisTarget {
    /// Reads one of the forms in the module documentation. The error says what is wrong
    /// without repeating the URL, which may hold a password.
    pub fn parse(url: &str) -> Result<Self, String> {
        let url = url.trim();
        if let Some(rest) = url.strip_prefix(CLUSTER_SCHEME) {
            let (credentials, hosts) = match rest.rsplit_once('@') {
                Some((credentials, hosts)) => (format!("{credentials}@"), hosts),
                None => (String::new(), rest),
            };
            let hosts = hosts.strip_suffix('/').unwrap_or(hosts);
            let seeds = hosts
                .split(',')
                .enumerate()
                .map(|(i, host)| {
                    let host = host.trim();
                    if host.is_empty() || host.contains('/') {
                        return Err(format!(
                            "seed {} of the cluster form must be host:port",
                            i + 1
                        ));
                    }
                    seed(i, &format!("redis://{credentials}{host}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Self::Cluster(seeds));
        }
        if url.contains(',') {
            let seeds = url
                .split(',')
                .enumerate()
                .map(|(i, one)| seed(i, one.trim()))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Self::Cluster(seeds));
        }
        node(url).map(Self::Single)
    }

    /// Every node the bus may listen on, in the configured order.
    pub fn nodes(&self) -> &[ConnectionInfo] {
        match self {
            Self::Single(node) => std::slice::from_ref(node),
            Self::Cluster(seeds) => seeds,
        }
    }
}

/// One node's URL: `redis://`, in the redis crate's URL syntax.
fn node(url: &str) -> Result<ConnectionInfo, String> {
    if url.starts_with("rediss") {
        return Err("this build has no TLS support: use redis:// or redis+cluster://".into());
    }
    if !url.starts_with("redis://") {
        return Err("a Redis URL must start with redis:// or redis+cluster://".into());
    }
    url.into_connection_info()
        .map_err(|err| format!("not a usable Redis URL: {err}"))
}

/// Seed node `i` (from 0) of a cluster form: a node URL on database 0.
fn seed(i: usize, url: &str) -> Result<ConnectionInfo, String> {
    let info = node(url).map_err(|err| format!("seed {}: {err}", i + 1))?;
    if info.redis_settings().db() != 0 {
        return Err(format!(
            "seed {}: a Redis Cluster has only database 0",
            i + 1
        ));
    }
    Ok(info)
}

/// `host:port` of a node, without credentials (for logs).
fn address(info: &ConnectionInfo) -> String {
    info.addr().to_string()
}

/// Names the target for logs and the start banner, never showing a password.
impl fmt::Display for RedisTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Single(node) => write!(
                f,
                "Redis at {} (database {})",
                address(node),
                node.redis_settings().db()
            ),
            Self::Cluster(seeds) => {
                let seeds: Vec<String> = seeds.iter().map(address).collect();
                write!(f, "Redis Cluster through {}", seeds.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeds(target: &RedisTarget) -> Vec<String> {
        target.nodes().iter().map(address).collect()
    }

    #[test]
    fn one_url_is_one_server() {
        let target = RedisTarget::parse("redis://127.0.0.1:6380/2").expect("parses");
        assert!(matches!(target, RedisTarget::Single(_)));
        assert_eq!(target.to_string(), "Redis at 127.0.0.1:6380 (database 2)");
    }

    #[test]
    fn the_cluster_form_lists_seeds_and_shares_credentials() {
        let target =
            RedisTarget::parse("redis+cluster://u:secret@a:7000, b:7001,c:7002/").expect("parses");
        let RedisTarget::Cluster(nodes) = &target else {
            panic!("a cluster: {target:?}");
        };
        assert_eq!(seeds(&target), ["a:7000", "b:7001", "c:7002"]);
        for node in nodes {
            assert_eq!(node.redis_settings().username(), Some("u"));
            assert_eq!(node.redis_settings().password(), Some("secret"));
        }
        assert!(!target.to_string().contains("secret"));
        let one = RedisTarget::parse("redis+cluster://a:7000").expect("parses");
        assert!(matches!(one, RedisTarget::Cluster(ref s) if s.len() == 1));
    }

    #[test]
    fn a_comma_list_of_urls_is_a_cluster() {
        let target = RedisTarget::parse("redis://a:7000,redis://b:7001/").expect("parses");
        assert!(matches!(target, RedisTarget::Cluster(_)));
        assert_eq!(seeds(&target), ["a:7000", "b:7001"]);
    }

    #[test]
    fn bad_forms_are_refused_without_echoing_the_url() {
        for (url, says) in [
            ("http://a:1", "must start with"),
            ("rediss://a:1", "no TLS"),
            ("rediss+cluster://a:1", "no TLS"),
            ("redis+cluster://", "seed 1"),
            ("redis+cluster://a:1,,b:2", "seed 2"),
            ("redis+cluster://a:1/3", "host:port"),
            ("redis://a:1,redis://b:2/4", "only database 0"),
            ("redis://a:1,b:2", "seed 2"),
            ("redis://:hunter2@a:notaport", "not a usable Redis URL"),
        ] {
            let err = RedisTarget::parse(url).expect_err(url);
            assert!(err.contains(says), "{url}: {err}");
            assert!(!err.contains("hunter2"), "{url}: {err}");
        }
    }
}
