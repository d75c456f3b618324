//! What every request passes once, around the whole router: its metrics by route template.
//!
//! axum applies a `Router::layer` to each route separately, and each route's service is a
//! boxed service cloned (with its boxed future) for every request, once per layer: three
//! layers around every route cost a request six allocations and their indirect calls before
//! its handler ran. So the tracing span, the body limit and the metrics wrap the router once
//! (`super::router`), and the metrics find a request's route template from its path with the
//! same matching the router does ([`RouteMetrics::route_of`]) instead of reading the router's
//! `MatchedPath` from inside each route.
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
use tower::{Layer, Service};

use crate::metrics::RouteMetrics;

/// The route label of a request that matched no route.
pub const UNMATCHED: &str = "unmatched";

/// Marks an answer whose request was already counted by its route's own layer.
#[derive(Debug, Clone, Copy)]
pub struct Observed;

/// The edge around the whole router.
#[derive(Clone)]
pub struct EdgeLayer {
    metrics: Arc<RouteMetrics>,
}

impl EdgeLayer {
    /// Counts requests into `metrics`, whose table must name [`UNMATCHED`].
    pub fn new(metrics: Arc<RouteMetrics>) -> Self {
        Self { metrics }
    }
}

impl<S> Layer<S> for EdgeLayer {
    type Service = Edge<S>;

    fn layer(&self, inner: S) -> Edge<S> {
        Edge {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

/// The router inside the edge.
#[derive(Clone)]
pub struct Edge<S> {
    inner: S,
    metrics: Arc<RouteMetrics>,
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
        Counted {
            method: req.method().clone(),
            route,
            metrics: self.metrics.clone(),
            start: Instant::now(),
            inner: self.inner.call(req),
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
    }
}

impl<F, E> Future for Counted<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let answer = ready!(this.inner.poll(cx));
        if let (Ok(response), Some(route)) = (&answer, *this.route)
            && response.extensions().get::<Observed>().is_none()
        {
            this.metrics
                .observe_at(this.method, route, response.status(), this.start.elapsed());
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
