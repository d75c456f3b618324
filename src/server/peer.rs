//! What a request's handlers learn of the connection it came on: the client's address and
//! the key the connection verified last ([`ConnectionKeys`]).
//!
//! Both travel in one request extension, [`ConnectInfo<Peer>`](axum::extract::ConnectInfo),
//! as axum's own connection information does: each extension is a boxed value in a map the
//! request allocates, so one value instead of two saves a request an allocation, and keeps
//! the map, which the router's own matched path and parameters join, from outgrowing its
//! first allocation.

use std::net::SocketAddr;
use std::sync::Arc;

use crate::service::studio::connection_keys::ConnectionKeys;

/// The connection a request came on.
#[derive(Clone)]
pub struct Peer {
    /// The client's address.
    pub remote: SocketAddr,
    /// The key the connection verified last, shared by its requests.
    pub keys: Arc<ConnectionKeys>,
}

impl Peer {
    /// A new connection from `remote`, which has verified no key yet.
    pub fn new(remote: SocketAddr) -> Self {
        Self {
            remote,
            keys: Arc::default(),
        }
    }
}
