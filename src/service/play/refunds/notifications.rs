//! The stores' notifications, judged and turned into what they ask of a transaction: App
//! Store Server Notifications V2 (verified as a purchase's transaction is, against the same
//! roots and the game's app) and Google Play real-time developer notifications pushed by
//! Pub/Sub (authenticated by the game's notification token, compared in constant time).
//!
//! A notification that does not prove it is the store's, for this game, is refused as
//! [`ServiceError::NotificationInvalid`] and changes nothing; a notification of a kind that
//! moves no purchase (subscriptions, tests, consumption requests) is answered and ignored.

use std::collections::BTreeMap;

use offer_domain::environment::Environment;
use offer_domain::product_ids::Store;
use offer_receipts::{
    AppleEnvironment, AppleExpect, AppleNotificationKind, parse_google_notification,
    verify_apple_notification,
};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::record::{Action, StepKind};
use super::settle::{Settled, settle};
use super::target::Target;
use crate::service::access;
use crate::service::game::stores::token_matches;
use crate::service::{ServiceError, ServiceResult, Services};

/// What a notification did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A refund took the purchase's revenue and the items the player held back.
    Refunded,
    /// A reversal restored what the refunds took.
    Restored,
    /// Applied, and nothing to change: the purchase is already refunded (or nothing stands
    /// refunded to restore).
    Unchanged,
    /// The same notification was applied before.
    Duplicate,
    /// The engine never saw the purchase: the notification is kept and applied when it
    /// arrives.
    Waiting,
    /// A notification of a kind that moves no purchase.
    Ignored,
}

/// The answer to a store's notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Handled {
    /// What the notification did.
    pub outcome: Outcome,
    /// Revenue taken back (`refunded`) or restored (`restored`) now, in cents; 0 otherwise.
    pub cents: i64,
    /// Units of each item taken out of (`refunded`) or put back into (`restored`) the
    /// player's inventory now, and of each currency a currency pack credited, named
    /// `currency:<currency_id>`, taken from or given back to its wallet.
    pub items: BTreeMap<String, i64>,
    /// Units of each item (or `currency:<currency_id>`) the refunds standing on this purchase
    /// could not take back, the player having used or spent them (`refunded` only; empty
    /// otherwise).
    pub unrecovered: BTreeMap<String, i64>,
}

impl Handled {
    /// An answer that moved nothing.
    fn nothing(outcome: Outcome) -> Self {
        Self {
            outcome,
            cents: 0,
            items: BTreeMap::new(),
            unrecovered: BTreeMap::new(),
        }
    }

    /// The answer of what [`settle`] did.
    fn of(settled: Settled) -> Self {
        match settled {
            Settled::Stepped(step, unrecovered) => Self {
                outcome: match step.kind {
                    StepKind::Refund => Outcome::Refunded,
                    StepKind::Reversal => Outcome::Restored,
                },
                cents: step.cents,
                items: step.items.into_iter().collect(),
                unrecovered: match step.kind {
                    StepKind::Refund => unrecovered,
                    StepKind::Reversal => BTreeMap::new(),
                },
            },
            Settled::Unchanged => Self::nothing(Outcome::Unchanged),
            Settled::Duplicate => Self::nothing(Outcome::Duplicate),
            Settled::Waiting => Self::nothing(Outcome::Waiting),
        }
    }
}

/// A refusal of a notification that proves nothing.
fn invalid(why: impl Into<String>) -> ServiceError {
    ServiceError::NotificationInvalid(why.into())
}

/// An App Store Server Notification (its `signedPayload`) for `game_id`.
pub async fn app_store(
    state: &Services,
    game_id: Uuid,
    signed_payload: String,
) -> ServiceResult<Handled> {
    let game = access::load(state, game_id).await?;
    let Some(app) = game.view().stores.app_store.clone() else {
        return Err(invalid(
            "the game has no App Store settings to check the notification against",
        ));
    };
    // A chain costs milliseconds of a core: on the verifiers' bounded pool, as a receipt's.
    let verified = state
        .receipts
        .run(move |roots| {
            let expect = AppleExpect {
                bundle_id: &app.bundle_id,
                app_apple_id: app.app_apple_id.and_then(|id| i64::try_from(id).ok()),
            };
            verify_apple_notification(&signed_payload, roots, &expect)
        })
        .await?;
    let notification = verified.map_err(|e| invalid(format!("{} ({})", e, e.reason())))?;
    let action = match notification.kind {
        AppleNotificationKind::Refund | AppleNotificationKind::Revoke => Action::Refund,
        AppleNotificationKind::RefundReversed => Action::Reverse,
        AppleNotificationKind::Other(_) => return Ok(Handled::nothing(Outcome::Ignored)),
    };
    let Some(transaction) = notification.transaction else {
        return Ok(Handled::nothing(Outcome::Ignored));
    };
    let target = Target {
        game_id,
        env: match notification.environment {
            AppleEnvironment::Production => Environment::Production,
            AppleEnvironment::Sandbox | AppleEnvironment::Xcode => Environment::Sandbox,
        },
        store: Store::AppStore,
        transaction_id: transaction.transaction_id,
    };
    let handled = Handled::of(settle(state, &target, &notification.uuid, action).await?);
    log(&target, &handled);
    Ok(handled)
}

/// A Google Play notification pushed by Pub/Sub (`body`, the whole push) for `game_id`,
/// presenting `token`.
pub async fn google_play(
    state: &Services,
    game_id: Uuid,
    token: Option<&str>,
    body: &[u8],
) -> ServiceResult<Handled> {
    let game = access::load(state, game_id).await?;
    let view = game.view();
    if !token.is_some_and(|token| token_matches(&view.stores, token)) {
        return Err(invalid(
            "the notification token is missing or is not the game's",
        ));
    }
    let Some(app) = &view.stores.google_play else {
        return Err(invalid(
            "the game has no Google Play settings to check the notification against",
        ));
    };
    let notification = parse_google_notification(body)
        .map_err(|e| ServiceError::invalid("message", e.to_string()))?;
    if notification.package_name != app.package_name {
        return Err(invalid(format!(
            "the notification is about the app `{}`, not the game's",
            notification.package_name
        )));
    }
    let Some(voided) = notification.voided else {
        return Ok(Handled::nothing(Outcome::Ignored));
    };
    // Refund type 2 refunds some of a purchase's quantity: one unit per notification.
    let action = if voided.refund_type == 2 {
        Action::RefundUnit
    } else {
        Action::Refund
    };
    let target = Target {
        game_id,
        env: Environment::Production,
        store: Store::GooglePlay,
        transaction_id: voided.purchase_token,
    };
    let handled = Handled::of(settle(state, &target, &notification.message_id, action).await?);
    log(&target, &handled);
    Ok(handled)
}

/// One line per notification that reached a transaction.
fn log(target: &Target, handled: &Handled) {
    tracing::info!(
        game_id = %target.game_id,
        store = target.store.as_str(),
        outcome = ?handled.outcome,
        cents = handled.cents,
        unrecovered = handled.unrecovered.values().sum::<i64>(),
        "store notification applied"
    );
}
