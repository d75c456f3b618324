//! The messages a session sends to its socket: encoded at most once per wire format however
//! many sessions receive them, and numbered per session.

use std::sync::{Arc, OnceLock};

/// A server message for sockets, encoded at most once per wire format however many sessions
/// receive it (a kill-switch broadcast to 10k sockets encodes once, not 10k times). The body
/// has no `seq`: each socket splices its session's sequence number in front of the shared
/// encoding.
#[derive(Debug)]
pub struct OutboundMessage {
    body: serde_json::Value,
    json: OnceLock<Box<str>>,
    msgpack: OnceLock<Box<[u8]>>,
}

impl OutboundMessage {
    /// Wraps a message body (a flat object with `type`).
    pub fn new(body: serde_json::Value) -> Outbound {
        Arc::new(Self {
            body,
            json: OnceLock::new(),
            msgpack: OnceLock::new(),
        })
    }

    /// The JSON encoding, made by `encode` on first use and shared afterwards.
    pub fn json(&self, encode: impl FnOnce(&serde_json::Value) -> Box<str>) -> &str {
        self.json.get_or_init(|| encode(&self.body))
    }

    /// The MessagePack encoding, made by `encode` on first use and shared afterwards.
    pub fn msgpack(&self, encode: impl FnOnce(&serde_json::Value) -> Box<[u8]>) -> &[u8] {
        self.msgpack.get_or_init(|| encode(&self.body))
    }
}

/// A message for the session's socket, shared by every recipient.
pub type Outbound = Arc<OutboundMessage>;

/// A message with the sequence number its session gave it.
#[derive(Debug, Clone)]
pub struct Sequenced {
    /// Increases by one per server message of the session, across reconnects.
    pub seq: u64,
    /// The message.
    pub msg: Outbound,
}
