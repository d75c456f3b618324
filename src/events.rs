//! SDK events (`POST /v1/sdk/events` and the WebSocket `event` message): their wire shape,
//! validation, and what each one changes.
//!
//! Telemetry events feed the session's live features and the L1 model; money events go
//! through the store's atomic wallet step (idempotent by `tx_id`). Currency enters wallets
//! only through `currency_earned`; `purchase` records real-money revenue.

use chrono::{DateTime, Utc};
use offer_actors::session::SessionChange;
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::game::Game;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::{Environment, MoneyKind, MoneyOp, MoneyOutcome};

/// Largest amount of one money event.
const MAX_AMOUNT: i64 = 1_000_000_000;

/// One SDK event.
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
        currency_id: String,
        /// Units, positive.
        amount: i64,
        /// Where it came from.
        #[serde(default)]
        source: Option<String>,
        /// Idempotency key.
        tx_id: String,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// Currency leaves the wallet (sink); refused above the balance.
    CurrencySpent {
        /// The currency.
        currency_id: String,
        /// Units, positive.
        amount: i64,
        /// Where it went.
        #[serde(default)]
        sink: Option<String>,
        /// Idempotency key.
        tx_id: String,
        /// Client time.
        #[serde(default)]
        ts: Option<DateTime<Utc>>,
    },
    /// A real-money purchase.
    Purchase {
        /// The offer bought, if it came from one.
        #[serde(default)]
        offer_id: Option<Uuid>,
        /// Items bought.
        item_ids: Vec<String>,
        /// Money paid, in cents.
        price_cents: i64,
        /// Idempotency key.
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

/// A refused event.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Rejected {
    /// Position in the batch.
    pub index: usize,
    /// `insufficient_funds` or `sdk_disabled`.
    pub code: &'static str,
    /// Explanation.
    pub message: String,
}

/// What applying one event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Applied {
    /// Applied (or an idempotent replay); the new balance of a money event.
    Accepted(Option<(String, i64)>),
    /// Refused with a code and message; nothing changed.
    Rejected(&'static str, String),
}

/// How far an SDK event's `ts` may be from the server's clock. Money events land in the
/// day aggregates by `ts`, so a client must not write into another week; history goes
/// through the admin import.
const MAX_CLOCK_SKEW_HOURS: i64 = 24;

/// Checks every event of a batch before any is applied, so a bad batch changes nothing.
pub fn validate_all(game: &Game, events: &[SdkEvent]) -> ApiResult<()> {
    let mut errors = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if let Err(reason) = validate(game, e) {
            errors.push(offer_domain::validation::FieldError::new("events", reason).at(i));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Validation(errors))
    }
}

/// Checks one event.
pub fn validate(game: &Game, e: &SdkEvent) -> Result<(), String> {
    if let Some(ts) = e.ts()
        && (ts - Utc::now()).num_hours().abs() >= MAX_CLOCK_SKEW_HOURS
    {
        return Err(format!(
            "ts must be within {MAX_CLOCK_SKEW_HOURS} hours of the server's clock; send history through the admin import"
        ));
    }
    let currency = |id: &str| {
        if game.currencies.iter().any(|c| c.currency_id == id) {
            Ok(())
        } else {
            Err(format!("unknown currency `{id}`"))
        }
    };
    let tx = |tx: &str| {
        if tx.is_empty() || tx.len() > 128 {
            Err("tx_id must be 1 to 128 characters".to_owned())
        } else {
            Ok(())
        }
    };
    let amount = |a: i64| {
        if (1..=MAX_AMOUNT).contains(&a) {
            Ok(())
        } else {
            Err(format!("amount must be between 1 and {MAX_AMOUNT}"))
        }
    };
    match e {
        SdkEvent::CurrencyLow { currency_id, .. } => currency(currency_id),
        SdkEvent::CurrencyEarned {
            currency_id,
            amount: a,
            tx_id,
            ..
        }
        | SdkEvent::CurrencySpent {
            currency_id,
            amount: a,
            tx_id,
            ..
        } => currency(currency_id).and(tx(tx_id)).and(amount(*a)),
        SdkEvent::Purchase {
            item_ids,
            price_cents,
            tx_id,
            ..
        } => {
            tx(tx_id)?;
            if item_ids.len() > 50 {
                return Err("at most 50 item_ids".into());
            }
            if !(0..=10_000_000).contains(price_cents) {
                return Err("price_cents must be between 0 and 10000000".into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Applies one validated event for a session.
pub async fn apply(
    state: &AppState,
    game: &GameHandle,
    session: &SessionHandle,
    env: Environment,
    event: &SdkEvent,
) -> ApiResult<Applied> {
    let info = session.info();
    let money = |kind: MoneyKind,
                 currency_id: &str,
                 amount: i64,
                 tx_id: &str,
                 ts: &Option<DateTime<Utc>>| MoneyOp {
        game_id: info.game_id,
        env,
        player_id: info.player_id.clone(),
        tx_id: tx_id.to_owned(),
        kind,
        currency_id: currency_id.to_owned(),
        amount,
        ts: ts.unwrap_or_else(Utc::now),
        holdout: session.player(false).holdout,
        import: false,
    };
    let op = match event {
        SdkEvent::SessionStart { .. } => {
            session.touch();
            return Ok(Applied::Accepted(None));
        }
        SdkEvent::OfferShown { offer_id, .. } => {
            session.event_seen();
            crate::offers::learn(state, game, *offer_id, false);
            return Ok(Applied::Accepted(None));
        }
        SdkEvent::CurrencyLow { .. }
        | SdkEvent::FirstLoss { .. }
        | SdkEvent::BossRaid { .. }
        | SdkEvent::OfferDismissed { .. } => {
            session.event_seen();
            return Ok(Applied::Accepted(None));
        }
        SdkEvent::CurrencyEarned {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => money(MoneyKind::Earned, currency_id, *amount, tx_id, ts),
        SdkEvent::CurrencySpent {
            currency_id,
            amount,
            tx_id,
            ts,
            ..
        } => money(MoneyKind::Spent, currency_id, *amount, tx_id, ts),
        SdkEvent::Purchase {
            price_cents,
            tx_id,
            ts,
            ..
        } => money(MoneyKind::Purchase, "", *price_cents, tx_id, ts),
    };
    session.event_seen();
    Ok(match state.store.apply_money(&op).await? {
        MoneyOutcome::Applied { balance } => {
            if let SdkEvent::Purchase {
                offer_id,
                price_cents,
                ..
            } = event
            {
                session.change(SessionChange::Spent(*price_cents));
                if let Some(offer_id) = offer_id {
                    crate::offers::learn(state, game, *offer_id, true);
                }
                Applied::Accepted(None)
            } else {
                Applied::Accepted(Some((op.currency_id, balance)))
            }
        }
        MoneyOutcome::Duplicate { balance } => match op.kind {
            MoneyKind::Purchase => Applied::Accepted(None),
            _ => Applied::Accepted(Some((op.currency_id, balance))),
        },
        MoneyOutcome::InsufficientFunds { balance } => Applied::Rejected(
            "insufficient_funds",
            format!(
                "balance of {} is {balance}, below {}",
                op.currency_id, op.amount
            ),
        ),
        MoneyOutcome::TxConflict => Applied::Rejected(
            "tx_id_reused",
            format!(
                "tx_id `{}` was already used for a different change",
                op.tx_id
            ),
        ),
        MoneyOutcome::KillSwitch => Applied::Rejected(
            "sdk_disabled",
            "the SDK is disabled for this game (kill switch level 3)".into(),
        ),
    })
}
