//! The SDK WebSocket protocol's messages, both ways: what a client sends ([`client`]) and
//! what the engine pushes ([`server`]), with the bounds the engine holds them to.
//!
//! Every message is one flat object tagged by `type` (snake_case), the same in both
//! encodings (`svc.v1.json` text frames, `svc.v1.msgpack` maps with field names). Each
//! message is declared once, here, and read by each side the way the protocol asks of it:
//! the engine reads client messages strictly (an unknown field or type is a `bad_message`),
//! a client reads server messages tolerantly (unknown fields are ignored and an unknown
//! type becomes [`ServerMessage::Unknown`]), so either side may be the newer one. How the
//! engine frames and encodes them (the `seq` it splices into each frame) is its own
//! business; a client reads a frame as [`Numbered`].

pub mod client;
pub mod server;

pub use client::{ClientMessage, TriggerContext};
pub use server::{InventoryItem, Numbered, ServerMessage};

/// The JSON subprotocol: text frames of JSON.
pub const JSON_PROTOCOL: &str = "svc.v1.json";
/// The MessagePack subprotocol: binary frames of MessagePack maps with field names.
pub const MSGPACK_PROTOCOL: &str = "svc.v1.msgpack";
