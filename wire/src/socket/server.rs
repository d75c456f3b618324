//! The messages the engine pushes on the socket, and how a client reads a frame of one.
//!
//! The engine only writes [`ServerMessage`]; clients read it, tolerantly: a field they do
//! not know is ignored, a type they do not know is [`ServerMessage::Unknown`], and the
//! fields an older engine did not send yet (`epoch`, `inventory`, `custom_page`) read as
//! absent. So a newer engine never breaks an older SDK.

use chrono::{DateTime, Utc};
use offer_domain::custom_page::{PublishedPage, SharedPage};
use offer_domain::game::Mode;
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::{KillSwitch, ServedOffer};
use offer_domain::schema::SnakeCaseId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A message from the server (the body; the socket adds `seq`). Its schema lists every
/// message type with its fields, which keeps the protocol reference (`docs/protocol.md`)
/// complete: a test finds an example there for each type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The first message after `hello` (or right after the replay of a resume).
    Ready {
        /// The game's kill switch now.
        kill_switch: KillSwitch,
        /// Operating mode.
        mode: Mode,
        /// Version of the game's live configuration.
        config_version: u64,
        /// Whether `resume_from` was honoured (the missed messages came just before).
        resumed: bool,
        /// The session's message history: its `seq`s only mean something with it, so a
        /// client names it in `hello` with `resume_from`. A new epoch means a new history
        /// whose `seq` started again from 1.
        // The engine always sends it; `None` is what a client reads from an engine older
        // than epochs, which honours no epoch in `hello` either.
        #[serde(default)]
        #[schema(value_type = String, required = true)]
        epoch: Option<String>,
        /// The player's inventory now.
        // Absent from engines that kept none.
        #[serde(default)]
        #[schema(required = true)]
        inventory: Vec<InventoryItem>,
    },
    /// An offer, with the REST offer's fields.
    Offer(ServedOffer),
    /// No offer, with the `Offer-Outcome` reason.
    NoOffer {
        /// `kill_switch`, `holdout`, `frequency_capped`, `suppressed`, ...
        outcome: String,
    },
    /// The kill switch changed.
    KillSwitch {
        /// Level 0 to 3.
        #[schema(value_type = u8)]
        level: KillLevel,
        /// Why.
        reason: String,
        /// When.
        updated_at: DateTime<Utc>,
    },
    /// The game's configuration (catalogue, templates, bundles, published custom page, ...)
    /// changed.
    Config {
        /// The new version.
        config_version: u64,
        /// The published custom page (the version a studio member approved, with its
        /// template and bindings), or null when none was ever published.
        // Always sent (null for none); absent only from engines without custom pages.
        #[serde(default)]
        #[schema(value_type = Option<PublishedPage>)]
        custom_page: Option<SharedPage>,
    },
    /// A wallet balance after a money event (also after an idempotent replay).
    Balance {
        /// The currency.
        currency_id: String,
        /// Its balance.
        balance: i64,
    },
    /// The player's whole inventory, after every change of it (a purchase's items, an
    /// `item_used`; also after an idempotent replay).
    Inventory {
        /// Every item the player holds, by `item_id`; an item used up is absent.
        items: Vec<InventoryItem>,
    },
    /// A refused or malformed client message.
    Error {
        /// Stable code: `bad_message`, `insufficient_funds`, `insufficient_items`,
        /// `sdk_disabled`, ...
        code: String,
        /// Explanation.
        message: String,
    },
    /// A type this reader does not know, from a newer engine: a client ignores it. Never
    /// sent (writing it is an error), so it is no part of the schema.
    #[serde(other, skip_serializing)]
    Unknown,
}

impl ServerMessage {
    /// An `error` message.
    pub fn error(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Error {
            code: code.into(),
            message: message.into(),
        }
    }
}

/// A server message as a client receives it: the session's `seq` (0 for an error before
/// `hello`) in front of the message's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Numbered {
    /// The session's sequence number.
    pub seq: u64,
    /// The message.
    #[serde(flatten)]
    pub message: ServerMessage,
}

/// One item of a player's inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct InventoryItem {
    /// The catalogue item.
    #[schema(value_type = SnakeCaseId)]
    pub item_id: String,
    /// How many the player holds, at least 1.
    pub quantity: i64,
}

impl InventoryItem {
    /// The lines of an inventory, in the order given (by `item_id` from a map of held
    /// quantities).
    pub fn list(items: impl IntoIterator<Item = (String, i64)>) -> Vec<Self> {
        items
            .into_iter()
            .map(|(item_id, quantity)| Self { item_id, quantity })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Numbered {
        serde_json::from_str(text).expect("a server message")
    }

    #[test]
    fn the_reference_examples_read() {
        let ready = read(
            r#"{"seq": 1, "type": "ready", "kill_switch": {"level": 0, "reason": "", "updated_at": "2026-03-01T11:58:02.113Z"}, "mode": "shadow", "config_version": 3, "resumed": false, "epoch": "9f3c2a7b1d4e6f80", "inventory": []}"#,
        );
        assert_eq!(ready.seq, 1);
        assert!(matches!(
            ready.message,
            ServerMessage::Ready { epoch: Some(ref e), resumed: false, config_version: 3, .. }
                if e == "9f3c2a7b1d4e6f80"
        ));
        let ks = read(
            r#"{"seq": 6, "type": "kill_switch", "level": 2, "reason": "bug", "updated_at": "2026-03-01T12:01:40.507Z"}"#,
        );
        assert!(matches!(
            ks.message,
            ServerMessage::KillSwitch {
                level: KillLevel::OffersOff,
                ..
            }
        ));
        let inventory = read(
            r#"{"seq": 8, "type": "inventory", "items": [{"item_id": "potion", "quantity": 2}]}"#,
        );
        assert_eq!(
            inventory.message,
            ServerMessage::Inventory {
                items: InventoryItem::list([("potion".to_owned(), 2)])
            }
        );
    }

    #[test]
    fn an_older_engine_and_a_newer_one_both_read() {
        let older = read(
            r#"{"seq": 1, "type": "ready", "kill_switch": {"level": 0, "reason": "", "updated_at": "2026-03-01T11:58:02.113Z"}, "mode": "shadow", "config_version": 3, "resumed": false}"#,
        );
        assert!(matches!(
            older.message,
            ServerMessage::Ready { epoch: None, ref inventory, .. } if inventory.is_empty()
        ));
        let newer = read(r#"{"seq": 9, "type": "from_the_future", "x": 1}"#);
        assert_eq!(newer.message, ServerMessage::Unknown);
        let more =
            read(r#"{"seq": 2, "type": "balance", "currency_id": "gems", "balance": 5, "x": 1}"#);
        assert_eq!(
            more.message,
            ServerMessage::Balance {
                currency_id: "gems".into(),
                balance: 5
            }
        );
    }

    #[test]
    fn a_message_writes_its_fields_after_its_seq() {
        let numbered = Numbered {
            seq: 4,
            message: ServerMessage::Config {
                config_version: 2,
                custom_page: None,
            },
        };
        assert_eq!(
            serde_json::to_string(&numbered).expect("json"),
            r#"{"seq":4,"type":"config","config_version":2,"custom_page":null}"#
        );
        assert!(serde_json::to_value(ServerMessage::Unknown).is_err());
        assert_eq!(
            serde_json::to_value(ServerMessage::NoOffer {
                outcome: "holdout".into()
            })
            .expect("json"),
            json!({"type": "no_offer", "outcome": "holdout"})
        );
    }
}
