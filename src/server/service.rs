//! The application as hyper calls it, per connection: each request tells the connection's
//! [`Track`] that a head arrived, its body tells when it has arrived in full, and the answer's
//! body tells when hyper has taken all of it. Handlers also find the connection as
//! [`ConnectInfo<Peer>`]: the client's address and the key the connection verified last.
//!
//! The application is called as it is, whatever its type ([`App`]), rather than through a
//! router around it: an outer router would clone a boxed service and box its future for
//! every request before the application's own router ran.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::task::{Context, Poll, ready};

use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode};
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use pin_project_lite::pin_project;

use super::Shared;
use super::peer::Peer;
use super::track::Track;

/// What a server serves: any service that answers every request (an axum router, with
/// layers around it or not). It is cloned per request, as hyper calls it through a shared
/// reference, so a clone must be cheap.
pub trait App: Clone + Send + Sync + 'static {
    /// An answer on its way.
    type Answer: Future<Output = Result<Response<axum::body::Body>, Infallible>> + Send + 'static;

    /// Starts answering `request`. An application is always ready: no readiness is awaited
    /// before calling it.
    fn answer(&mut self, request: Request<axum::body::Body>) -> Self::Answer;
}

impl<S> App for S
where
    S: tower::Service<
            Request<axum::body::Body>,
            Response = Response<axum::body::Body>,
            Error = Infallible,
        > + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    type Answer = S::Future;

    fn answer(&mut self, request: Request<axum::body::Body>) -> S::Future {
        self.call(request)
    }
}

/// The application, serving one connection.
pub(super) struct EdgeService<A> {
    app: A,
    track: Arc<Track>,
    /// The connection as its requests' handlers see it.
    peer: Peer,
    shared: Arc<Shared>,
}

impl<A> EdgeService<A> {
    /// `app` serving the connection from `remote`.
    pub(super) fn new(app: A, track: Arc<Track>, shared: Arc<Shared>, remote: SocketAddr) -> Self {
        Self {
            app,
            track,
            peer: Peer::new(remote),
            shared,
        }
    }
}

impl<A: App> hyper::service::Service<Request<Incoming>> for EdgeService<A> {
    type Response = Response<AnswerBody>;
    type Error = Infallible;
    type Future = Answering<A::Answer>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        self.track
            .on_request(self.shared.clock.now(), request.body().is_end_stream());
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(ConnectInfo(self.peer.clone()));
        let body = axum::body::Body::new(RequestBody {
            inner: body,
            track: Some(self.track.clone()),
        });
        let answer = self.app.clone().answer(Request::from_parts(parts, body));
        Answering {
            inner: answer,
            track: self.track.clone(),
        }
    }
}

pin_project! {
    /// The application's answer on its way, its body wrapped in an [`AnswerBody`].
    pub(super) struct Answering<F> {
        #[pin]
        inner: F,
        track: Arc<Track>,
    }
}

impl<F> Future for Answering<F>
where
    F: Future<Output = Result<Response<axum::body::Body>, Infallible>>,
{
    type Output = Result<Response<AnswerBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(response) = ready!(this.inner.poll(cx));
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            this.track.on_upgrade();
        }
        let track = this.track.clone();
        Poll::Ready(Ok(response.map(|inner| AnswerBody {
            inner,
            track,
            reported: AtomicBool::new(false),
        })))
    }
}

/// A request body that tells its connection when it has arrived in full, or when the router
/// let go of it.
pub(super) struct RequestBody {
    inner: Incoming,
    /// Until the end is reported.
    track: Option<Arc<Track>>,
}

impl RequestBody {
    fn ended(&mut self) {
        if let Some(track) = self.track.take() {
            track.on_request_body_end();
        }
    }
}

impl Body for RequestBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if !matches!(frame, Some(Ok(_))) || self.inner.is_end_stream() {
            self.ended();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for RequestBody {
    fn drop(&mut self) {
        self.ended();
    }
}

/// An answer's body that tells its connection when hyper has taken all of it: at its end,
/// or when hyper lets go of it (an answer to `HEAD`, or one without a body). It tells once:
/// a late report would end the next request's answer early.
pub(super) struct AnswerBody {
    inner: axum::body::Body,
    track: Arc<Track>,
    reported: AtomicBool,
}

impl AnswerBody {
    fn ended(&self) {
        if !self.reported.swap(true, Relaxed) {
            self.track.on_answer_end();
        }
    }
}

impl Body for AnswerBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let frame = ready!(Pin::new(&mut self.inner).poll_frame(cx));
        if frame.is_none() || self.inner.is_end_stream() {
            self.ended();
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        let end = self.inner.is_end_stream();
        if end {
            self.ended();
        }
        end
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for AnswerBody {
    fn drop(&mut self) {
        self.ended();
    }
}
