//! The messages a client sends on the socket, and the bounds the engine holds them to.
//!
//! [`ClientMessage`] refuses unknown fields: the engine, its only reader, answers a message
//! it does not fully understand with a `bad_message` error rather than half-applying it.
//! Its writers (the SDK, the load tool, the tests) build it from the same type, so what
//! they send is what the engine reads.

use offer_domain::schema::SnakeCaseId;
use offer_domain::validation::is_snake_case;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::event::SdkEvent;
#[cfg(doc)]
use crate::socket::ServerMessage;

/// Deepest nesting of arrays and maps a client message may have, in either format: the
/// limit of the JSON reader, which MessagePack input gets too. A deeper message is
/// malformed; what a message may store is bounded far lower by the services.
pub const MAX_MESSAGE_DEPTH: usize = 127;

/// Longest trigger `event_type` of an `offer_request`, in bytes (a snake_case name is
/// ASCII).
pub const MAX_EVENT_TYPE_LEN: usize = 64;

/// A message from the client. Its schema, like [`ServerMessage`]'s, keeps the protocol
/// reference complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMessage {
    /// Opens or resumes the session (the same path as `POST /v1/sdk/sessions`).
    Hello {
        /// Client-chosen UUID.
        session_id: Uuid,
        /// The studio's player id.
        player_id: String,
        /// country, platform, app_version, level, ...
        // Omitted when empty, as a client with none sends it.
        #[serde(default, skip_serializing_if = "Map::is_empty")]
        #[schema(value_type = Object)]
        attributes: Map<String, Value>,
        /// The last `seq` the client received, to get what it missed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_from: Option<u64>,
        /// The `epoch` of the `ready` that `resume_from` was numbered under: a resume is
        /// honoured only within the same epoch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        epoch: Option<String>,
        /// The player token the studio's backend signed for `player_id`, when the game
        /// requires one (as in `POST /v1/sdk/sessions`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player_token: Option<String>,
    },
    /// One SDK event, exactly as in `POST /v1/sdk/events`.
    Event {
        /// The event.
        event: SdkEvent,
    },
    /// Asks for an offer now.
    OfferRequest {
        /// The moment.
        trigger_context: TriggerContext,
    },
    /// The client has every message up to `seq`: the server may forget them.
    Ack {
        /// The acknowledged seq.
        seq: u64,
    },
}

impl ClientMessage {
    /// A `hello` opening session `session_id` for `player_id`, with no attributes and no
    /// resume.
    pub fn hello(session_id: Uuid, player_id: impl Into<String>) -> Self {
        Self::Hello {
            session_id,
            player_id: player_id.into(),
            attributes: Map::new(),
            resume_from: None,
            epoch: None,
            player_token: None,
        }
    }

    /// An `offer_request` for the moment `event_type`.
    pub fn offer_request(event_type: impl Into<String>) -> Self {
        Self::OfferRequest {
            trigger_context: TriggerContext {
                event_type: event_type.into(),
            },
        }
    }
}

/// The moment an offer is asked for. Other fields the game sends with it are accepted and
/// ignored, so a newer SDK can send more context to an older engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TriggerContext {
    /// The trigger, e.g. `session_start`, `currency_low`, `boss_raid`.
    #[schema(value_type = SnakeCaseId)]
    pub event_type: String,
}

impl TriggerContext {
    /// Whether `event_type` is a snake_case name of at most [`MAX_EVENT_TYPE_LEN`] bytes,
    /// the only moments the engine serves (over the socket and over REST alike).
    pub fn is_valid(&self) -> bool {
        is_snake_case(&self.event_type, MAX_EVENT_TYPE_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_first_hello_names_neither_resume_nor_epoch_nor_attributes() {
        let hello = serde_json::to_value(ClientMessage::hello(Uuid::nil(), "p")).expect("json");
        assert_eq!(
            hello,
            json!({"type": "hello", "session_id": Uuid::nil(), "player_id": "p"})
        );
        let resume = ClientMessage::Hello {
            session_id: Uuid::nil(),
            player_id: "p".into(),
            attributes: Map::new(),
            resume_from: Some(7),
            epoch: Some("9f3c2a7b1d4e6f80".into()),
            player_token: None,
        };
        let resume = serde_json::to_value(resume).expect("json");
        assert_eq!(resume["resume_from"], 7);
        assert_eq!(resume["epoch"], "9f3c2a7b1d4e6f80");
    }

    #[test]
    fn the_requests_and_the_ack_keep_their_shape() {
        assert_eq!(
            serde_json::to_value(ClientMessage::offer_request("boss_raid")).expect("json"),
            json!({"type": "offer_request", "trigger_context": {"event_type": "boss_raid"}})
        );
        assert_eq!(
            serde_json::to_value(ClientMessage::Ack { seq: 3 }).expect("json"),
            json!({"type": "ack", "seq": 3})
        );
    }

    #[test]
    fn unknown_fields_and_types_are_refused_but_the_trigger_context_is_open() {
        let read = |v: Value| serde_json::from_value::<ClientMessage>(v);
        assert!(read(json!({"type": "ack", "seq": 1, "extra": true})).is_err());
        assert!(read(json!({"type": "bye"})).is_err());
        let open = read(json!({"type": "offer_request",
                               "trigger_context": {"event_type": "boss_raid", "level": 9}}));
        assert_eq!(open.ok(), Some(ClientMessage::offer_request("boss_raid")));
        let null_resume = read(json!({"type": "hello", "session_id": Uuid::nil(),
                                      "player_id": "p", "resume_from": null}));
        assert_eq!(
            null_resume.ok(),
            Some(ClientMessage::hello(Uuid::nil(), "p"))
        );
    }

    #[test]
    fn a_trigger_is_a_bounded_snake_case_name() {
        let trigger = |t: &str| TriggerContext {
            event_type: t.to_owned(),
        };
        assert!(trigger("boss_raid").is_valid());
        assert!(trigger(&"a".repeat(MAX_EVENT_TYPE_LEN)).is_valid());
        assert!(!trigger(&"a".repeat(MAX_EVENT_TYPE_LEN + 1)).is_valid());
        assert!(!trigger("Boss Raid").is_valid());
    }
}
