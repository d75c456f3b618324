//! The `purchase` event: what a purchase grants and what it counts, by the game's receipt
//! verification.
//!
//! - `off`: as the game reports it, the client's items at the client's price.
//! - `report` and `enforce`: a receipt the store signed for one of the game's products grants
//!   that product (its item, or its bundle's items, each by its catalogue `quantity`, times
//!   the receipt's `quantity`; a currency pack credits its currency's wallet with as many
//!   units, so the client sends no `currency_earned` for it) and counts its catalogue price
//!   times the receipt's quantity as verified revenue, whatever the client said. Its store transaction is redeemed once: the
//!   same player presenting it again is answered as the first purchase (a replay), another
//!   player gains nothing (`receipt_already_redeemed`).
//! - A purchase without a valid receipt is refused in `enforce` (`receipt_required`,
//!   `receipt_invalid`, `receipt_already_redeemed`); in `report` it is kept as the client
//!   reported it, flagged unverified: it grants its items, and its revenue is kept apart from
//!   every figure the bill is computed on.
//!
//! Then, as for every purchase, the wallet step records the revenue; when it applied the
//! purchase or recognised a replay, the inventory step adds the items under the same
//! `tx_id`, and each currency the product credits is a `currency_earned` wallet step under
//! `<tx_id>:<currency>` (each step is idempotent on its own). A purchase taken as reported
//! (verification `off`, or kept unverified) credits no currency: its client reports it. Only a purchase applied now whose revenue
//! counts raises the player's spend, teaches the offer it bought and counts in that offer's
//! price experiment.

use chrono::{DateTime, Utc};
use offer_actors::session::SessionChange;
use offer_domain::catalogue::Item;
use offer_domain::category::Category;
use offer_domain::currency::Currency;
use offer_domain::product_grant::resolve_product;
use offer_domain::product_ids::Store;
use offer_domain::store_settings::Verification;
use offer_wire::event::Receipt;
use uuid::Uuid;

use super::context::{Context, Origin, announce_balance, announce_inventory};
use super::outcome::{Applied, Balance, Refusal};
use super::validate::find_item;
use crate::service::ServiceResult;
use crate::service::play::exposures;
use crate::service::play::inventory::{self, InventoryChange, InventoryOutcome};
use crate::service::play::offers::learn;
use crate::service::play::receipts::redemptions::{Claim, Redeemed, redeem};
use crate::service::play::receipts::verify::Expected;
use crate::service::play::refunds;
use crate::store::{ExposureTotals, MoneyKind, MoneyOutcome, Proof, StoreError};

/// A purchase event as the game sent it.
pub(super) struct Purchase<'a> {
    /// The offer bought, if any.
    pub offer_id: Option<Uuid>,
    /// The items the client says it bought.
    pub item_ids: &'a [String],
    /// The price the client says it paid, in cents.
    pub price_cents: i64,
    /// The client's idempotency key.
    pub tx_id: &'a str,
    /// The client's time.
    pub ts: &'a Option<DateTime<Utc>>,
    /// The store's receipt, if sent.
    pub receipt: Option<&'a Receipt>,
}

/// What a purchase grants and records, once its proof is judged.
struct Paid {
    /// The `tx_id` the wallet and inventory steps run under: the client's, or for a receipt
    /// its player redeemed before, the first purchase's.
    tx_id: String,
    /// Revenue in cents.
    amount: i64,
    /// Items and units added to the inventory.
    grant: Vec<(String, i64)>,
    /// Currencies and units credited to the wallets (a verified currency pack).
    currency: Vec<(String, i64)>,
    /// How it was proven (`None`: verification is off).
    proof: Option<Proof>,
    /// The store transaction this purchase claimed first, which a refund that arrived
    /// before it may be waiting for.
    claimed: Option<(Store, String)>,
    /// The time of the wallet step (`None`: the server's clock when it runs). A purchase
    /// that claims a transaction fixes it first, so that its claim keeps the very time its
    /// revenue was recorded at.
    ts: Option<DateTime<Utc>>,
}

impl Paid {
    /// The purchase as the client reported it, proven by `proof`.
    fn reported(cx: &Context<'_>, p: &Purchase<'_>, proof: Option<Proof>) -> Self {
        Self {
            tx_id: p.tx_id.to_owned(),
            amount: p.price_cents,
            grant: granted(&cx.game.view().items, p.item_ids, 1),
            currency: Vec::new(),
            proof,
            claimed: None,
            ts: *p.ts,
        }
    }
}

/// `purchase`: judges its proof, then records and grants it (see the module documentation).
pub(super) async fn purchase(cx: &Context<'_>, p: &Purchase<'_>) -> ServiceResult<Applied> {
    cx.session.event_seen();
    let verification = cx.game.view().stores.verification;
    let paid = match (verification, p.receipt) {
        (Verification::Off, _) => Paid::reported(cx, p, None),
        (Verification::Enforce, None) => return Ok(Applied::Rejected(Refusal::ReceiptRequired)),
        (Verification::Report, None) => Paid::reported(cx, p, Some(Proof::Unverified)),
        (mode, Some(receipt)) => match check(cx, p, receipt).await? {
            Ok(paid) => paid,
            Err(refusal) if mode == Verification::Enforce => {
                return Ok(Applied::Rejected(refusal));
            }
            Err(refusal) => {
                tracing::info!(
                    game_id = %cx.game.view().game.game_id,
                    refusal = refusal.code(),
                    "purchase kept unverified"
                );
                Paid::reported(cx, p, Some(Proof::Unverified))
            }
        },
    };
    let claimed = paid.claimed.clone();
    let applied = record(cx, paid, p).await?;
    if let Some((store, transaction_id)) = claimed {
        let game_id = cx.session.info().game_id;
        refunds::after_redemption(cx.state, (game_id, cx.env), (store, &transaction_id)).await;
    }
    Ok(applied)
}

/// Verifies `receipt` and redeems its transaction: what it pays for, or why it pays for
/// nothing.
async fn check(
    cx: &Context<'_>,
    p: &Purchase<'_>,
    receipt: &Receipt,
) -> ServiceResult<Result<Paid, Refusal>> {
    let view = cx.game.view();
    let expected = Expected {
        env: cx.env,
        app_store: view.stores.app_store.clone(),
        google_play: view.stores.google_play.clone(),
    };
    let verified = match cx.state.receipts.verify(receipt.clone(), expected).await? {
        Ok(verified) => verified,
        Err(invalid) => {
            return Ok(Err(Refusal::ReceiptInvalid {
                reason: invalid.reason,
                detail: invalid.detail,
            }));
        }
    };
    let Some(product) = resolve_product(
        verified.store,
        &verified.product_id,
        &view.items,
        &view.bundles,
    ) else {
        return Ok(Err(Refusal::ReceiptInvalid {
            reason: "unknown_product",
            detail: format!(
                "the {} product `{}` is no item or bundle of this game",
                verified.store.as_str(),
                verified.product_id
            ),
        }));
    };
    let quantity = i64::from(verified.quantity);
    let ids: Vec<String> = product.item_ids().into_iter().map(str::to_owned).collect();
    let info = cx.session.info();
    let at = p.ts.unwrap_or_else(Utc::now);
    let claim = Claim {
        player_id: info.player_id.clone(),
        tx_id: p.tx_id.to_owned(),
        amount: product.price_cents().saturating_mul(quantity),
        grant: granted(&view.items, &ids, quantity),
        currency: credited(&view.game.currencies, &view.items, &ids, quantity),
        quantity: verified.quantity,
        purchased_at: Some(at),
    };
    let redeemed = redeem(
        cx.state.store.as_ref(),
        (info.game_id, cx.env),
        (verified.store, &verified.transaction_id),
        &claim,
    )
    .await?;
    // A replay's wallet step is the first purchase's, recognised by its `tx_id`: it runs at
    // the replay's own time, as any event does.
    let (first, claimed, ts) = match redeemed {
        Redeemed::First => (
            claim,
            Some((verified.store, verified.transaction_id)),
            Some(at),
        ),
        Redeemed::Again(first) => (first, None, *p.ts),
        Redeemed::Other => return Ok(Err(Refusal::ReceiptAlreadyRedeemed)),
    };
    Ok(Ok(Paid {
        tx_id: first.tx_id,
        amount: first.amount,
        grant: first.grant,
        currency: first.currency,
        proof: Some(if verified.sandbox {
            Proof::Sandbox
        } else {
            Proof::Verified
        }),
        claimed,
        ts,
    }))
}

/// Records `paid`: the wallet step, then the inventory step under the same `tx_id`.
async fn record(cx: &Context<'_>, paid: Paid, p: &Purchase<'_>) -> ServiceResult<Applied> {
    let mut op = cx.money(MoneyKind::Purchase, "", paid.amount, &paid.tx_id, &paid.ts);
    op.proof = paid.proof;
    let outcome = cx.state.store.apply_money(&op).await?;
    let applied_now = match outcome {
        MoneyOutcome::Applied { .. } => true,
        MoneyOutcome::Duplicate { .. } => false,
        MoneyOutcome::InsufficientFunds { balance } => {
            return Ok(Applied::Rejected(Refusal::InsufficientFunds {
                currency_id: op.currency_id,
                balance,
                amount: op.amount,
            }));
        }
        MoneyOutcome::TxConflict => {
            return Ok(Applied::Rejected(Refusal::TxIdReused { tx_id: op.tx_id }));
        }
        MoneyOutcome::KillSwitch => return Ok(Applied::Rejected(Refusal::SdkDisabled)),
    };
    let balance = credit(cx, &paid, &op.tx_id).await?;
    let inventory = if paid.grant.is_empty() {
        None
    } else {
        let step = cx.items(&op.tx_id, InventoryChange::Add(paid.grant.clone()));
        match inventory::apply(cx.state.store.as_ref(), &step).await? {
            InventoryOutcome::Applied(now) => {
                announce_inventory(cx).await;
                Some(now)
            }
            InventoryOutcome::Duplicate(now) => Some(now),
            // The purchase's tx_id came again with other items (the wallet step's replay
            // does not compare them): nothing more is added.
            InventoryOutcome::TxConflict => {
                return Ok(Applied::Rejected(Refusal::TxIdReused { tx_id: op.tx_id }));
            }
            InventoryOutcome::Insufficient { .. } => {
                return Err(StoreError::Corrupt(
                    "an inventory addition answered insufficient".into(),
                )
                .into());
            }
        }
    };
    if applied_now && op.revenue_counts() {
        cx.session.change(SessionChange::Spent(op.amount));
        if let Some(offer_id) = p.offer_id {
            learn(
                cx.state,
                cx.game,
                cx.session.info().session_id,
                offer_id,
                true,
            );
            let bought = ExposureTotals {
                shown: 0,
                purchases: 1,
                revenue_cents: u64::try_from(op.amount).unwrap_or(0),
            };
            exposures::count(cx.state, cx.session.info(), cx.env, offer_id, bought).await;
        }
    }
    Ok(Applied::Accepted { balance, inventory })
}

/// Credits the currencies a verified currency pack grants, each a `currency_earned` wallet
/// step under `<tx_id>:<currency>` (a replay is recognised by it), with no day cap: paid
/// currency is no client's claim. Answers the new balance of the last currency credited.
async fn credit(cx: &Context<'_>, paid: &Paid, tx_id: &str) -> ServiceResult<Option<Balance>> {
    let mut last = None;
    for (currency_id, units) in &paid.currency {
        let op = cx.money(
            MoneyKind::Earned,
            currency_id,
            *units,
            &format!("{tx_id}:{currency_id}"),
            &paid.ts,
        );
        match cx.state.store.apply_money(&op).await? {
            MoneyOutcome::Applied { balance, .. } => {
                if cx.origin == Origin::Rest {
                    announce_balance(cx, currency_id).await;
                }
                last = Some(Balance {
                    currency_id: currency_id.clone(),
                    balance,
                });
            }
            MoneyOutcome::Duplicate { balance } => {
                last = Some(Balance {
                    currency_id: currency_id.clone(),
                    balance,
                });
            }
            // The purchase's revenue is recorded: the player holds the client's own use of
            // that `tx_id`, or the game turned the SDK off since; the purchase stands.
            outcome @ (MoneyOutcome::TxConflict
            | MoneyOutcome::KillSwitch
            | MoneyOutcome::InsufficientFunds { .. }) => {
                tracing::warn!(
                    game_id = %op.game_id,
                    tx_id = %op.tx_id,
                    ?outcome,
                    "a currency pack's credit was refused"
                );
            }
        }
    }
    Ok(last)
}

/// What a purchase of `item_ids`, `times` over, credits: each currency pack's catalogue
/// `quantity` times `times`, in its currency (the game's only one when the item names
/// none).
fn credited(
    currencies: &[Currency],
    items: &[Item],
    item_ids: &[String],
    times: i64,
) -> Vec<(String, i64)> {
    item_ids
        .iter()
        .filter_map(|id| find_item(items, id))
        .filter(|item| item.category == Category::Currency)
        .filter_map(|item| {
            let currency = item.currency_id.clone().or_else(|| match currencies {
                [only] => Some(only.currency_id.clone()),
                _ => None,
            })?;
            let units = item.quantity?.saturating_mul(times);
            (units > 0).then_some((currency, units))
        })
        .collect()
}

/// What a purchase of `item_ids`, `times` over, puts in the inventory: each non-currency
/// catalogue item's `quantity` units (or 1) times `times`. Currency packs and ids that are
/// no catalogue item add nothing.
fn granted(items: &[Item], item_ids: &[String], times: i64) -> Vec<(String, i64)> {
    item_ids
        .iter()
        .filter_map(|id| find_item(items, id))
        .filter(|item| item.category != Category::Currency)
        .map(|item| {
            (
                item.item_id.clone(),
                item.quantity.unwrap_or(1).saturating_mul(times),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::catalogue;

    use super::*;

    #[test]
    fn a_purchase_grants_its_non_currency_items_by_quantity() {
        let ids: Vec<String> = ["gems_100", "potion", "sword", "shield", "sword"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(
            granted(&catalogue(), &ids, 1),
            vec![
                ("potion".to_owned(), 3),
                ("sword".to_owned(), 1),
                ("sword".to_owned(), 1)
            ]
        );
    }

    #[test]
    fn a_receipt_for_several_units_grants_each_item_that_many_times() {
        let ids: Vec<String> = vec!["potion".into(), "gems_100".into()];
        assert_eq!(
            granted(&catalogue(), &ids, 4),
            vec![("potion".to_owned(), 12)]
        );
    }
}
