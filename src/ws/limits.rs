//! The sockets one client may hold at once: at most `websocket.max_sockets_per_address` from
//! one client address, and at most `websocket.max_sockets_per_key` with one SDK key, so no
//! single client, and no single game's key, can take every connection of the node.
//!
//! Each socket takes its place before the upgrade, as a [`SocketPlace`] that the socket's
//! task holds until it ends: dropping it (the socket closed, or the upgrade never happened)
//! gives the place back. A count lives in a `DashMap` entry, checked and raised under that
//! entry's shard lock, and an entry that falls to zero is removed, so the counts are exact
//! however many upgrades race, and the maps hold only the addresses and keys with a socket
//! open. Only the upgrade pays for this; nothing on a socket's messages or on the offer path
//! reads it.
//!
//! An IPv6 client counts by its /64, the block a single subscriber is given, so that one
//! client cannot take a new address for every socket; an IPv4 address mapped into IPv6
//! counts as the IPv4 address.

use std::hash::Hash;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::Arc;

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use uuid::Uuid;

use crate::config::WebSocketSettings;
use crate::error::ApiError;
use crate::metrics::{Connections, Refusal};

/// The open sockets of this node, by client address and by SDK key.
#[derive(Default)]
pub struct SocketCounts {
    by_address: DashMap<IpAddr, usize>,
    by_key: DashMap<Uuid, usize>,
}

/// A socket's place under both limits, given back when dropped.
pub struct SocketPlace {
    counts: Arc<SocketCounts>,
    address: IpAddr,
    key: Uuid,
}

impl SocketCounts {
    /// Takes a place for a socket from `address` with the SDK key `key_id`; past a limit of
    /// `settings` (the address's is checked first), counts the refusal in `connections` and
    /// answers the 429 `too_many_connections` that names it.
    pub fn take(
        self: &Arc<Self>,
        address: IpAddr,
        key_id: Uuid,
        settings: &WebSocketSettings,
        connections: &Connections,
    ) -> Result<SocketPlace, ApiError> {
        let address = counted_address(address);
        let limit = settings.max_sockets_per_address;
        if !raise(&self.by_address, address, limit) {
            connections.refused(Refusal::PerAddress);
            return Err(ApiError::TooManySockets {
                scope: "address",
                limit,
            });
        }
        let limit = settings.max_sockets_per_key;
        if !raise(&self.by_key, key_id, limit) {
            lower(&self.by_address, address);
            connections.refused(Refusal::PerKey);
            return Err(ApiError::TooManySockets {
                scope: "key",
                limit,
            });
        }
        Ok(SocketPlace {
            counts: self.clone(),
            address,
            key: key_id,
        })
    }
}

impl Drop for SocketPlace {
    fn drop(&mut self) {
        lower(&self.counts.by_key, self.key);
        lower(&self.counts.by_address, self.address);
    }
}

/// Adds one to `key`'s count if it is below `limit`; whether it did.
fn raise<K: Eq + Hash>(counts: &DashMap<K, usize>, key: K, limit: usize) -> bool {
    let mut count = counts.entry(key).or_insert(0);
    // The limits are positive (checked with the settings), so an entry refused here holds
    // at least one socket: none is left behind at zero.
    if *count >= limit {
        return false;
    }
    *count += 1;
    true
}

/// Takes one from `key`'s count, and forgets the key at zero.
fn lower<K: Eq + Hash>(counts: &DashMap<K, usize>, key: K) {
    if let Entry::Occupied(mut count) = counts.entry(key) {
        *count.get_mut() = count.get().saturating_sub(1);
        if *count.get() == 0 {
            count.remove();
        }
    }
}

/// The address a client counts as: an IPv6 address's /64, an IPv4 one as it is.
fn counted_address(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = v6.to_bits() & !u128::from(u64::MAX);
                IpAddr::V6(Ipv6Addr::from_bits(prefix))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::counted_address;

    #[test]
    fn an_ipv6_client_counts_by_its_64_and_a_mapped_ipv4_as_ipv4() {
        let parse = |s: &str| s.parse::<IpAddr>().expect("address");
        assert_eq!(
            counted_address(parse("2001:db8:1:2:aaaa::1")),
            parse("2001:db8:1:2::")
        );
        assert_eq!(
            counted_address(parse("2001:db8:1:2:bbbb::7")),
            counted_address(parse("2001:db8:1:2:cccc::9"))
        );
        assert_ne!(
            counted_address(parse("2001:db8:1:2::1")),
            counted_address(parse("2001:db8:1:3::1"))
        );
        assert_eq!(counted_address(parse("::ffff:10.0.0.1")), parse("10.0.0.1"));
        assert_eq!(counted_address(parse("10.0.0.1")), parse("10.0.0.1"));
    }
}
