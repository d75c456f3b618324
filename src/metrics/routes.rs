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
//!
//! The table also finds a request's route template from its path ([`RouteMetrics::route_of`],
//! the same matching the router does), so the edge can label a request without a layer
//! around every route.

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
    /// Each known route: its template and its slots.
    slots: Vec<(String, [Slot; METHODS.len()])>,
    /// Each template's place in `slots`.
    routes: HashMap<String, usize>,
    /// The places of the templates that are paths (`/...`), by the paths they match.
    matcher: matchit::Router<usize>,
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
        let mut slots: Vec<(String, [Slot; METHODS.len()])> = Vec::new();
        let mut index = HashMap::new();
        let mut matcher = matchit::Router::new();
        for route in routes {
            if index.contains_key(&route) {
                continue;
            }
            let at = slots.len();
            // The templates come from the router, which took them; one matchit refused (a
            // conflict) is still counted when named, only not found from a path.
            if route.starts_with('/')
                && let Err(e) = matcher.insert(route.as_str(), at)
            {
                tracing::warn!(%route, error = %e, "a route template is not matched for metrics");
            }
            index.insert(route.clone(), at);
            slots.push((route, Default::default()));
        }
        Self {
            slots,
            routes: index,
            matcher,
            requests,
            latency,
        }
    }

    /// The known route `path` matches, if any: its place, for [`RouteMetrics::observe_at`].
    pub fn route_of(&self, path: &str) -> Option<usize> {
        self.matcher.at(path).ok().map(|m| *m.value)
    }

    /// The known route named `route`, if any.
    pub fn named(&self, route: &str) -> Option<usize> {
        self.routes.get(route).copied()
    }

    /// Records one request by its route template (never the raw path, which would explode
    /// the label space).
    pub fn observe(&self, method: &Method, route: &str, status: StatusCode, elapsed: Duration) {
        match self.named(route) {
            Some(at) => self.observe_at(method, at, status, elapsed),
            None => self.observe_labelled(method, route, status, elapsed),
        }
    }

    /// Records one request of the known route at place `at` ([`RouteMetrics::route_of`],
    /// [`RouteMetrics::named`]); a place out of range records nothing.
    pub fn observe_at(&self, method: &Method, at: usize, status: StatusCode, elapsed: Duration) {
        let Some((route, slots)) = self.slots.get(at) else {
            return;
        };
        let Some(slot) = METHODS.iter().position(|m| m == method).map(|m| &slots[m]) else {
            self.observe_labelled(method, route, status, elapsed);
            return;
        };
        let labels = [method.as_str(), route.as_str()];
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

    /// Records one request through the labelled lookup.
    fn observe_labelled(
        &self,
        method: &Method,
        route: &str,
        status: StatusCode,
        elapsed: Duration,
    ) {
        self.latency
            .with_label_values(&[method.as_str(), route])
            .observe(elapsed.as_secs_f64());
        self.requests
            .with_label_values(&[method.as_str(), route, status.as_str()])
            .inc();
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
    fn paths_find_their_templates() {
        let metrics = Metrics::new().expect("metrics");
        let routes = metrics.routes(
            ["/v1/games/{game_id}", "/v1/games", "unmatched"]
                .into_iter()
                .map(str::to_owned),
        );
        let template = |path| routes.route_of(path).map(|at| routes.slots[at].0.as_str());
        assert_eq!(template("/v1/games/abc"), Some("/v1/games/{game_id}"));
        assert_eq!(template("/v1/games"), Some("/v1/games"));
        assert_eq!(template("/v1/games/abc/items"), None);
        assert_eq!(template("unmatched"), None);
        assert_eq!(routes.named("unmatched"), Some(2));
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
