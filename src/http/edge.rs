//! What every request passes once, around the whole router: its tracing span, its metrics
//! by route template, and a log line for each answer (at debug level, and at error level
//! for a server error).
//!
//! axum applies a `Router::layer` to each route separately, and each route's service is a
//! boxed service cloned (with its boxed future) for every request, once per layer: three
//! layers around every route cost a request six allocations and their indirect calls before
//! its handler ran. So the edge wraps the router once (`super::router`), and the server calls
//! it directly, with no router around it. It does the work of `tower-http`'s trace layer
//! itself, reading the clock once for the log and the metrics alike. The metrics find a
//! request's route template from its path with the same matching the router does
//! ([`RouteMetrics::route_of`]) instead of reading the router's `MatchedPath` from inside
//! each route.
//!
//! The routes outside the REST API (the WebSocket upgrade, the dashboard's pages) are not in
//! that table: they keep a layer of their own ([`observed`]) that labels them by their
//! `MatchedPath` and marks the answer ([`Observed`]) so that the edge does not count it again.
//!
//! There is deliberately no per-request deadline timer here: a timer per request woke a
//! parked runtime thread on almost every request (twice the context switches of a bare
//! server), and nothing needs it, since every store call is bounded by `store.timeout_ms` and
//! nothing else a handler awaits can block.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use pin_project_lite::pin_project;
use tower::Service;
use tracing::Span;

use crate::metrics::RouteMetrics;

/// The route label of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

/// Marks an answer whose request was already counted by its route's own layer.
#[derive(Debug, Clone, Copy)]
pub struct Observed;

/// The router inside the edge.
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    metrics: Arc<RouteMetrics>,
}

impl<S> Edge<S> {
    /// `inner`, counting requests into `metrics`, whose table must name [`UNMATCHED`].
    pub fn new(inner: S, metrics: Arc<RouteMetrics>) -> Self {
        Self { inner, metrics }
    }
}

impl<S, B> Service<axum::http::Request<B>> for Edge<S>
where
    S: Service<axum::http::Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Counted<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: axum::http::Request<B>) -> Self::Future {
        let route = self
            .metrics
            .route_of(req.uri().path())
            .or_else(|| self.metrics.named(UNMATCHED));
        let span = super::trace::request_span(&req);
        let method = req.method().clone();
        let start = Instant::now();
        let inner = span.in_scope(|| self.inner.call(req));
        Counted {
            inner,
            method,
            route,
            metrics: self.metrics.clone(),
            start,
            span,
        }
    }
}

pin_project! {
    /// A request's answer on its way; counted when it is ready.
    pub struct Counted<F> {
        #[pin]
        inner: F,
        method: Method,
        route: Option<usize>,
        metrics: Arc<RouteMetrics>,
        start: Instant,
        // Entered while the router works on the request, as its handlers' logs name it.
        span: Span,
    }
}

impl<F, E> Future for Counted<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let _entered = this.span.enter();
        let answer = ready!(this.inner.poll(cx));
        if let Ok(response) = &answer {
            let status = response.status();
            let latency = this.start.elapsed();
            let latency_ms = latency.as_secs_f64() * 1e3;
            if status.is_server_error() {
                tracing::error!(
                    status = status.as_u16(),
                    latency_ms,
                    "answered with a server error"
                );
            } else {
                tracing::debug!(status = status.as_u16(), latency_ms, "answered");
            }
            if let Some(route) = *this.route
                && response.extensions().get::<Observed>().is_none()
            {
                this.metrics.observe_at(this.method, route, status, latency);
            }
        }
        Poll::Ready(answer)
    }
}

/// The layer of a route outside the REST API: counts the request by its `MatchedPath` and
/// marks the answer [`Observed`].
pub async fn observed(
    State(metrics): State<Arc<RouteMetrics>>,
    req: Request,
    next: Next,
) -> Response {
    let route = req.extensions().get::<MatchedPath>().cloned();
    let method = req.method().clone();
    let start = Instant::now();
    let mut response = next.run(req).await;
    metrics.observe(
        &method,
        route.as_ref().map_or(UNMATCHED, MatchedPath::as_str),
        response.status(),
        start.elapsed(),
    );
    response.extensions_mut().insert(Observed);
    response
}
