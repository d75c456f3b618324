//! One HTTP/1.1 connection under the edge's rules: hyper serves it (with upgrades, for the
//! WebSocket), and it ends early when the sweeper finds it past a deadline, or, when the
//! server shuts down, as soon as no request of it is in flight.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::server::conn::http1::UpgradeableConnection;
use hyper_util::rt::TokioIo;
use pin_project_lite::pin_project;

use super::Shared;
use super::io::EdgeIo;
use super::service::{App, EdgeService};
use super::track::{DRAIN, KILL, Track};

/// hyper's connection over the watched socket.
pub(super) type Http<A> = UpgradeableConnection<TokioIo<EdgeIo>, EdgeService<A>>;

pin_project! {
    /// A connection that ends on its deadlines and on shutdown (see the module
    /// documentation). Dropping it closes the socket, unless an upgrade took it.
    pub(super) struct Guarded<A: App> {
        #[pin]
        http: Http<A>,
        track: Arc<Track>,
        shared: Arc<Shared>,
        // Keep-alive was switched off for the shutdown.
        draining: bool,
    }
}

impl<A: App> Guarded<A> {
    /// Serves `http`, whose state `track` follows.
    pub(super) fn new(http: Http<A>, track: Arc<Track>, shared: Arc<Shared>) -> Self {
        Self {
            http,
            track,
            shared,
            draining: false,
        }
    }
}

impl<A: App> Future for Guarded<A> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut this = self.project();
        let signals = this.track.take_signals(cx.waker());
        // The sweeper's verdict is checked again here, where the state changes, so that a
        // request that just arrived is not cut off on a stale reading.
        if signals & KILL != 0
            && this
                .track
                .expired(this.shared.clock.now(), &this.shared.limits.deadlines)
        {
            tracing::debug!("connection closed: past its deadline");
            return Poll::Ready(());
        }
        if signals & DRAIN != 0 && !*this.draining {
            *this.draining = true;
            this.http.as_mut().graceful_shutdown();
        }
        let done = match this.http.poll(cx) {
            Poll::Ready(Err(e)) => {
                tracing::debug!(error = %e, "connection ended");
                true
            }
            Poll::Ready(Ok(())) => true,
            // Shutting down, and no request is in flight: a half-sent head or an idle
            // kept-alive connection has nothing to wait for.
            Poll::Pending => *this.draining && this.track.between_requests(),
        };
        if !done {
            return Poll::Pending;
        }
        // The track outlives this task when the socket was upgraded.
        this.track.forget_task();
        Poll::Ready(())
    }
}
