//! What the node's connections look like to an operator: how many are open in the general
//! pool and in the reserve, the general pool's size, and how many were refused, by reason.
//!
//! The HTTP edge reports every connection it admits (through an [`OpenConnection`] guard held
//! as long as the connection's slot) and every one it refuses; the WebSocket gateway reports
//! the sockets it refuses at the per-address and per-key limits. `/readyz` reads [`full`]
//! from here, so readiness follows the same count the edge admits by. Each series is resolved
//! once, at start: a connection costs an atomic add, no labelled lookup.
//!
//! [`full`]: Connections::full

use prometheus::{IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry};

/// Why a connection or a socket was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The general pool (`server.max_connections`) was full, and the connection was not one
    /// the reserve serves, or the reserve was full too.
    NodeFull,
    /// Its client address already held `websocket.max_sockets_per_address` sockets.
    PerAddress,
    /// Its SDK key already held `websocket.max_sockets_per_key` sockets.
    PerKey,
}

/// The connection metrics (see the module documentation).
pub struct Connections {
    open_general: IntGauge,
    open_reserve: IntGauge,
    max: IntGauge,
    refused_node_full: IntCounter,
    refused_per_address: IntCounter,
    refused_per_key: IntCounter,
}

impl Connections {
    /// Registers the series in `registry`.
    pub(super) fn register(registry: &Registry) -> Result<Self, prometheus::Error> {
        let open = IntGaugeVec::new(
            Opts::new(
                "offer_connections_open",
                "Client connections open (WebSockets included), by pool: general or reserve",
            ),
            &["pool"],
        )?;
        let max = IntGauge::new(
            "offer_connections_max",
            "Size of the general connection pool (server.max_connections as in force)",
        )?;
        let refused = IntCounterVec::new(
            Opts::new(
                "offer_connections_refused_total",
                "Connections and WebSocket upgrades refused, by reason: node_full, per_address, per_key",
            ),
            &["reason"],
        )?;
        registry.register(Box::new(open.clone()))?;
        registry.register(Box::new(max.clone()))?;
        registry.register(Box::new(refused.clone()))?;
        Ok(Self {
            open_general: open.with_label_values(&["general"]),
            open_reserve: open.with_label_values(&["reserve"]),
            max,
            refused_node_full: refused.with_label_values(&["node_full"]),
            refused_per_address: refused.with_label_values(&["per_address"]),
            refused_per_key: refused.with_label_values(&["per_key"]),
        })
    }

    /// Records the size of the general pool, once the edge knows it.
    pub fn set_max(&self, max_connections: usize) {
        self.max
            .set(i64::try_from(max_connections).unwrap_or(i64::MAX));
    }

    /// Counts a connection open in the general pool (`reserve` false) or in the reserve, until
    /// the returned guard is dropped.
    pub fn opened(&self, reserve: bool) -> OpenConnection {
        let gauge = if reserve {
            &self.open_reserve
        } else {
            &self.open_general
        };
        gauge.inc();
        OpenConnection(gauge.clone())
    }

    /// Counts one refusal.
    pub fn refused(&self, why: Refusal) {
        match why {
            Refusal::NodeFull => &self.refused_node_full,
            Refusal::PerAddress => &self.refused_per_address,
            Refusal::PerKey => &self.refused_per_key,
        }
        .inc();
    }

    /// Whether every place of the general pool is taken: the node takes no new client now
    /// (only what the reserve serves).
    pub fn full(&self) -> bool {
        let max = self.max.get();
        max > 0 && self.open_general.get() >= max
    }
}

/// One open connection, counted in its pool while this lives.
pub struct OpenConnection(IntGauge);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.dec();
    }
}
