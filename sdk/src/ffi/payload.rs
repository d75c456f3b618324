//! Which C callback an [`SdkCallback`] goes to (the seven of the engine's pushes, and the
//! player token's), and the JSON it carries.

use serde_json::{Value, json};

use crate::callback::{InventoryItem, SdkCallback};

/// The callbacks a game registers, in the order of their registration functions: the seven
/// of the engine's pushes, then the player token's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `SVC_SetOnSDKReady`: the session is open.
    SdkReady,
    /// `SVC_SetOnOfferReceived`: an offer to show.
    OfferReceived,
    /// `SVC_SetOnBalanceUpdate`: a wallet balance changed.
    BalanceUpdate,
    /// `SVC_SetOnInventoryUpdate`: the inventory changed.
    InventoryUpdate,
    /// `SVC_SetOnNoOffer`: no offer for the moment asked about.
    NoOffer,
    /// `SVC_SetOnKillSwitchChanged`: the kill switch changed.
    KillSwitchChanged,
    /// `SVC_SetOnConfigUpdated`: the configuration changed.
    ConfigUpdated,
    /// `SVC_SetOnPlayerTokenNeeded`: the SDK needs a new player token.
    PlayerTokenNeeded,
}

/// How many kinds there are (crate-visible only, so it stays out of the C header).
pub(crate) const KINDS: usize = 8;

/// Every kind, by index.
const ALL: [Kind; KINDS] = [
    Kind::SdkReady,
    Kind::OfferReceived,
    Kind::BalanceUpdate,
    Kind::InventoryUpdate,
    Kind::NoOffer,
    Kind::KillSwitchChanged,
    Kind::ConfigUpdated,
    Kind::PlayerTokenNeeded,
];

impl Kind {
    /// The kind's slot in the registry.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The callback's name in the device log (`SVC_Dart_OnSDKReady`, ...), which the
    /// Dart and engine wrappers bind to.
    pub fn log_name(self) -> &'static str {
        match self {
            Self::SdkReady => "SVC_Dart_OnSDKReady",
            Self::OfferReceived => "SVC_Dart_OnOfferReceived",
            Self::BalanceUpdate => "SVC_Dart_OnBalanceUpdate",
            Self::InventoryUpdate => "SVC_Dart_OnInventoryUpdate",
            Self::NoOffer => "SVC_Dart_OnNoOffer",
            Self::KillSwitchChanged => "SVC_Dart_OnKillSwitchChanged",
            Self::ConfigUpdated => "SVC_Dart_OnConfigUpdated",
            Self::PlayerTokenNeeded => "SVC_Dart_OnPlayerTokenNeeded",
        }
    }

    /// The kind whose name (`SVC_Dart_OnSDKReady`, ...) is `name`.
    pub fn named(name: &str) -> Option<Self> {
        ALL.into_iter().find(|kind| kind.log_name() == name)
    }
}

/// The callback and JSON payload for `callback`, or `None` for an [`SdkCallback::Error`],
/// which none of the seven carries.
pub fn of(callback: SdkCallback) -> Option<(Kind, String)> {
    let (kind, value) = match callback {
        SdkCallback::Ready {
            resumed,
            kill_switch,
            mode,
            config_version,
            inventory,
        } => (
            Kind::SdkReady,
            json!({"resumed": resumed, "kill_switch": kill_switch, "mode": mode,
                   "config_version": config_version, "inventory": items(&inventory)}),
        ),
        SdkCallback::Offer(offer) => (Kind::OfferReceived, offer),
        SdkCallback::NoOffer { outcome } => (Kind::NoOffer, json!({"outcome": outcome})),
        SdkCallback::Balance {
            currency_id,
            balance,
        } => (
            Kind::BalanceUpdate,
            json!({"currency_id": currency_id, "balance": balance}),
        ),
        SdkCallback::Inventory(inventory) => (
            Kind::InventoryUpdate,
            json!({"inventory": items(&inventory)}),
        ),
        SdkCallback::Config {
            config_version,
            custom_page,
        } => (
            Kind::ConfigUpdated,
            json!({"config_version": config_version, "custom_page": custom_page}),
        ),
        SdkCallback::KillSwitch(kill_switch) => (Kind::KillSwitchChanged, json!(kill_switch)),
        SdkCallback::PlayerTokenNeeded {
            reason,
            player_id,
            expires_at,
            refusal,
        } => (
            Kind::PlayerTokenNeeded,
            json!({"reason": reason, "player_id": player_id, "expires_at": expires_at,
                   "code": refusal.as_ref().map(|r| &r.code),
                   "message": refusal.as_ref().map(|r| &r.message)}),
        ),
        SdkCallback::Error { .. } => return None,
    };
    Some((kind, value.to_string()))
}

/// The inventory as a JSON array of `{"item_id", "quantity"}`.
fn items(inventory: &[InventoryItem]) -> Value {
    inventory
        .iter()
        .map(|item| json!({"item_id": item.item_id, "quantity": item.quantity}))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_balance_goes_to_its_callback_as_json() {
        let (kind, text) = of(SdkCallback::Balance {
            currency_id: "gems".into(),
            balance: 500,
        })
        .expect("a callback");
        assert_eq!(kind, Kind::BalanceUpdate);
        let value: Value = serde_json::from_str(&text).expect("json");
        assert_eq!(value, json!({"currency_id": "gems", "balance": 500}));
    }

    #[test]
    fn every_kind_is_found_by_its_name_at_its_index() {
        for (index, kind) in ALL.into_iter().enumerate() {
            assert_eq!(kind.index(), index);
            assert_eq!(Kind::named(kind.log_name()), Some(kind));
        }
        assert_eq!(Kind::named("SVC_Dart_OnNothing"), None);
    }

    #[test]
    fn the_header_defines_every_name_as_itself() {
        let header = include_str!("../../include/offer_sdk.h");
        for kind in ALL {
            let name = kind.log_name();
            let define = format!("#define {name} \"{name}\"");
            assert!(header.contains(&define), "no `{define}` in offer_sdk.h");
        }
    }

    #[test]
    fn an_error_has_no_callback() {
        assert!(
            of(SdkCallback::Error {
                code: "sdk_x".into(),
                message: "m".into()
            })
            .is_none()
        );
    }
}
