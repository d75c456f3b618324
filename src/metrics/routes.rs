//! Per-route metric handles, resolved once per route, method and status instead of once per
//! request.
//!
//! A labelled Prometheus metric looked up by its label values hashes every value and takes
//! the family's lock on each request; at tens of thousands of requests a second that was a
//! visible share of a request's work. The table here is built when the router is: one entry
//! per known route template, each with a slot per common method, each slot holding its
//! histogram and its counters by common status, resolved on first use (so `/metrics` lists
//! exactly the series that were observed, as before). Anything outside the table (a route
//! added beside the documented ones, an unusual method or status) takes the labelled lookup.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use axum::http::{Method, StatusCode};
use prometheus::{Histogram, HistogramVec, IntCounter, IntCounterVec};

/// The methods with a slot in the table.
const METHODS: [Method; 5] = [
    Method::GET,
    Method::POST,
    Method::PUT,
    Method::PATCH,
    Method::DELETE,
];

/// The statuses with a cached counter; others take the labelled lookup.
const STATUSES: [u16; 18] = [
    200, 201, 202, 204, 304, 400, 401, 403, 404, 405, 409, 410, 413, 415, 422, 429, 500, 503,
];

/// One route and method's handles, each resolved on first use.
#[derive(Default)]
struct Slot {
    latency: OnceLock<Histogram>,
    requests: [OnceLock<IntCounter>; STATUSES.len()],
}

/// The request metrics of every known route, read without locks.
pub struct RouteMetrics {
    routes: HashMap<String, [Slot; METHODS.len()]>,
    requests: IntCounterVec,
    latency: HistogramVec,
}

impl RouteMetrics {
    /// A table of `routes` (route templates, as axum matches them) over the two families.
    pub(super) fn new(
        routes: impl IntoIterator<Item = String>,
        requests: IntCounterVec,
        latency: HistogramVec,
    ) -> Self {
        Self {
            routes: routes
                .into_iter()
                .map(|route| (route, Default::default()))
                .collect(),
            requests,
            latency,
        }
    }

    /// Records one request by its route template (never the raw path, which would explode
    /// the label space).
    pub fn observe(&self, method: &Method, route: &str, status: StatusCode, elapsed: Duration) {
        let labels = [method.as_str(), route];
        let slot = METHODS
            .iter()
            .position(|m| m == method)
            .and_then(|m| self.routes.get(route).map(|slots| &slots[m]));
        let Some(slot) = slot else {
            self.latency
                .with_label_values(&labels)
                .observe(elapsed.as_secs_f64());
            self.requests
                .with_label_values(&[labels[0], labels[1], status.as_str()])
                .inc();
            return;
        };
        slot.latency
            .get_or_init(|| self.latency.with_label_values(&labels))
            .observe(elapsed.as_secs_f64());
        let counter = |s| self.requests.with_label_values(&[labels[0], labels[1], s]);
        match STATUSES.iter().position(|s| *s == status.as_u16()) {
            Some(i) => slot.requests[i]
                .get_or_init(|| counter(status.as_str()))
                .inc(),
            None => counter(status.as_str()).inc(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    fn observe_all(routes: &RouteMetrics) {
        let ms = Duration::from_millis(1);
        routes.observe(&Method::POST, "/v1/a", StatusCode::OK, ms);
        routes.observe(&Method::POST, "/v1/a", StatusCode::OK, ms);
        routes.observe(&Method::POST, "/v1/a", StatusCode::IM_A_TEAPOT, ms);
        routes.observe(&Method::OPTIONS, "/v1/a", StatusCode::OK, ms);
        routes.observe(&Method::GET, "/v1/b", StatusCode::NOT_FOUND, ms);
    }

    #[test]
    fn cached_and_uncached_paths_count_alike() {
        let metrics = Metrics::new().expect("metrics");
        observe_all(&metrics.routes(["/v1/a".to_owned()]));
        let text = metrics.render(3);
        for line in [
            "offer_decisions_unstored_total 3",
            r#"http_requests_total{method="POST",route="/v1/a",status="200"} 2"#,
            r#"http_requests_total{method="POST",route="/v1/a",status="418"} 1"#,
            r#"http_requests_total{method="OPTIONS",route="/v1/a",status="200"} 1"#,
            r#"http_requests_total{method="GET",route="/v1/b",status="404"} 1"#,
            r#"http_request_duration_seconds_count{method="POST",route="/v1/a"} 3"#,
        ] {
            assert!(text.contains(line), "missing {line} in\n{text}");
        }
        // Nothing is listed before it is observed.
        assert!(!text.contains(r#"method="GET",route="/v1/a""#), "{text}");
    }
}
