//! SDK events as the game sends them, over `POST /v1/sdk/events` and the WebSocket's `event`
//! message alike: telemetry, triggers and money events, each tagged by `type`.

use chrono::{DateTime, Utc};
use offer_domain::schema::SnakeCaseId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// One SDK event. Its `ts`, when sent, is within 24 hours of the server's clock, and a
/// `currency_id` names a currency of the game (422 otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SdkEvent {
    /// A session started (sent automatically by SDK init).
    SessionStart {
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// The player runs low on a currency: triggers currency offers.
    CurrencyLow {
        /// The currency.
        #[schema(value_type = SnakeCaseId)]
        currency_id: String,
        /// Its balance as the game sees it.
        #[serde(default)]
        balance: Option<i64>,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// The player lost for the first time: triggers consumable templates.
    FirstLoss {
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// An RPG live event: triggers equipment templates.
    BossRaid {
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// Currency enters the wallet (faucet).
    CurrencyEarned {
        /// The currency.
        #[schema(value_type = SnakeCaseId)]
        currency_id: String,
        /// Units, 1 to 1000000000.
        #[schema(minimum = 1, maximum = 1000000000)]
        amount: i64,
        /// Where it came from.
        #[serde(default)]
        source: Option<String>,
        /// Idempotency key, 1 to 128 characters.
        #[schema(min_length = 1, max_length = 128)]
        tx_id: String,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// Currency leaves the wallet (sink); refused above the balance.
    CurrencySpent {
        /// The currency.
        #[schema(value_type = SnakeCaseId)]
        currency_id: String,
        /// Units, 1 to 1000000000.
        #[schema(minimum = 1, maximum = 1000000000)]
        amount: i64,
        /// Where it went.
        #[serde(default)]
        sink: Option<String>,
        /// Idempotency key, 1 to 128 characters.
        #[schema(min_length = 1, max_length = 128)]
        tx_id: String,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// A real-money purchase. Its non-currency items enter the player's inventory; it never
    /// credits a wallet (a currency pack's units arrive through `currency_earned`).
    Purchase {
        /// The offer bought, if it came from one.
        #[serde(default)]
        offer_id: Option<Uuid>,
        /// Items bought (their catalogue ids), at most 50.
        #[schema(value_type = Vec<SnakeCaseId>, max_items = 50)]
        item_ids: Vec<String>,
        /// Money paid, in cents, 0 to 10000000.
        #[schema(minimum = 0, maximum = 10000000)]
        price_cents: i64,
        /// Idempotency key, 1 to 128 characters.
        #[schema(min_length = 1, max_length = 128)]
        tx_id: String,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
        /// The store's signed proof of the purchase, passed through untouched from the
        /// store's SDK; at most 16 KiB. Checked when the game's receipt verification is on:
        /// the items granted and the revenue counted are then the verified product's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipt: Option<Receipt>,
    },
    /// The player used up units of a consumable it holds: they leave its inventory. Refused
    /// when it holds fewer.
    ItemUsed {
        /// The item (a non-currency catalogue item).
        #[schema(value_type = SnakeCaseId)]
        item_id: String,
        /// Units used, 1 to 1000000000.
        #[schema(minimum = 1, maximum = 1000000000)]
        quantity: i64,
        /// Idempotency key, 1 to 128 characters.
        #[schema(min_length = 1, max_length = 128)]
        tx_id: String,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// An offer was shown to the player.
    OfferShown {
        /// The offer.
        offer_id: Uuid,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// The player closed an offer.
    OfferDismissed {
        /// The offer.
        offer_id: Uuid,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
}

impl SdkEvent {
    /// The event's type name, which is also the trigger name for offer events.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::SessionStart { .. } => "session_start",
            Self::CurrencyLow { .. } => "currency_low",
            Self::FirstLoss { .. } => "first_loss",
            Self::BossRaid { .. } => "boss_raid",
            Self::CurrencyEarned { .. } => "currency_earned",
            Self::CurrencySpent { .. } => "currency_spent",
            Self::Purchase { .. } => "purchase",
            Self::ItemUsed { .. } => "item_used",
            Self::OfferShown { .. } => "offer_shown",
            Self::OfferDismissed { .. } => "offer_dismissed",
        }
    }

    /// The client's timestamp, if sent.
    pub fn ts(&self) -> Option<DateTime<Utc>> {
        match self {
            Self::SessionStart { ts }
            | Self::CurrencyLow { ts, .. }
            | Self::FirstLoss { ts }
            | Self::BossRaid { ts }
            | Self::CurrencyEarned { ts, .. }
            | Self::CurrencySpent { ts, .. }
            | Self::Purchase { ts, .. }
            | Self::ItemUsed { ts, .. }
            | Self::OfferShown { ts, .. }
            | Self::OfferDismissed { ts, .. } => *ts,
        }
    }

    /// Whether this event asks the engine for an offer (over the WebSocket).
    pub fn is_trigger(&self) -> bool {
        matches!(
            self,
            Self::CurrencyLow { .. } | Self::FirstLoss { .. } | Self::BossRaid { .. }
        )
    }
}

/// Most bytes a purchase's receipt may carry, its strings together: a genuine StoreKit 2
/// transaction is about 4 KiB and a Google Play purchase under 1 KiB.
pub const MAX_RECEIPT_BYTES: usize = 16 * 1024;

/// A store receipt as the store's SDK hands it to the game, tagged by `store`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "store", rename_all = "snake_case", deny_unknown_fields)]
pub enum Receipt {
    /// An App Store (StoreKit 2) purchase.
    AppStore {
        /// The transaction's JWS, `signedTransactionInfo` (StoreKit's `jwsRepresentation`).
        signed_transaction: String,
    },
    /// A Google Play purchase.
    GooglePlay {
        /// The purchase's JSON exactly as Google signed it (`Purchase.getOriginalJson()`).
        purchase_data: String,
        /// Its base64 signature (`Purchase.getSignature()`).
        signature: String,
    },
    /// A Unity IAP receipt: the one JSON string with `Store`, `TransactionID` and `Payload`.
    Unity {
        /// The receipt string.
        receipt: String,
    },
}

impl Receipt {
    /// The bytes the receipt carries, its strings together (what [`MAX_RECEIPT_BYTES`]
    /// bounds).
    pub fn len(&self) -> usize {
        match self {
            Self::AppStore { signed_transaction } => signed_transaction.len(),
            Self::GooglePlay {
                purchase_data,
                signature,
            } => purchase_data.len() + signature.len(),
            Self::Unity { receipt } => receipt.len(),
        }
    }

    /// Whether the receipt carries nothing at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_travels_untouched_inside_a_purchase() {
        // The Google Play purchase data is checked against its signature byte for byte: its
        // escapes, spacing and non-ASCII text must come out exactly as they went in.
        let data =
            r#"{"orderId":"GPA.1", "productId":"\u00e9p\u00e9e","note":"a/b\\c","name":"épée"}"#;
        let json = format!(
            r#"{{"type":"purchase","item_ids":[],"price_cents":0,"tx_id":"t",
               "receipt":{{"store":"google_play","purchase_data":{},"signature":"c2ln"}}}}"#,
            serde_json::to_string(data).expect("a JSON string")
        );
        let event: SdkEvent = serde_json::from_str(&json).expect("a purchase");
        let SdkEvent::Purchase {
            receipt: Some(Receipt::GooglePlay { purchase_data, .. }),
            ..
        } = &event
        else {
            panic!("not a Google Play receipt: {event:?}")
        };
        assert_eq!(purchase_data, data);
        let again: SdkEvent =
            serde_json::from_str(&serde_json::to_string(&event).expect("serialise"))
                .expect("read back");
        assert_eq!(again, event);
    }

    #[test]
    fn a_receipt_names_a_known_store_and_only_its_fields() {
        let purchase = |receipt: &str| {
            serde_json::from_str::<SdkEvent>(&format!(
                r#"{{"type":"purchase","item_ids":[],"price_cents":0,"tx_id":"t","receipt":{receipt}}}"#
            ))
        };
        assert!(purchase(r#"{"store":"unity","receipt":"{}"}"#).is_ok());
        assert!(purchase(r#"{"store":"app_store","signed_transaction":"a.b.c"}"#).is_ok());
        assert!(purchase(r#"{"store":"amazon","receipt":"x"}"#).is_err());
        assert!(purchase(r#"{"store":"app_store"}"#).is_err());
        assert!(purchase(r#"{"store":"unity","receipt":"{}","extra":1}"#).is_err());
        // A purchase without one stays as it was, and writes no `receipt`.
        let bare = purchase("null").expect("no receipt");
        assert!(
            !serde_json::to_string(&bare)
                .expect("json")
                .contains("receipt")
        );
    }
}
