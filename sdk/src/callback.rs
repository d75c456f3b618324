//! What the SDK tells the game: one value per engine push or SDK happening, queued for the
//! game to drain on a thread of its choosing (each frame, as engine plugins do), never run on
//! the network thread. The C ABI maps these onto the seven `SVC_Dart_On...` callbacks.

use offer_domain::game::Mode;
use offer_domain::offer::KillSwitch;

/// One line of the player's inventory (always a positive quantity: an item used up is
/// absent), as the engine's `ready` and `inventory` messages list it.
pub use offer_wire::socket::InventoryItem;

/// One callback for the game.
#[derive(Debug, Clone, PartialEq)]
pub enum SdkCallback {
    /// The session is open on the socket; the state it carries is the game's now.
    Ready {
        /// Whether the socket resumed from the last `seq` (nothing was missed) or started
        /// afresh (the state below replaces whatever the game held).
        resumed: bool,
        /// The kill switch.
        kill_switch: KillSwitch,
        /// The operating mode.
        mode: Mode,
        /// The configuration's version.
        config_version: u64,
        /// The player's inventory now.
        inventory: Vec<InventoryItem>,
    },
    /// An offer to show, with the engine's fields (`offer_id`, `items`, `price_cents`,
    /// `expires_at`, ...).
    Offer(serde_json::Value),
    /// No offer for the moment asked about; `outcome` says why (`kill_switch`, `holdout`,
    /// `frequency_capped`, `suppressed`).
    NoOffer {
        /// Why.
        outcome: String,
    },
    /// A wallet balance after a money event.
    Balance {
        /// The currency.
        currency_id: String,
        /// Its balance.
        balance: i64,
    },
    /// The player's whole inventory after a change of it (a purchase's items, an
    /// `item_used`).
    Inventory(Vec<InventoryItem>),
    /// The game's configuration changed.
    Config {
        /// The new version.
        config_version: u64,
        /// The published custom page, or `None` when none was ever published.
        custom_page: Option<serde_json::Value>,
    },
    /// The kill switch changed.
    KillSwitch(KillSwitch),
    /// The SDK needs a new player token (see [`crate::player_token`]): the game asks its
    /// backend for one and gives it with [`crate::Sdk::set_player_token`].
    PlayerTokenNeeded {
        /// `expiring` (the token's `exp` is near or past) or `refused` (the engine refused it).
        reason: String,
        /// The player the token is for, when the SDK holds a token.
        player_id: Option<String>,
        /// The held token's `exp`, in Unix seconds, when it has one.
        expires_at: Option<i64>,
        /// The engine's refusal, for `refused`.
        refusal: Option<Refusal>,
    },
    /// Something went wrong that the game may want to show or log: a refused message
    /// (`code` as the engine sent it) or an SDK-side failure (`code` starting with `sdk_`).
    Error {
        /// A stable code.
        code: String,
        /// For people.
        message: String,
    },
}

/// The refusal codes of a player token, as the engine answers them.
const CODE_PREFIX: &str = "player_token_";

/// The engine's refusal of the SDK's token: its code (`player_token_required`,
/// `player_token_invalid`, `player_token_mismatch`) and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The engine's code.
    pub code: String,
    /// The engine's message (it names the reason, for example `expired`).
    pub message: String,
}

impl Refusal {
    /// The refusal in an engine error, when `code` is a player token's.
    pub fn of(code: &str, message: &str) -> Option<Self> {
        code.starts_with(CODE_PREFIX).then(|| Self {
            code: code.to_owned(),
            message: message.to_owned(),
        })
    }
}
