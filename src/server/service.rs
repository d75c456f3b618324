//! The router as hyper calls it, per connection: each request tells the connection's
//! [`Track`] that a head arrived, its body tells when it has arrived in full, and the answer's
//! body tells when hyper has taken all of it. Handlers also find the client's address as
//! [`ConnectInfo<SocketAddr>`], and the credential extractors the key the connection
//! verified last ([`ConnectionKeys`]).

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::task::{Context, Poll, ready};

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode};
use axum::routing::future::RouteFuture;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use pin_project_lite::pin_project;

use super::Shared;
use super::track::Track;
use crate::service::studio::connection_keys::ConnectionKeys;

/// The router, serving one connection.
pub(super) struct EdgeService {
    router: Router,
    track: Arc<Track>,
    /// The key this connection verified last, handed to every request's extractors.
    keys: Arc<ConnectionKeys>,
    shared: Arc<Shared>,
    remote: SocketAddr,
}

impl EdgeService {
    /// `router` serving the connection from `remote`.
    pub(super) fn new(
        router: Router,
        track: Arc<Track>,
        shared: Arc<Shared>,
        remote: SocketAddr,
    ) -> Self {
        Self {
            router,
            track,
            keys: Arc::default(),
            shared,
            remote,
        }
    }
}

impl hyper::service::Service<Request<Incoming>> for EdgeService {
    type Response = Response<AnswerBody>;
    type Error = Infallible;
    type Future = Answering;

    fn call(&self, request: Request<Incoming>) -> Answering {
        self.track
            .on_request(self.shared.clock.now(), request.body().is_end_stream());
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(ConnectInfo(self.remote));
        parts.extensions.insert(Arc::clone(&self.keys));
        let body = RequestBody {
            inner: body,
            track: Some(self.track.clone()),
        };
        // A router is always ready: no `poll_ready` is needed before calling it.
        let answer =
            tower::Service::call(&mut self.router.clone(), Request::from_parts(parts, body));
        Answering {
            inner: answer,
            track: self.track.clone(),
        }
    }
}

pin_project! {
    /// The router's answer on its way, its body wrapped in an [`AnswerBody`].
    pub(super) struct Answering {
        #[pin]
        inner: RouteFuture<Infallible>,
        track: Arc<Track>,
    }
}

impl Future for Answering {
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
