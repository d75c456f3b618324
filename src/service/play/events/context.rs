//! What applying one event of a session works with ([`Context`]): the services, the game, the
//! session and where the event came from; the wallet and inventory steps of the session's
//! player; and the announcements that let every node push a changed inventory or balance to
//! the player's sessions.

use chrono::{DateTime, Utc};
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_wire::bus::BusMessage;

use crate::service::Services;
use crate::service::play::inventory::{InventoryChange, InventoryOp};
use crate::store::{MoneyKind, MoneyOp};

/// Where an event came from, which decides who hears of a change it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// The session's own socket, which answers it with the inventory and the balance: the
    /// player's other sessions hear of an inventory change.
    Socket,
    /// `POST /v1/sdk/events`: every session of the player hears of an inventory or balance
    /// change, this one included.
    Rest,
}

/// One event of one session, and what applying it works with.
pub(super) struct Context<'a> {
    /// The use cases' shared parts.
    pub state: &'a Services,
    /// The session's game.
    pub game: &'a GameHandle,
    /// The session.
    pub session: &'a SessionHandle,
    /// The session's environment.
    pub env: Environment,
    /// Where the event came from.
    pub origin: Origin,
}

impl Context<'_> {
    /// The wallet step of a money event of this session's player.
    pub(super) fn money(
        &self,
        kind: MoneyKind,
        currency_id: &str,
        amount: i64,
        tx_id: &str,
        ts: &Option<DateTime<Utc>>,
    ) -> MoneyOp {
        let info = self.session.info();
        let player = self.session.player(false);
        MoneyOp {
            game_id: info.game_id,
            env: self.env,
            player_id: info.player_id.clone(),
            tx_id: tx_id.to_owned(),
            kind,
            currency_id: currency_id.to_owned(),
            amount,
            ts: ts.unwrap_or_else(Utc::now),
            holdout: player.holdout,
            import: false,
            cohort: player.install_day.map(cohort_of),
            proof: None,
            day_cap: None,
        }
    }

    /// An inventory step of this session's player.
    pub(super) fn items(&self, tx_id: &str, change: InventoryChange) -> InventoryOp {
        let info = self.session.info();
        InventoryOp {
            game_id: info.game_id,
            env: self.env,
            player_id: info.player_id.clone(),
            tx_id: tx_id.to_owned(),
            change,
        }
    }
}

/// Tells every node that a player's inventory changed, so that each pushes it to the
/// player's sessions there. The change is stored: a bus that fails only costs the push.
pub(super) async fn announce_inventory(cx: &Context<'_>) {
    let info = cx.session.info();
    let msg = BusMessage::InventoryChanged {
        game_id: info.game_id,
        env: info.env,
        player_id: info.player_id.clone(),
        answered: (cx.origin == Origin::Socket).then_some(info.session_id),
    };
    if let Err(e) = cx.state.store.publish(&msg).await {
        tracing::warn!(game_id = %info.game_id, error = %e, "inventory push not published");
    }
}

/// Tells every node that a REST-sent money event moved a player's balance, so that each
/// pushes the balance to the player's sessions there (an event sent on a socket is answered
/// with its balance on that socket). The change is stored: a bus that fails only costs the
/// push.
pub(super) async fn announce_balance(cx: &Context<'_>, currency_id: &str) {
    let info = cx.session.info();
    let msg = BusMessage::BalanceChanged {
        game_id: info.game_id,
        env: info.env,
        player_id: info.player_id.clone(),
        currency_id: currency_id.to_owned(),
    };
    if let Err(e) = cx.state.store.publish(&msg).await {
        tracing::warn!(game_id = %info.game_id, error = %e, "balance push not published");
    }
}
