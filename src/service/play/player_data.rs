//! A player's data request: everything the engine holds about one player of a game, in one
//! document, so a studio answers a player's request for a copy of their data in one call.
//!
//! Each environment (production, sandbox) gives the player's days of play, its sessions with
//! the attributes they carried, its balances, inventory and lifetime spend, every ledger line
//! kept (oldest first, purchases with how they were proven), and the store transactions it
//! redeemed; beside them its group and the variant each experiment assigns it. The sessions
//! and the redemptions are found by reading the environment's collections and keeping the
//! player's: a support request, not a hot path.
//!
//! The decision records of the player's sessions still within their time to live
//! (`offers.decision_ttl_s`, a day by default) are in it too, as the dashboard shows them:
//! what was decided for each of its requests, and why. They are kept by decision id with
//! no index by player, so they are found by walking the game's records (and this node's
//! ring, for the ones not yet written to the store).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::pipeline::variant_of;
use offer_wire::socket::InventoryItem;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::service::economy::population;
use crate::service::game::offer_config;
use crate::service::play::players::{PlayerGroup, PlayerLedgerLine, PurchaseTotals};
use crate::service::play::receipts::redemptions;
use crate::service::play::{decision_codec, inventory, sessions};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::DecisionFilter;

/// Everything the engine holds about one player of a game.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PlayerExport {
    /// The game.
    pub game_id: Uuid,
    /// The player.
    pub player_id: String,
    /// When this document was put together.
    pub exported_at: DateTime<Utc>,
    /// Holdout or treatment: the hash of the player id and the game id, stored nowhere.
    pub group: PlayerGroup,
    /// The variant each of the game's experiments assigns the player (a hash too; the first
    /// experiment prices the offers it is served).
    pub experiments: Vec<ExperimentAssignment>,
    /// What each environment holds, production first.
    pub environments: Vec<EnvironmentData>,
}

/// The variant an experiment assigns the player.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExperimentAssignment {
    /// The experiment.
    pub experiment_id: Uuid,
    /// Its variant for the player.
    pub variant: String,
}

/// What one environment holds about the player.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EnvironmentData {
    /// Production or sandbox.
    pub environment: Environment,
    /// The UTC day it first played (`null`: never played here).
    #[schema(value_type = Option<String>, format = Date)]
    pub install_day: Option<NaiveDate>,
    /// The UTC day it last played.
    #[schema(value_type = Option<String>, format = Date)]
    pub last_seen: Option<NaiveDate>,
    /// The `platform` of its latest session that had one.
    pub platform: Option<String>,
    /// Its sessions, oldest first, with the attributes each carried.
    pub sessions: Vec<ExportedSession>,
    /// Balance of each of the game's currencies.
    pub balances: BTreeMap<String, i64>,
    /// The items it holds.
    pub inventory: Vec<InventoryItem>,
    /// Lifetime real-money spend in cents.
    pub lifetime_spend_cents: i64,
    /// Every ledger line kept, oldest first.
    pub ledger: Vec<PlayerLedgerLine>,
    /// Its purchases in cents by how they were proven.
    pub purchases: PurchaseTotals,
    /// The store transactions it redeemed.
    pub store_transactions: Vec<RedeemedTransaction>,
    /// The decision records of its sessions still kept, oldest first (each as
    /// `GET /v1/games/{game_id}/offers/{offer_id}` shows it).
    #[schema(value_type = Vec<Object>)]
    pub decisions: Vec<serde_json::Value>,
}

/// A session of the player.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExportedSession {
    /// The session.
    pub session_id: Uuid,
    /// When it opened.
    pub created_at: DateTime<Utc>,
    /// The attributes it carried (country, platform, level, ...).
    #[schema(value_type = Object)]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

/// A store transaction the player redeemed with a purchase.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RedeemedTransaction {
    /// `app_store:<transaction id>` or `google_play:<purchase token>`.
    pub transaction: String,
    /// The purchase's `tx_id`.
    pub tx_id: String,
    /// The revenue it recorded, in cents.
    pub amount_cents: i64,
    /// The units the receipt bought.
    pub quantity: u32,
    /// The items it granted.
    pub granted: Vec<InventoryItem>,
}

/// Everything held about `player_id` in `game`; 404 when the game holds nothing about it
/// (no session, no day of play, no ledger line, no redeemed transaction in either
/// environment).
pub async fn export(
    state: &Services,
    game: &GameHandle,
    player_id: &str,
) -> ServiceResult<PlayerExport> {
    let game_id = game.view().game.game_id;
    let mut environments = Vec::new();
    for env in [Environment::Production, Environment::Sandbox] {
        environments.push(environment(state, game, env, player_id).await?);
    }
    add_decisions(state, game_id, &mut environments).await?;
    let holds_nothing = environments.iter().all(|e| {
        e.sessions.is_empty()
            && e.install_day.is_none()
            && e.ledger.is_empty()
            && e.store_transactions.is_empty()
    });
    if holds_nothing {
        return Err(ServiceError::NotFound("player"));
    }
    let experiments = offer_config::experiments(state, game_id)
        .await?
        .iter()
        .filter_map(|e| {
            variant_of(e, player_id).map(|variant| ExperimentAssignment {
                experiment_id: e.experiment_id,
                variant,
            })
        })
        .collect();
    Ok(PlayerExport {
        game_id,
        player_id: player_id.to_owned(),
        exported_at: Utc::now(),
        group: PlayerGroup::of(player_id, game_id),
        experiments,
        environments,
    })
}

/// What `env` holds about the player.
async fn environment(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    player_id: &str,
) -> ServiceResult<EnvironmentData> {
    let view = game.view();
    let game_id = view.game.game_id;
    let entry = population::entry(state, game_id, env, player_id).await?;
    let sessions = sessions::of_player(state, game_id, env, player_id)
        .await?
        .into_iter()
        .map(|s| ExportedSession {
            session_id: s.session_id,
            created_at: s.created_at,
            attributes: s.attributes,
        })
        .collect();
    let mut balances = BTreeMap::new();
    for currency in &view.game.currencies {
        let id = currency.currency_id.clone();
        let balance = state.store.balance(game_id, env, player_id, &id).await?;
        balances.insert(id, balance);
    }
    let lines: Vec<_> = state
        .store
        .ledger(game_id, env)
        .await?
        .into_iter()
        .filter(|l| l.player_id == player_id)
        .collect();
    let purchases = PurchaseTotals::of(&lines);
    let store_transactions =
        redemptions::of_player(state.store.as_ref(), (game_id, env), player_id)
            .await?
            .into_iter()
            .map(|(transaction, claim)| RedeemedTransaction {
                transaction,
                tx_id: claim.tx_id,
                amount_cents: claim.amount,
                quantity: claim.quantity,
                granted: claim
                    .grant
                    .into_iter()
                    .map(|(item_id, quantity)| InventoryItem { item_id, quantity })
                    .collect(),
            })
            .collect();
    Ok(EnvironmentData {
        environment: env,
        install_day: entry.as_ref().map(|e| e.install_day),
        last_seen: entry.as_ref().and_then(|e| e.last_seen),
        platform: entry.and_then(|e| e.platform),
        sessions,
        balances,
        inventory: InventoryItem::list(
            inventory::read(state.store.as_ref(), game_id, env, player_id).await?,
        ),
        lifetime_spend_cents: state.store.spend_cents(game_id, env, player_id).await?,
        ledger: lines.into_iter().map(PlayerLedgerLine::from).collect(),
        purchases,
        store_transactions,
        decisions: Vec::new(),
    })
}

/// The fields of a stored decision record that place it.
#[derive(Deserialize)]
struct Placed {
    offer_id: Uuid,
    session_id: Uuid,
    #[serde(default)]
    decided_at: Option<DateTime<Utc>>,
}

/// Adds to each environment the decision records of its sessions: this node's ring and the
/// store's records (one walk over the game's), each once, oldest first.
async fn add_decisions(
    state: &Services,
    game_id: Uuid,
    environments: &mut [EnvironmentData],
) -> ServiceResult<()> {
    let env_of: HashMap<Uuid, usize> = environments
        .iter()
        .enumerate()
        .flat_map(|(i, e)| e.sessions.iter().map(move |s| (s.session_id, i)))
        .collect();
    if env_of.is_empty() {
        return Ok(());
    }
    let sessions: Arc<HashSet<Uuid>> = Arc::new(env_of.keys().copied().collect());
    let mut found: BTreeMap<Uuid, (Option<DateTime<Utc>>, usize, serde_json::Value)> =
        BTreeMap::new();
    for record in state.decisions.of_sessions(game_id, &sessions) {
        let Some(&env) = env_of.get(&record.session_id) else {
            continue;
        };
        let value = serde_json::to_value(&*record)
            .map_err(|e| ServiceError::Internal(format!("decision record: {e}")))?;
        found.insert(record.offer_id, (Some(record.decided_at), env, value));
    }
    let wanted = Arc::clone(&sessions);
    let keep: DecisionFilter = Arc::new(move |bytes: &[u8]| {
        decision_codec::decode::<Placed>(bytes).is_ok_and(|p| wanted.contains(&p.session_id))
    });
    for bytes in state.store.find_decisions(game_id, keep).await? {
        let placed: Placed = decision_codec::decode(&bytes)?;
        let Some(&env) = env_of.get(&placed.session_id) else {
            continue;
        };
        if let std::collections::btree_map::Entry::Vacant(slot) = found.entry(placed.offer_id) {
            let value: serde_json::Value = decision_codec::decode(&bytes)?;
            slot.insert((placed.decided_at, env, value));
        }
    }
    let mut ordered: Vec<_> = found.into_values().collect();
    ordered.sort_by_key(|(at, _, _)| *at);
    for (_, env, value) in ordered {
        environments[env].decisions.push(value);
    }
    Ok(())
}
