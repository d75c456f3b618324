//! Reading a client's JSON text frame without buffering it first.
//!
//! [`ClientMessage`] is an internally tagged enum: serde reads a whole message into a
//! buffer of its own before it knows the `type`, then reads the variant from that buffer, and
//! the event inside an `event` message (itself tagged) is buffered once more. On the wallet
//! path that was about a seventh of the engine's instructions per operation.
//!
//! Every client the engine ships writes a message compactly with `type` first, so the two
//! messages a game sends most, `{"type":"event","event":E}` and
//! `{"type":"offer_request","trigger_context":T}`, start with a known text and hold one value
//! after it. [`decode`] reads that value directly when the text is exactly that prefix, one
//! value and the closing brace, which is what the tagged enum would accept and return for
//! it. Anything else (another order, spaces, another type, a value that does not read, a
//! message nested near the depth limit) goes through the tagged enum as before, so its
//! answer and its error are unchanged.

use serde::de::DeserializeOwned;

use offer_wire::event::SdkEvent;
use offer_wire::socket::client::MAX_MESSAGE_DEPTH;
use offer_wire::socket::{ClientMessage, TriggerContext};

/// The start of an `event` message as the clients write it.
const EVENT: &str = r#"{"type":"event","event":"#;

/// The start of an `offer_request` message as the clients write it.
const OFFER_REQUEST: &str = r#"{"type":"offer_request","trigger_context":"#;

/// The client message of a JSON text, or the reader's error.
pub fn decode(text: &str) -> Result<ClientMessage, String> {
    let direct = if let Some(rest) = text.strip_prefix(EVENT) {
        only_value::<SdkEvent>(rest).map(|event| ClientMessage::Event { event })
    } else if let Some(rest) = text.strip_prefix(OFFER_REQUEST) {
        only_value::<TriggerContext>(rest)
            .map(|trigger_context| ClientMessage::OfferRequest { trigger_context })
    } else {
        None
    };
    match direct {
        Some(message) => Ok(message),
        None => serde_json::from_str::<ClientMessage>(text).map_err(|e| e.to_string()),
    }
}

/// The value `rest` starts with, when it is followed by exactly the closing brace of its
/// message; `None` for anything else, and for a value whose nesting might reach the reader's
/// depth limit counted from the message rather than from the value (any bracket counts, so
/// this never lets through what the whole message's reader would refuse).
fn only_value<T: DeserializeOwned>(rest: &str) -> Option<T> {
    let brackets = rest.bytes().filter(|b| matches!(b, b'{' | b'[')).count();
    if brackets >= MAX_MESSAGE_DEPTH {
        return None;
    }
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<T>();
    let value = values.next()?.ok()?;
    (rest.get(values.byte_offset()..) == Some("}")).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both readers agree on `text`: the same message, or both an error (the direct one's
    /// error is the tagged enum's by construction).
    fn agree(text: &str) {
        let tagged = serde_json::from_str::<ClientMessage>(text).map_err(|e| e.to_string());
        assert_eq!(decode(text), tagged, "{text}");
    }

    #[test]
    fn the_direct_reading_returns_what_the_tagged_enum_returns() {
        // Arrays nested inside the trigger context (which takes fields it does not know)
        // up to and past the reader's depth limit.
        let deep: Vec<String> = (MAX_MESSAGE_DEPTH - 4..=MAX_MESSAGE_DEPTH)
            .map(|n| {
                format!(
                    r#"{{"type":"offer_request","trigger_context":{{"event_type":"a","x":{}1{}}}}}"#,
                    "[".repeat(n),
                    "]".repeat(n)
                )
            })
            .collect();
        for text in [
            r#"{"type":"event","event":{"type":"currency_earned","currency_id":"gems","amount":1,"tx_id":"t-1"}}"#,
            r#"{"type":"event","event":{"type":"currency_spent","currency_id":"gems","amount":2,"tx_id":"t-2","ts":"2026-11-29T10:00:00Z"}}"#,
            r#"{"type":"event","event":{"type":"session_start"}}"#,
            r#"{"type":"offer_request","trigger_context":{"event_type":"boss_raid"}}"#,
            r#"{"type":"offer_request","trigger_context":{"event_type":"boss_raid","level":9}}"#,
            // Not the clients' layout: read by the tagged enum.
            r#"{"event":{"type":"session_start"},"type":"event"}"#,
            r#"{ "type":"event","event":{"type":"session_start"}}"#,
            r#"{"type":"ack","seq":4}"#,
            // Errors: both refuse.
            r#"{"type":"event","event":{"type":"session_start"},"extra":1}"#,
            r#"{"type":"event","event":{"type":"session_start"}} "#,
            r#"{"type":"event","event":{"type":"session_start"}}}"#,
            r#"{"type":"event","event":{"type":"no_such_event"}}"#,
            r#"{"type":"event","event":{"type":"currency_earned","amount":"x"}}"#,
            r#"{"type":"event","event":"#,
            r#"{"type":"event","event":{"type":"session_start"}"#,
            r#"{"type":"offer_request","trigger_context":{}}"#,
            r#"{"type":"offer_request","trigger_context":{"event_type":"a"},"type":"ack"}"#,
            r#"{"type":"event","event":{"type":"session_start"},"event":{"type":"session_start"}}"#,
        ] {
            agree(text);
        }
        // The clients' layout is read directly, not through the fallback.
        let wallet = r#"{"type":"event","event":{"type":"currency_earned","currency_id":"gems","amount":1,"tx_id":"t-1"}}"#;
        assert!(only_value::<SdkEvent>(&wallet[EVENT.len()..]).is_some());
        let offer = r#"{"type":"offer_request","trigger_context":{"event_type":"boss_raid"}}"#;
        assert!(only_value::<TriggerContext>(&offer[OFFER_REQUEST.len()..]).is_some());
        let outcomes: Vec<bool> = deep.iter().map(|text| decode(text).is_ok()).collect();
        for text in &deep {
            agree(text);
        }
        assert!(
            outcomes.contains(&true) && outcomes.contains(&false),
            "{outcomes:?}"
        );
    }
}
