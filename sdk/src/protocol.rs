//! The SDK WebSocket protocol as the client speaks it (`svc.v1.json`): the `hello` it sends
//! and the server messages it reads, each turned into a [`SdkCallback`].

use chrono::{DateTime, Utc};
use offer_domain::game::Mode;
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::KillSwitch;
use serde::Deserialize;
use uuid::Uuid;

use crate::callback::{InventoryItem, SdkCallback};

/// The JSON subprotocol.
pub const SUBPROTOCOL: &str = "svc.v1.json";

/// The `hello` that opens or resumes the session; `resume_from` is the last `seq` received
/// and `epoch` the epoch of the `ready` it was received under (the engine honours a resume
/// only within one epoch; an engine too old to send one gets none back).
pub fn hello(
    session_id: Uuid,
    player_id: &str,
    resume_from: Option<u64>,
    epoch: Option<&str>,
) -> String {
    let mut hello = serde_json::json!({
        "type": "hello",
        "session_id": session_id,
        "player_id": player_id,
    });
    if let Some(seq) = resume_from {
        hello["resume_from"] = seq.into();
        if let Some(epoch) = epoch {
            hello["epoch"] = epoch.into();
        }
    }
    hello.to_string()
}

/// An `offer_request` for the moment `event_type`.
pub fn offer_request(event_type: &str) -> String {
    serde_json::json!({"type": "offer_request", "trigger_context": {"event_type": event_type}})
        .to_string()
}

/// An `ack` of every message up to `seq`.
pub fn ack(seq: u64) -> String {
    serde_json::json!({"type": "ack", "seq": seq}).to_string()
}

/// A server message with its `seq`.
#[derive(Debug, Deserialize)]
pub struct Numbered {
    /// The session's sequence number (0 for an error before `hello`).
    pub seq: u64,
    /// The message.
    #[serde(flatten)]
    pub message: ServerMessage,
}

/// The server messages the SDK acts on; an unknown type (from a newer engine) is ignored.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The session is open.
    Ready {
        /// The kill switch.
        kill_switch: KillSwitch,
        /// The mode.
        mode: Mode,
        /// The configuration's version.
        config_version: u64,
        /// Whether the resume was honoured.
        resumed: bool,
        /// The session's message history, which a resume names (absent from engines older
        /// than epochs).
        #[serde(default)]
        epoch: Option<String>,
        /// The player's inventory (absent from engines that keep none).
        #[serde(default)]
        inventory: Vec<InventoryItem>,
    },
    /// An offer (its fields kept as they are).
    Offer(serde_json::Map<String, serde_json::Value>),
    /// No offer.
    NoOffer {
        /// Why.
        outcome: String,
    },
    /// The kill switch changed.
    KillSwitch {
        /// The level.
        level: KillLevel,
        /// Why.
        reason: String,
        /// When.
        updated_at: DateTime<Utc>,
    },
    /// The configuration changed.
    Config {
        /// The new version.
        config_version: u64,
        /// The published custom page.
        #[serde(default)]
        custom_page: Option<serde_json::Value>,
    },
    /// A balance.
    Balance {
        /// The currency.
        currency_id: String,
        /// The balance.
        balance: i64,
    },
    /// The player's whole inventory.
    Inventory {
        /// Every item held.
        items: Vec<InventoryItem>,
    },
    /// A refusal.
    Error {
        /// The code.
        code: String,
        /// The explanation.
        message: String,
    },
    /// A type this SDK does not know.
    #[serde(other)]
    Unknown,
}

impl ServerMessage {
    /// The callback this message becomes, if any.
    pub fn into_callback(self) -> Option<SdkCallback> {
        Some(match self {
            Self::Ready {
                kill_switch,
                mode,
                config_version,
                resumed,
                inventory,
                epoch: _,
            } => SdkCallback::Ready {
                resumed,
                kill_switch,
                mode,
                config_version,
                inventory,
            },
            Self::Offer(fields) => SdkCallback::Offer(fields.into()),
            Self::NoOffer { outcome } => SdkCallback::NoOffer { outcome },
            Self::KillSwitch {
                level,
                reason,
                updated_at,
            } => SdkCallback::KillSwitch(KillSwitch {
                level,
                reason,
                updated_at,
            }),
            Self::Config {
                config_version,
                custom_page,
            } => SdkCallback::Config {
                config_version,
                custom_page,
            },
            Self::Balance {
                currency_id,
                balance,
            } => SdkCallback::Balance {
                currency_id,
                balance,
            },
            Self::Inventory { items } => SdkCallback::Inventory(items),
            Self::Error { code, message } => SdkCallback::Error { code, message },
            Self::Unknown => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resume_names_the_epoch_and_a_first_hello_names_neither() {
        let session = Uuid::nil();
        let parse =
            |text: String| -> serde_json::Value { serde_json::from_str(&text).expect("json") };
        let first = parse(hello(session, "p", None, Some("ignored")));
        assert!(first.get("resume_from").is_none() && first.get("epoch").is_none());
        let resume = parse(hello(session, "p", Some(7), Some("9f3c2a7b1d4e6f80")));
        assert_eq!(resume["resume_from"], 7);
        assert_eq!(resume["epoch"], "9f3c2a7b1d4e6f80");
        let legacy = parse(hello(session, "p", Some(7), None));
        assert_eq!(legacy["resume_from"], 7);
        assert!(legacy.get("epoch").is_none());
    }

    #[test]
    fn the_reference_examples_parse() {
        let with_epoch: Numbered = serde_json::from_str(
            r#"{"seq": 1, "type": "ready", "kill_switch": {"level": 0, "reason": "", "updated_at": "2026-03-01T11:58:02.113Z"}, "mode": "shadow", "config_version": 3, "resumed": false, "epoch": "9f3c2a7b1d4e6f80", "inventory": []}"#,
        )
        .expect("ready with an epoch");
        assert!(matches!(
            with_epoch.message,
            ServerMessage::Ready { epoch: Some(ref e), .. } if e == "9f3c2a7b1d4e6f80"
        ));
        let ready: Numbered = serde_json::from_str(
            r#"{"seq": 1, "type": "ready", "kill_switch": {"level": 0, "reason": "", "updated_at": "2026-03-01T11:58:02.113Z"}, "mode": "shadow", "config_version": 3, "resumed": false}"#,
        )
        .expect("ready");
        assert_eq!(ready.seq, 1);
        assert!(matches!(
            ready.message.into_callback(),
            Some(SdkCallback::Ready {
                resumed: false,
                config_version: 3,
                ..
            })
        ));
        let ks: Numbered = serde_json::from_str(
            r#"{"seq": 6, "type": "kill_switch", "level": 2, "reason": "bug", "updated_at": "2026-03-01T12:01:40.507Z"}"#,
        )
        .expect("kill switch");
        assert!(matches!(
            ks.message.into_callback(),
            Some(SdkCallback::KillSwitch(KillSwitch {
                level: KillLevel::OffersOff,
                ..
            }))
        ));
        let offer: Numbered = serde_json::from_str(
            r#"{"seq": 4, "type": "offer", "offer_id": "0b7e8f6a-3c2d-4e1f-8a9b-7c6d5e4f3a2b", "price_cents": 399}"#,
        )
        .expect("offer");
        match offer.message.into_callback() {
            Some(SdkCallback::Offer(v)) => assert_eq!(v["price_cents"], 399),
            other => panic!("{other:?}"),
        }
        let inventory: Numbered = serde_json::from_str(
            r#"{"seq": 8, "type": "inventory", "items": [{"item_id": "potion", "quantity": 2}]}"#,
        )
        .expect("inventory");
        assert_eq!(
            inventory.message.into_callback(),
            Some(SdkCallback::Inventory(vec![InventoryItem {
                item_id: "potion".into(),
                quantity: 2
            }]))
        );
        let newer: Numbered =
            serde_json::from_str(r#"{"seq": 9, "type": "from_the_future", "x": 1}"#)
                .expect("unknown");
        assert!(newer.message.into_callback().is_none());
    }
}
