//! The WebSocket wire protocol as the engine speaks it: the two encodings of its messages
//! (which `offer_wire::socket` declares) and their framing.
//!
//! Every message is one flat object with `type`. `svc.v1.json` carries it as JSON in text
//! frames; `svc.v1.msgpack` as a MessagePack map with field names (never positional arrays)
//! in binary frames. A server message body is encoded once per format however many sockets
//! receive it ([`OutboundMessage`]); each socket then splices its session's `seq` in front
//! of the shared bytes ([`Format::frame`]), which costs a copy, not a serialisation.

use std::cell::RefCell;

use axum::extract::ws::{Message, Utf8Bytes};
use bytes::{BufMut, BytesMut};
use offer_actors::{Outbound, OutboundMessage};
use serde::Deserialize;

use offer_wire::socket::client::MAX_MESSAGE_DEPTH;
use offer_wire::socket::{ClientMessage, JSON_PROTOCOL, MSGPACK_PROTOCOL, ServerMessage};

/// What a JSON frame starts with, before its `seq`.
const SEQ_FIELD: &str = "{\"seq\":";

/// The wire format of one socket, chosen from `Sec-WebSocket-Protocol` (a client must offer
/// one of the two subprotocols).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text frames of JSON.
    Json,
    /// Binary frames of MessagePack maps.
    MsgPack,
}

impl Format {
    /// The format of a subprotocol name, `None` for a name the server does not speak.
    pub fn from_protocol(name: &str) -> Option<Self> {
        match name {
            JSON_PROTOCOL => Some(Self::Json),
            MSGPACK_PROTOCOL => Some(Self::MsgPack),
            _ => None,
        }
    }

    /// The subprotocol name of this format.
    pub fn protocol(self) -> &'static str {
        match self {
            Self::Json => JSON_PROTOCOL,
            Self::MsgPack => MSGPACK_PROTOCOL,
        }
    }

    /// The frame of `msg` with sequence number `seq`, reusing the message's shared
    /// encoding (made by the first socket of this format that writes it).
    ///
    /// The frame's bytes are cut from the worker thread's frame buffer rather
    /// than a fresh allocation.
    pub fn frame(self, seq: u64, msg: &OutboundMessage) -> Message {
        FRAMES.with_borrow_mut(|buf| match self {
            Self::Json => {
                json_frame(buf, seq, msg.json());
                let bytes = buf.split().freeze();
                // Always UTF-8 (ASCII digits and punctuation spliced into a JSON text).
                Message::Text(Utf8Bytes::try_from(bytes).unwrap_or_else(|_| "{}".into()))
            }
            Self::MsgPack => {
                splice_seq(buf, seq, msg.msgpack());
                Message::Binary(buf.split().freeze())
            }
        })
    }

    /// Decodes a client frame of this socket's format; `None` for a frame of the other
    /// kind (text on a MessagePack socket, binary on a JSON socket).
    pub fn decode(self, frame: &Message) -> Option<Result<ClientMessage, String>> {
        match (self, frame) {
            (Self::Json, Message::Text(text)) => Some(super::client_json::decode(text.as_str())),
            (Self::MsgPack, Message::Binary(bytes)) => {
                let mut de = rmp_serde::Deserializer::from_read_ref(bytes.as_ref());
                // The counter stops one short of its setting, like the JSON reader's.
                de.set_max_depth(MAX_MESSAGE_DEPTH + 1);
                Some(ClientMessage::deserialize(&mut de).map_err(|e| e.to_string()))
            }
            _ => None,
        }
    }
}

thread_local! {
    /// The buffer socket frames of this worker thread are cut from. A frame leaves it as
    /// shared bytes that the socket copies into its write buffer and drops at once, so the
    /// buffer is soon unshared again and its space reused: a broadcast to thousands of
    /// sockets allocates per thread, not per socket, and an idle socket holds no buffer of
    /// its own.
    static FRAMES: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// The least the frame buffer grows by, so that most frames fit in what is left of it and
/// only about one in ten (of a kilobyte) finds it full and takes it back from the start.
const FRAME_BUFFER: usize = 16 * 1024;

/// Makes room in `buf` for a frame of `len` bytes.
fn reserve_frame(buf: &mut BytesMut, len: usize) {
    if buf.capacity() < len {
        buf.reserve(len.max(FRAME_BUFFER));
    }
}

/// The longest `{"seq":<u64>,`.
const JSON_HEAD: usize = SEQ_FIELD.len() + 20 + 1;

/// Writes into `buf` an encoded JSON object with `"seq":<seq>` prepended.
fn json_frame(buf: &mut BytesMut, seq: u64, body: &str) {
    // `body` is a JSON object: `{` then its fields, or `{}`.
    let rest = body.get(1..).unwrap_or("}");
    let mut head = [0u8; JSON_HEAD];
    head[..SEQ_FIELD.len()].copy_from_slice(SEQ_FIELD.as_bytes());
    let mut end = SEQ_FIELD.len() + put_decimal(&mut head[SEQ_FIELD.len()..], seq);
    if rest != "}" {
        head[end] = b',';
        end += 1;
    }
    reserve_frame(buf, end + rest.len());
    buf.extend_from_slice(&head[..end]);
    buf.extend_from_slice(rest.as_bytes());
}

/// Writes `n` in decimal at the start of `out` (at least 20 bytes) and returns its length.
/// Every socket writes its own `seq` into each frame of a broadcast, and the formatting
/// machinery cost more than the rest of the frame's splice.
fn put_decimal(out: &mut [u8], mut n: u64) -> usize {
    let len = n.checked_ilog10().map_or(1, |d| d as usize + 1);
    for place in out[..len].iter_mut().rev() {
        // A remainder of 10 is below 10: one ASCII digit.
        #[allow(clippy::cast_possible_truncation)]
        let digit = (n % 10) as u8;
        *place = b'0' + digit;
        n /= 10;
    }
    len
}

/// The MessagePack `seq` key (a 3-character string) and its value (a `u64`): 4 and 9 bytes.
const SEQ_KEY_AND_VALUE: usize = 4 + 9;

/// Writes into `buf` an encoded MessagePack map with a `seq` entry prepended: the map's
/// length grows by one and the entry goes in front of the shared fields.
fn splice_seq(buf: &mut BytesMut, seq: u64, body: &[u8]) {
    let (len, fields) = match body.split_first() {
        Some((&b, rest)) if b & 0xf0 == 0x80 => (u32::from(b & 0x0f), rest),
        Some((0xde, rest)) if rest.len() >= 2 => (
            u32::from(u16::from_be_bytes([rest[0], rest[1]])),
            &rest[2..],
        ),
        Some((0xdf, rest)) if rest.len() >= 4 => (
            u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]),
            &rest[4..],
        ),
        // Not a map: never produced by the encoder; send the seq alone.
        _ => (0, &[][..]),
    };
    let n = len + 1;
    let head = match n {
        0..16 => 1,
        16..=0xffff => 3,
        _ => 5,
    };
    reserve_frame(buf, head + SEQ_KEY_AND_VALUE + fields.len());
    if n < 16 {
        // n < 16, so it fits the fixmap's four bits.
        #[allow(clippy::cast_possible_truncation)]
        buf.put_u8(0x80 | n as u8);
    } else if let Ok(n16) = u16::try_from(n) {
        buf.put_u8(0xde);
        buf.put_u16(n16);
    } else {
        buf.put_u8(0xdf);
        buf.put_u32(n);
    }
    buf.extend_from_slice(&[0xa3, b's', b'e', b'q']);
    buf.put_u8(0xcf);
    buf.put_u64(seq);
    buf.extend_from_slice(fields);
}

/// A server message made ready to send: encoded once per format, whatever the number of
/// sockets that write it.
pub trait ToOutbound {
    /// The shareable, encode-once form.
    fn outbound(self) -> Outbound;
}

impl ToOutbound for ServerMessage {
    fn outbound(self) -> Outbound {
        OutboundMessage::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use offer_actors::Body;
    use uuid::Uuid;

    #[test]
    fn msgpack_seq_is_spliced_into_the_map() {
        let msg = ServerMessage::Balance {
            currency_id: "gems".into(),
            balance: 5,
        }
        .outbound();
        let Message::Binary(bytes) = Format::MsgPack.frame(7, &msg) else {
            panic!("binary frame expected");
        };
        let v: serde_json::Value = rmp_serde::from_slice(&bytes).expect("decodes");
        assert_eq!(
            v,
            serde_json::json!({"seq": 7, "type": "balance", "currency_id": "gems", "balance": 5})
        );
        let Message::Text(text) = Format::Json.frame(7, &msg) else {
            panic!("text frame expected");
        };
        let j: serde_json::Value = serde_json::from_str(text.as_str()).expect("json");
        assert_eq!(j, v);
    }

    #[test]
    fn both_formats_refuse_the_same_nesting() {
        for (levels, accepted) in [(MAX_MESSAGE_DEPTH, true), (MAX_MESSAGE_DEPTH + 1, false)] {
            // The message and its `attributes` are two of the levels.
            let value =
                (0..levels - 2).fold(serde_json::json!(1), |inner, _| serde_json::json!([inner]));
            let hello = ClientMessage::Hello {
                session_id: Uuid::nil(),
                player_id: "p".into(),
                attributes: [("a".to_owned(), value)].into_iter().collect(),
                resume_from: None,
                epoch: None,
                player_token: None,
            };
            let text = Message::Text(serde_json::to_string(&hello).expect("json").into());
            let binary = Message::Binary(rmp_serde::to_vec_named(&hello).expect("encodes").into());
            for (format, frame) in [(Format::Json, text), (Format::MsgPack, binary)] {
                let decoded = format.decode(&frame).expect("the socket's frame kind");
                assert_eq!(decoded.is_ok(), accepted, "{format:?}, {levels} levels");
            }
        }
    }

    #[test]
    fn frames_carry_the_seq_and_the_shared_fields() {
        let mut buf = BytesMut::new();
        for seq in [0, 1, 9, 10, 99, 100, 123_456_789, u64::MAX] {
            for body in ["{}", r#"{"type":"kill_switch","level":2}"#] {
                json_frame(&mut buf, seq, body);
                let text = buf.split();
                let v: serde_json::Value = serde_json::from_slice(&text).expect("json");
                assert_eq!(v["seq"], serde_json::json!(seq));
                let fields = v.as_object().map_or(0, serde_json::Map::len);
                assert_eq!(fields, if body == "{}" { 1 } else { 3 });
            }
            for fields in [0, 3, 20] {
                let map = (0..fields)
                    .map(|i| (format!("k{i}"), serde_json::json!(i)))
                    .collect();
                let body = Body::to_msgpack(&serde_json::Value::Object(map));
                splice_seq(&mut buf, seq, &body);
                let bytes = buf.split();
                let v: serde_json::Value = rmp_serde::from_slice(&bytes).expect("decodes");
                assert_eq!(v["seq"], serde_json::json!(seq));
                assert_eq!(v.as_object().map(serde_json::Map::len), Some(fields + 1));
            }
        }
    }

    #[test]
    fn both_formats_carry_the_same_fields_ids_and_times_as_text() {
        let messages = [
            ServerMessage::KillSwitch {
                level: offer_domain::kill_level::KillLevel::OffersOff,
                reason: "maintenance".into(),
                updated_at: chrono::Utc::now(),
            },
            ServerMessage::error("bad_message", "send hello first"),
        ];
        for message in messages {
            let msg = message.outbound();
            let Message::Text(text) = Format::Json.frame(7, &msg) else {
                panic!("text frame expected");
            };
            let Message::Binary(bytes) = Format::MsgPack.frame(7, &msg) else {
                panic!("binary frame expected");
            };
            let from_json: serde_json::Value = serde_json::from_str(text.as_str()).expect("json");
            let from_msgpack: serde_json::Value = rmp_serde::from_slice(&bytes).expect("decodes");
            assert_eq!(from_json, from_msgpack);
            assert_eq!(from_json["seq"], serde_json::json!(7));
        }
    }

    #[test]
    fn frames_dropped_once_written_leave_their_buffer_for_reuse() {
        let msg = OutboundMessage::new(serde_json::json!({"type": "kill_switch", "level": 2}));
        let Message::Text(first) = Format::Json.frame(1, &msg) else {
            panic!("text frame expected");
        };
        let at = first.as_str().as_ptr();
        drop(first);
        // The frames that follow fill the rest of the buffer, then start again at its
        // beginning: the same bytes, not a new allocation.
        let reused = (2..=FRAME_BUFFER as u64).any(|seq| {
            let Message::Text(text) = Format::Json.frame(seq, &msg) else {
                panic!("text frame expected");
            };
            assert!(text.as_str().starts_with(&format!("{{\"seq\":{seq},")));
            text.as_str().as_ptr() == at
        });
        assert!(reused, "a frame was made in the first one's place");
    }

    #[test]
    fn large_maps_grow_their_header() {
        let mut map = serde_json::Map::new();
        for i in 0..20 {
            map.insert(format!("k{i}"), serde_json::json!(i));
        }
        let msg = OutboundMessage::new(serde_json::Value::Object(map));
        let Message::Binary(bytes) = Format::MsgPack.frame(u64::MAX, &msg) else {
            panic!("binary frame expected");
        };
        let v: serde_json::Value = rmp_serde::from_slice(&bytes).expect("decodes");
        assert_eq!(v["seq"], serde_json::json!(u64::MAX));
        assert_eq!(v.as_object().map(serde_json::Map::len), Some(21));
    }
}
