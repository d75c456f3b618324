//! A player's erasure (a request to be forgotten): everything the engine keeps about one
//! player of a game is deleted, or kept under a random tombstone where the studio's figures
//! need it, in both environments; the player's sessions are closed on every node.
//!
//! Deleted: the sessions (with their attributes) and their frequency-cap counters, the
//! wallet balances and the inventory. Kept under the tombstone, with nothing else changed:
//! the population entry (install day, last day, platform: what counts the player among its
//! group's players), the lifetime and daily spends, the day totals the day caps count, the
//! ledger lines, the idempotency records, the experiments' exposures, the redeemed store
//! transactions, the refund records and the player's revenue written down when receipt
//! checks began (what the verified figures subtract). So the holdout comparison, the revenue share, the
//! bill and the experiments' results do not move by a cent, and a redeemed receipt stays
//! redeemed (another player presenting it is still sharing it).
//!
//! The tombstone is `erased-<random UUID>`, drawn again until it hashes into the player's
//! own holdout group ([`is_holdout`]; about two draws on average for a treated player, ten
//! for a held-out one), so every record it keeps counts in the same group without the group
//! being stored anywhere. The group stays a hash of the id: the same id coming back later
//! lands in the same group again, and starts with nothing.
//!
//! Decision records name a session, never a player: once the session is deleted nothing
//! links them to the player, and they expire with their time to live.
//!
//! Retry: an erasure first writes a marker, keyed by a hash of the game and the player id
//! (never the id), holding the tombstone; every step after it is safe to run again (a
//! deleted document stays deleted, a renamed record is not found again), and the marker is
//! deleted last. An erasure stopped half way (a crash, a store outage) is finished by asking
//! again: the marker gives the same tombstone, and a player with nothing left but the
//! marker is still erased rather than a 404. The audit trail records the erasure
//! (`player.erase`, the object the tombstone) when the marker goes, so it names the
//! tombstone and never the id.
//!
//! Cost: it reads the game's sessions, redemptions and refund records of both environments
//! and each environment's ledger, and the store's step walks the game's idempotency records
//! and ledger once per environment (see the store's erasure). An admin operation, not a hot
//! path.

use offer_actors::GameHandle;
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use offer_wire::bus::BusMessage;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::service::audit::{Audit, Watched, audited};
use crate::service::economy::{population, verified_baseline};
use crate::service::play::receipts::redemptions;
use crate::service::play::{caps, refunds, sessions};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::codec::{decode, encode};
use crate::store::inventory::{self, Place};
use crate::store::{Collection, PlayerErasure};

/// Most tombstones drawn to find one in the player's group (each draw lands in the holdout
/// one time in ten): not reached in practice.
const MAX_DRAWS: usize = 1000;

/// The answer to an erasure.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Erased {
    /// The game.
    pub game_id: Uuid,
    /// Always `true`: the player is erased (also when an earlier, interrupted erasure of it
    /// was finished now).
    pub erased: bool,
    /// The id the kept records go on under (`erased-<uuid>`), as the audit trail names it.
    pub tombstone: String,
}

/// The marker of an erasure in progress, keyed by [`marker_id`].
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Marker {
    /// The tombstone of the erasure.
    tombstone: String,
}

/// The collection of a game's erasures in progress.
fn markers(game_id: Uuid) -> Collection {
    Collection::game(game_id, "erasures")
}

/// The marker's id: SHA-256 of the game id and the player id, hex, so that the marker
/// never holds the id (and is deleted when the erasure ends).
fn marker_id(game_id: Uuid, player_id: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(game_id.as_bytes());
    hasher.update(player_id.as_bytes());
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A random tombstone in the same holdout group as `player_id`.
fn draw_tombstone(game_id: Uuid, player_id: &str) -> ServiceResult<String> {
    let group = is_holdout(player_id, game_id);
    (0..MAX_DRAWS)
        .map(|_| format!("erased-{}", Uuid::new_v4()))
        .find(|t| is_holdout(t, game_id) == group)
        .ok_or_else(|| ServiceError::Internal("no tombstone in the player's group".into()))
}

/// Erases `player_id` from `game` (see the module documentation). A player the game holds
/// nothing about, and whose erasure is not in progress, is a 404.
pub async fn erase(
    state: &Services,
    by: &ChangedBy,
    game: &GameHandle,
    player_id: &str,
) -> ServiceResult<Erased> {
    let view = game.view();
    let game_id = view.game.game_id;
    let coll = markers(game_id);
    let id = marker_id(game_id, player_id);
    let tombstone = match state.store.get(coll, &id).await? {
        Some(bytes) => decode::<Marker>(&bytes)?.tombstone,
        None => {
            if !holds_anything(state, game_id, player_id).await? {
                return Err(ServiceError::NotFound("player"));
            }
            let marker = Marker {
                tombstone: draw_tombstone(game_id, player_id)?,
            };
            if !state.store.insert_new(coll, &id, encode(&marker)?).await? {
                // Another request started the same erasure first: finish it with its
                // tombstone.
                let bytes = state
                    .store
                    .get(coll, &id)
                    .await?
                    .ok_or_else(|| ServiceError::Conflict("the erasure moved; retry".into()))?;
                decode::<Marker>(&bytes)?.tombstone
            } else {
                marker.tombstone
            }
        }
    };
    let audit = Audit::of_game(
        &view.game.studio_id,
        game_id,
        "player.erase",
        ObjectRef::new("player", &tombstone),
        vec![Watched::new(coll, &id)],
    );
    audited(&*state.store, by, audit, async || {
        close_sessions(state, game_id, player_id).await?;
        verified_baseline::rename(state, game_id, player_id, &tombstone).await?;
        for env in [Environment::Production, Environment::Sandbox] {
            erase_environment(state, (game_id, env), player_id, &tombstone).await?;
        }
        // Once more: a node that reopened a session from its document in the meantime lets
        // it go now that the document is gone.
        close_sessions(state, game_id, player_id).await?;
        state.store.delete(coll, &id).await?;
        Ok(())
    })
    .await?;
    Ok(Erased {
        game_id,
        erased: true,
        tombstone,
    })
}

/// Whether the game holds anything about the player: a population entry, a session, a
/// ledger line or a redeemed transaction in either environment (what the export finds).
async fn holds_anything(state: &Services, game_id: Uuid, player_id: &str) -> ServiceResult<bool> {
    for env in [Environment::Production, Environment::Sandbox] {
        if population::entry(state, game_id, env, player_id)
            .await?
            .is_some()
            || !sessions::of_player(state, game_id, env, player_id)
                .await?
                .is_empty()
            || state
                .store
                .ledger(game_id, env)
                .await?
                .iter()
                .any(|l| l.player_id == player_id)
            || !redemptions::of_player(state.store.as_ref(), (game_id, env), player_id)
                .await?
                .is_empty()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Closes the player's open sessions on this node and forgets that it counted the player
/// today, and tells every node to do the same (their sockets are closed with
/// `player_erased`).
async fn close_sessions(state: &Services, game_id: Uuid, player_id: &str) -> ServiceResult<()> {
    state.actors.close_player_sessions(game_id, player_id);
    state.sightings.forget(game_id, player_id);
    state
        .store
        .publish(&BusMessage::PlayerErased {
            game_id,
            player_id: player_id.to_owned(),
        })
        .await?;
    Ok(())
}

/// Erases the player from one environment.
async fn erase_environment(
    state: &Services,
    (game_id, env): (Uuid, Environment),
    player_id: &str,
    tombstone: &str,
) -> ServiceResult<()> {
    let closed = sessions::forget_player(state, game_id, env, player_id).await?;
    caps::forget(state, game_id, env, &closed).await?;
    inventory::forget(
        state.store.as_ref(),
        Place {
            game_id,
            env,
            player_id,
        },
    )
    .await?;
    state
        .store
        .erase_player(&PlayerErasure {
            game_id,
            env,
            player_id: player_id.to_owned(),
            tombstone: tombstone.to_owned(),
        })
        .await?;
    for coll in [
        redemptions::collection(game_id, env),
        refunds::records(game_id, env),
    ] {
        rename_documents(state, coll, player_id, tombstone).await?;
    }
    // Last: until the entry moves, a retry still finds the player.
    population::rename(state, game_id, env, player_id, tombstone).await?;
    Ok(())
}

/// Renames the player to the tombstone in every document of `coll` whose `player_id` is
/// the player (a redemption's claim, a refund record; they are keyed by store
/// transaction). Only that field: an item or `tx_id` that happens to read like the
/// player id is left alone.
async fn rename_documents(
    state: &Services,
    coll: Collection,
    player_id: &str,
    tombstone: &str,
) -> ServiceResult<()> {
    let mut renamed = Vec::new();
    for (id, bytes) in state.store.list(coll).await? {
        let mut doc: serde_json::Value = decode(&bytes)?;
        match doc.get_mut("player_id") {
            Some(serde_json::Value::String(p)) if p == player_id => {
                tombstone.clone_into(p);
                renamed.push((id, encode(&doc)?));
            }
            _ => {}
        }
    }
    if !renamed.is_empty() {
        state.store.put_all(coll, renamed).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use offer_domain::audit::Via;

    use super::*;
    use crate::service::test_support::{new_game, with_services};
    use crate::store::{MoneyKind, MoneyOp, MoneyOutcome};

    /// A money event of `player` in `env`.
    fn money(game_id: Uuid, env: Environment, player: &str, kind: MoneyKind) -> MoneyOp {
        MoneyOp {
            game_id,
            env,
            player_id: player.into(),
            tx_id: "t1".into(),
            kind,
            currency_id: if kind.is_revenue() { "" } else { "gold" }.into(),
            amount: 499,
            ts: Utc::now(),
            holdout: is_holdout(player, game_id),
            import: false,
            cohort: None,
            proof: None,
            day_cap: None,
        }
    }

    #[test]
    fn an_erasure_stopped_half_way_is_finished_with_its_tombstone() {
        with_services(async |state| {
            let game = new_game(&state, "g").await;
            let game_id = game.view().game.game_id;
            let player = "erase-me-again";
            let today = Utc::now().date_naive();
            for (env, kind) in [
                (Environment::Production, MoneyKind::Purchase),
                (Environment::Sandbox, MoneyKind::Earned),
            ] {
                population::count_played(&state, game_id, env, player, today, None)
                    .await
                    .expect("played");
                let applied = state
                    .store
                    .apply_money(&money(game_id, env, player, kind))
                    .await
                    .expect("money");
                assert!(
                    matches!(applied, MoneyOutcome::Applied { .. }),
                    "{applied:?}"
                );
            }
            // A first erasure wrote its marker and finished production, then stopped.
            let tombstone = draw_tombstone(game_id, player).expect("tombstone");
            let marker = Marker {
                tombstone: tombstone.clone(),
            };
            let id = marker_id(game_id, player);
            let coll = markers(game_id);
            state
                .store
                .insert_new(coll, &id, encode(&marker).expect("encode"))
                .await
                .expect("marker");
            erase_environment(
                &state,
                (game_id, Environment::Production),
                player,
                &tombstone,
            )
            .await
            .expect("production erased");

            // Asked again, it finishes the sandbox under the same tombstone.
            let by = ChangedBy::member("admin@example.com", Via::Rest);
            let erased = erase(&state, &by, &game, player).await.expect("finished");
            assert_eq!(erased.tombstone, tombstone);
            for env in [Environment::Production, Environment::Sandbox] {
                let entry = population::entry(&state, game_id, env, &tombstone).await;
                assert!(entry.expect("entry").is_some(), "{env:?}");
                let gone = population::entry(&state, game_id, env, player).await;
                assert!(gone.expect("entry").is_none(), "{env:?}");
            }
            let spend = state
                .store
                .spend_cents(game_id, Environment::Production, &tombstone);
            assert_eq!(spend.await.expect("spend"), 499);
            let balance = state
                .store
                .balance(game_id, Environment::Sandbox, player, "gold")
                .await;
            assert_eq!(balance.expect("balance"), 0);
            let marker = state.store.get(coll, &id).await.expect("marker");
            assert!(marker.is_none(), "the marker goes last");
            // Nothing is left: a third ask is a 404.
            assert!(matches!(
                erase(&state, &by, &game, player).await,
                Err(ServiceError::NotFound("player"))
            ));
        });
    }

    #[test]
    fn a_tombstone_is_drawn_in_the_players_own_group() {
        let game_id = Uuid::new_v4();
        let mut groups = [0, 0];
        for n in 0..200 {
            let player = format!("player-{n}");
            let tombstone = draw_tombstone(game_id, &player).expect("a tombstone");
            assert!(tombstone.starts_with("erased-"), "{tombstone}");
            assert_eq!(
                is_holdout(&tombstone, game_id),
                is_holdout(&player, game_id),
                "{player} -> {tombstone}"
            );
            groups[usize::from(is_holdout(&player, game_id))] += 1;
        }
        assert!(
            groups[0] > 0 && groups[1] > 0,
            "both groups drawn: {groups:?}"
        );
    }

    #[test]
    fn the_marker_never_holds_the_id() {
        let game_id = Uuid::new_v4();
        let id = marker_id(game_id, "erase-me");
        assert_eq!(id.len(), 64);
        assert!(!id.contains("erase-me"));
        assert_ne!(id, marker_id(Uuid::new_v4(), "erase-me"));
    }
}
