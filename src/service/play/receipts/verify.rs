//! One purchase's receipt judged against its game's store settings: the store's signature
//! (by the `offer-receipts` crate), the app it was sold in, the environment it was sold in,
//! and the state of the purchase. Pure and blocking: [`super::pool`] runs it off the async
//! threads.
//!
//! Environments: a game's production (live keys) expects Apple's `Production`; its sandbox
//! (test keys) expects `Sandbox` or `Xcode`. A sandbox transaction on a live key is refused,
//! unless the game accepts it (`accept_sandbox_on_live`: App Review buys in the sandbox
//! against production builds), and then it grants its items but is never revenue. Google
//! Play's purchase data names no environment.

use offer_domain::environment::Environment;
use offer_domain::product_ids::Store;
use offer_domain::store_settings::{AppStoreSettings, GooglePlaySettings};
use offer_receipts::{
    AppleEnvironment, AppleExpect, AppleRoots, GoogleKey, ReceiptError, UnityReceipt,
    parse_unity_receipt, verify_apple_transaction, verify_google_purchase,
};
use offer_wire::event::Receipt;

/// What a verified receipt proves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The store that signed it.
    pub store: Store,
    /// The store's id of the purchase, unique in the store: Apple's `transactionId`,
    /// Google's `purchaseToken`. A transaction is redeemed once in a game.
    pub transaction_id: String,
    /// The store product sold.
    pub product_id: String,
    /// Units bought (at least 1).
    pub quantity: u32,
    /// A sandbox transaction accepted on a live key: no money moved.
    pub sandbox: bool,
}

/// Why a receipt proves nothing: a stable reason and a message for the developer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// The short reason (`signature`, `wrong_bundle`, `environment`, ...).
    pub reason: &'static str,
    /// What was wrong.
    pub detail: String,
}

impl Invalid {
    /// A refusal of the receipts crate.
    fn from_error(err: &ReceiptError) -> Self {
        Self {
            reason: err.reason(),
            detail: err.to_string(),
        }
    }

    /// A refusal of this module's own.
    fn new(reason: &'static str, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }
}

/// A game's side of the check: its stores, as configured when the purchase arrived.
#[derive(Debug, Clone)]
pub struct Expected {
    /// The session's environment (live or test keys).
    pub env: Environment,
    /// The App Store app, if configured.
    pub app_store: Option<AppStoreSettings>,
    /// The Google Play app, if configured.
    pub google_play: Option<GooglePlaySettings>,
}

/// Judges `receipt` against `expected`, trusting `roots` for Apple's chains.
pub fn verify(
    receipt: &Receipt,
    expected: &Expected,
    roots: &AppleRoots,
) -> Result<Verified, Invalid> {
    match receipt {
        Receipt::AppStore { signed_transaction } => app_store(signed_transaction, expected, roots),
        Receipt::GooglePlay {
            purchase_data,
            signature,
        } => google_play(purchase_data, signature, expected),
        Receipt::Unity { receipt } => {
            match parse_unity_receipt(receipt).map_err(|e| Invalid::from_error(&e))? {
                UnityReceipt::AppStore { signed_transaction } => {
                    app_store(&signed_transaction, expected, roots)
                }
                UnityReceipt::GooglePlay {
                    purchase_data,
                    signature,
                } => google_play(&purchase_data, &signature, expected),
            }
        }
    }
}

/// A StoreKit 2 signed transaction.
fn app_store(jws: &str, expected: &Expected, roots: &AppleRoots) -> Result<Verified, Invalid> {
    let Some(app) = &expected.app_store else {
        return Err(not_configured(Store::AppStore));
    };
    let expect = AppleExpect {
        bundle_id: &app.bundle_id,
        app_apple_id: app.app_apple_id.and_then(|id| i64::try_from(id).ok()),
    };
    let transaction =
        verify_apple_transaction(jws, roots, &expect).map_err(|e| Invalid::from_error(&e))?;
    if transaction.revocation_date_ms.is_some() {
        return Err(Invalid::new(
            "revoked",
            "the store revoked or refunded this transaction",
        ));
    }
    let sandbox = match (expected.env, transaction.environment) {
        (Environment::Production, AppleEnvironment::Production)
        | (Environment::Sandbox, AppleEnvironment::Sandbox | AppleEnvironment::Xcode) => false,
        (Environment::Production, AppleEnvironment::Sandbox | AppleEnvironment::Xcode)
            if app.accept_sandbox_on_live =>
        {
            true
        }
        (env, store_env) => {
            return Err(Invalid::new(
                "environment",
                format!(
                    "a {} transaction on a {} key",
                    store_env.as_str(),
                    match env {
                        Environment::Production => "live",
                        Environment::Sandbox => "test",
                    }
                ),
            ));
        }
    };
    Ok(Verified {
        store: Store::AppStore,
        transaction_id: transaction.transaction_id,
        product_id: transaction.product_id,
        quantity: transaction.quantity,
        sandbox,
    })
}

/// A Google Play purchase's data and signature.
fn google_play(data: &str, signature: &str, expected: &Expected) -> Result<Verified, Invalid> {
    let Some(app) = &expected.google_play else {
        return Err(not_configured(Store::GooglePlay));
    };
    // The key was checked when the settings were saved; one that no longer loads is the
    // studio's configuration, reported as such.
    let key = GoogleKey::from_base64_der(&app.public_key).map_err(|e| Invalid::from_error(&e))?;
    let purchase = verify_google_purchase(data, signature, &key, &app.package_name)
        .map_err(|e| Invalid::from_error(&e))?;
    Ok(Verified {
        store: Store::GooglePlay,
        transaction_id: purchase.purchase_token,
        product_id: purchase.product_id,
        quantity: purchase.quantity.max(1),
        sandbox: false,
    })
}

/// A receipt of a store the game has not configured.
fn not_configured(store: Store) -> Invalid {
    Invalid::new(
        "store_not_configured",
        format!(
            "the game has no {} settings to check this receipt against",
            store.as_str()
        ),
    )
}
