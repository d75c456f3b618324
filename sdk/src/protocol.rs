//! The SDK WebSocket protocol as the client speaks it (`svc.v1.json`): the messages it sends
//! (`hello`, `ack`, `offer_request`) and the server messages it reads, each turned into a
//! [`SdkCallback`]. The messages themselves are the engine's own ([`offer_wire::socket`]),
//! read tolerantly: a newer engine's fields and message types are ignored.

use offer_domain::custom_page::SharedPage;
use offer_domain::offer::KillSwitch;
pub use offer_wire::socket::{ClientMessage, Numbered, ServerMessage};
use uuid::Uuid;

use crate::callback::SdkCallback;

/// The JSON subprotocol.
pub const SUBPROTOCOL: &str = offer_wire::socket::JSON_PROTOCOL;

/// The text of a client message (a message of plain fields always encodes).
fn text(message: &ClientMessage) -> String {
    serde_json::to_string(message).unwrap_or_default()
}

/// The `hello` that opens or resumes the session, with the player's token when the game gave
/// one; `resume_from` is the last `seq` received and `epoch` the epoch of the `ready` it was
/// received under (the engine honours a resume only within one epoch; an engine too old to
/// send one gets none back).
pub fn hello(
    session_id: Uuid,
    player_id: &str,
    player_token: Option<&str>,
    resume_from: Option<u64>,
    epoch: Option<&str>,
) -> String {
    text(&ClientMessage::Hello {
        session_id,
        player_id: player_id.to_owned(),
        attributes: serde_json::Map::new(),
        resume_from,
        epoch: resume_from.and(epoch).map(str::to_owned),
        player_token: player_token.map(str::to_owned),
    })
}

/// An `offer_request` for the moment `event_type`.
pub fn offer_request(event_type: &str) -> String {
    text(&ClientMessage::offer_request(event_type))
}

/// An `ack` of every message up to `seq`.
pub fn ack(seq: u64) -> String {
    text(&ClientMessage::Ack { seq })
}

/// The published custom page as the game receives it: its JSON fields.
pub fn page_fields(page: Option<&SharedPage>) -> Option<serde_json::Value> {
    page.and_then(|p| serde_json::to_value(&**p).ok())
}

/// The callback a server message becomes, if any (none for a type this SDK does not know).
pub fn into_callback(message: ServerMessage) -> Option<SdkCallback> {
    Some(match message {
        ServerMessage::Ready {
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
        // An offer's fields always encode (it was just read from JSON).
        ServerMessage::Offer(offer) => SdkCallback::Offer(serde_json::to_value(offer).ok()?),
        ServerMessage::NoOffer { outcome } => SdkCallback::NoOffer { outcome },
        ServerMessage::KillSwitch {
            level,
            reason,
            updated_at,
        } => SdkCallback::KillSwitch(KillSwitch {
            level,
            reason,
            updated_at,
        }),
        ServerMessage::Config {
            config_version,
            custom_page,
        } => SdkCallback::Config {
            config_version,
            custom_page: page_fields(custom_page.as_ref()),
        },
        ServerMessage::Balance {
            currency_id,
            balance,
        } => SdkCallback::Balance {
            currency_id,
            balance,
        },
        ServerMessage::Inventory { items } => SdkCallback::Inventory(items),
        ServerMessage::Error { code, message } => SdkCallback::Error { code, message },
        ServerMessage::Unknown => return None,
    })
}

#[cfg(test)]
mod tests {
    use offer_domain::kill_level::KillLevel;

    use super::*;
    use crate::callback::InventoryItem;

    #[test]
    fn a_resume_names_the_epoch_and_a_first_hello_names_neither() {
        let session = Uuid::nil();
        let parse =
            |text: String| -> serde_json::Value { serde_json::from_str(&text).expect("json") };
        let first = parse(hello(session, "p", None, None, Some("ignored")));
        assert!(first.get("resume_from").is_none() && first.get("epoch").is_none());
        assert!(first.get("attributes").is_none() && first.get("player_token").is_none());
        let signed = parse(hello(session, "p", Some("a.b.c"), None, None));
        assert_eq!(signed["player_token"], "a.b.c");
        let resume = parse(hello(session, "p", None, Some(7), Some("9f3c2a7b1d4e6f80")));
        assert_eq!(resume["resume_from"], 7);
        assert_eq!(resume["epoch"], "9f3c2a7b1d4e6f80");
        let legacy = parse(hello(session, "p", None, Some(7), None));
        assert_eq!(legacy["resume_from"], 7);
        assert!(legacy.get("epoch").is_none());
        assert_eq!(parse(ack(5)), serde_json::json!({"type": "ack", "seq": 5}));
        assert_eq!(
            parse(offer_request("boss_raid"))["trigger_context"]["event_type"],
            "boss_raid"
        );
    }

    #[test]
    fn the_reference_examples_become_callbacks() {
        let read = |text: &str| -> Numbered { serde_json::from_str(text).expect("a message") };
        let ready = read(
            r#"{"seq": 1, "type": "ready", "kill_switch": {"level": 0, "reason": "", "updated_at": "2026-03-01T11:58:02.113Z"}, "mode": "shadow", "config_version": 3, "resumed": false}"#,
        );
        assert_eq!(ready.seq, 1);
        assert!(matches!(
            into_callback(ready.message),
            Some(SdkCallback::Ready {
                resumed: false,
                config_version: 3,
                ..
            })
        ));
        let ks = read(
            r#"{"seq": 6, "type": "kill_switch", "level": 2, "reason": "bug", "updated_at": "2026-03-01T12:01:40.507Z"}"#,
        );
        assert!(matches!(
            into_callback(ks.message),
            Some(SdkCallback::KillSwitch(KillSwitch {
                level: KillLevel::OffersOff,
                ..
            }))
        ));
        let offer = read(
            r#"{"seq": 4, "type": "offer", "offer_id": "0b7e8f6a-3c2d-4e1f-8a9b-7c6d5e4f3a2b", "fallback_level": 4, "items": [], "price_usd": 3.99, "price_cents": 399, "expires_at": "2026-03-01T12:15:00Z", "from_a_newer_engine": 1}"#,
        );
        match into_callback(offer.message) {
            Some(SdkCallback::Offer(v)) => {
                assert_eq!(v["price_cents"], 399);
                assert_eq!(v["offer_id"], "0b7e8f6a-3c2d-4e1f-8a9b-7c6d5e4f3a2b");
            }
            other => panic!("{other:?}"),
        }
        let inventory = read(
            r#"{"seq": 8, "type": "inventory", "items": [{"item_id": "potion", "quantity": 2}]}"#,
        );
        assert_eq!(
            into_callback(inventory.message),
            Some(SdkCallback::Inventory(vec![InventoryItem {
                item_id: "potion".into(),
                quantity: 2
            }]))
        );
        let page = read(
            r#"{"seq": 9, "type": "config", "config_version": 4, "custom_page": {"page_id": "0b7e8f6a-3c2d-4e1f-8a9b-7c6d5e4f3a2b", "version": 2, "template": "x", "bindings": {}}}"#,
        );
        match into_callback(page.message) {
            Some(SdkCallback::Config {
                config_version: 4,
                custom_page: Some(p),
            }) => assert_eq!(p["version"], 2),
            other => panic!("{other:?}"),
        }
        let newer = read(r#"{"seq": 10, "type": "from_the_future", "x": 1}"#);
        assert!(into_callback(newer.message).is_none());
    }
}
