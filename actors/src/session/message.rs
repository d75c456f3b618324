//! The messages a session sends to its socket: encoded at most once per wire format however
//! many sessions receive them, and numbered per session.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

/// A message body that writes itself in either wire format: a flat object with `type`,
/// serialised straight from its own type (no intermediate `serde_json::Value`, whose map
/// and strings an answer would allocate only to drop them).
pub trait Body: Send + Sync + fmt::Debug {
    /// The JSON encoding.
    fn to_json(&self) -> Box<str>;
    /// The MessagePack encoding: a map with field names, and human-readable values (ids
    /// and times as strings, as in JSON).
    fn to_msgpack(&self) -> Box<[u8]>;
}

impl<T: Serialize + Send + Sync + fmt::Debug> Body for T {
    fn to_json(&self) -> Box<str> {
        // The wire messages are plain structs with string keys and finite numbers, which
        // always serialise; an empty object stands in if one ever did not.
        serde_json::to_string(self)
            .unwrap_or_else(|_| "{}".to_owned())
            .into_boxed_str()
    }

    fn to_msgpack(&self) -> Box<[u8]> {
        let mut out = Vec::with_capacity(64);
        let mut ser = rmp_serde::Serializer::new(&mut out)
            .with_struct_map()
            .with_human_readable();
        match self.serialize(&mut ser) {
            Ok(()) => out.into_boxed_slice(),
            // As above: an empty map.
            Err(_) => Box::new([0x80]),
        }
    }
}

/// A server message for sockets, encoded at most once per wire format however many sessions
/// receive it (a kill-switch broadcast to 10k sockets encodes once, not 10k times). The body
/// has no `seq`: each socket splices its session's sequence number in front of the shared
/// encoding.
#[derive(Debug)]
pub struct OutboundMessage {
    body: Box<dyn Body>,
    json: OnceLock<Box<str>>,
    msgpack: OnceLock<Box<[u8]>>,
}

impl OutboundMessage {
    /// Wraps a message body (a flat object with `type`).
    pub fn new(body: impl Body + 'static) -> Outbound {
        Arc::new(Self {
            body: Box::new(body),
            json: OnceLock::new(),
            msgpack: OnceLock::new(),
        })
    }

    /// The JSON encoding, made on first use and shared afterwards.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| self.body.to_json())
    }

    /// The MessagePack encoding, made on first use and shared afterwards.
    pub fn msgpack(&self) -> &[u8] {
        self.msgpack.get_or_init(|| self.body.to_msgpack())
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
