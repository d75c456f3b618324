//! Prometheus metrics: request counts and latency histograms by route, and the node's
//! connections (open, refused), rendered at `/metrics`. Each application owns its registry,
//! so parallel test servers never mix. Requests are recorded through [`RouteMetrics`], the
//! per-route handles; connections through [`Connections`].

mod connections;
mod routes;

pub use connections::{Connections, OpenConnection, Refusal};
pub use routes::RouteMetrics;

use std::sync::{Arc, Mutex};

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, Opts, Registry, TextEncoder,
};

/// The service's metrics.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    /// Decision records the store writer's queue had no room for, brought up to the
    /// decision log's count at each scrape (under the lock, so two scrapes never add the
    /// same records twice).
    unstored: Mutex<IntCounter>,
    /// Open and refused connections, shared with the HTTP edge and the WebSocket gateway.
    connections: Arc<Connections>,
}

impl Metrics {
    /// Registers the metrics in a fresh registry.
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("http_requests_total", "HTTP requests by route and status"),
            &["method", "route", "status"],
        )?;
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "http_request_duration_seconds",
                "HTTP request latency by route",
            )
            .buckets(vec![
                0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                1.0, 2.5,
            ]),
            &["method", "route"],
        )?;
        let unstored = IntCounter::new(
            "offer_decisions_unstored_total",
            "Decision records the store writer's queue was full for: shown by their node only",
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(latency.clone()))?;
        registry.register(Box::new(unstored.clone()))?;
        let connections = Arc::new(Connections::register(&registry)?);
        Ok(Self {
            registry,
            requests,
            latency,
            unstored: Mutex::new(unstored),
            connections,
        })
    }

    /// The connection metrics, for the edge and the gateway to report to and `/readyz` to read.
    pub fn connections(&self) -> &Arc<Connections> {
        &self.connections
    }

    /// The registry, for components registering their own metrics.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Prometheus text exposition, with `unstored_decisions` the decision log's count of
    /// records that never reached the store writer's queue.
    pub fn render(&self, unstored_decisions: u64) -> String {
        {
            let counter = self
                .unstored
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let seen = counter.get();
            if unstored_decisions > seen {
                counter.inc_by(unstored_decisions - seen);
            }
        }
        let mut buf = Vec::new();
        // Encoding into a Vec cannot fail for well-formed metric families.
        if TextEncoder::new()
            .encode(&self.registry.gather(), &mut buf)
            .is_err()
        {
            return String::new();
        }
        String::from_utf8(buf).unwrap_or_default()
    }
}

impl Metrics {
    /// The per-route handles of these metrics for `routes` (route templates as axum matches
    /// them); requests on other routes are still recorded, by a labelled lookup.
    pub fn routes(&self, routes: impl IntoIterator<Item = String>) -> RouteMetrics {
        RouteMetrics::new(routes, self.requests.clone(), self.latency.clone())
    }
}
