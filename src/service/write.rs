//! The one write path for a game: lock, write, publish to the actor, notify the bus.
//!
//! The order matters. The store is written first, so a game's live view never shows what
//! the store has not confirmed; the actor is changed next, so this node serves the change
//! as soon as the call returns; the other nodes hear last, and reload from the store (or,
//! for a kill switch, apply the level carried in the message).

use offer_actors::{GameChange, GameHandle};
use uuid::Uuid;

use super::{ServiceResult, Services};
use offer_wire::bus::BusMessage;

/// What a write under [`Services::commit`] did: its result, and the change to publish when
/// the store now holds one.
pub struct Committed<T> {
    value: T,
    change: Option<GameChange>,
}

impl<T> Committed<T> {
    /// Nothing changed, so nothing is published.
    pub fn unchanged(value: T) -> Self {
        Self {
            value,
            change: None,
        }
    }

    /// The store holds `change`: the game's actor and the other nodes must hear of it.
    pub fn changed(value: T, change: GameChange) -> Self {
        Self {
            value,
            change: Some(change),
        }
    }
}

impl Services {
    /// Runs `write` under the game's write lock on this node, then publishes the change it
    /// made to the game's actor and to the other nodes. `write` reads and writes the store;
    /// everything before its first store write is free to fail.
    pub async fn commit<T>(
        &self,
        handle: &GameHandle,
        write: impl AsyncFnOnce() -> ServiceResult<Committed<T>>,
    ) -> ServiceResult<T> {
        let game_id = handle.view().game.game_id;
        let lock = self.write_lock(game_id);
        let _guard = lock.lock().await;
        let Committed { value, change } = write().await?;
        if let Some(change) = change {
            let message = self.bus_message(game_id, &change);
            handle.change(change).await?;
            self.store.publish(&message).await?;
        }
        Ok(value)
    }

    /// What the other nodes hear of a change: the kill switch travels in full (so each node
    /// applies it without a store read, and the wallet step sees it at once); anything else
    /// makes them reload the game.
    fn bus_message(&self, game_id: Uuid, change: &GameChange) -> BusMessage {
        match change {
            GameChange::KillSwitch(ks) => BusMessage::KillSwitch {
                game_id,
                level: ks.level.as_u8(),
                reason: ks.reason.clone(),
                updated_at: ks.updated_at,
            },
            _ => BusMessage::GameChanged {
                game_id,
                origin: self.node_id,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use offer_domain::kill_level::KillLevel;
    use offer_domain::offer::KillSwitch;

    use super::*;
    use crate::service::ServiceError;
    use crate::service::test_support::{new_game, with_services};

    fn kill_switch(level: u8) -> KillSwitch {
        KillSwitch {
            level: KillLevel::try_from(level).expect("a level"),
            reason: "test".into(),
            updated_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn a_change_reaches_the_actor_and_the_bus() {
        with_services(async |services| {
            let game = new_game(&services, "Write path").await;
            let mut bus = services.store.subscribe();
            let version = game.view().version;
            let ks = kill_switch(1);
            let value = services
                .commit(&game, async || {
                    Ok(Committed::changed(7, GameChange::KillSwitch(ks.clone())))
                })
                .await
                .expect("commit");
            assert_eq!(value, 7);
            assert_eq!(game.view().kill_switch, ks);
            assert!(game.view().version > version);
            match bus.recv().await.expect("bus message") {
                BusMessage::KillSwitch { level, .. } => assert_eq!(level, 1),
                other => panic!("expected a kill switch on the bus, got {other:?}"),
            }
        });
    }

    #[test]
    fn nothing_is_published_when_nothing_changed_or_the_write_failed() {
        with_services(async |services| {
            let game = new_game(&services, "Write path").await;
            let mut bus = services.store.subscribe();
            let version = game.view().version;
            let unchanged = services
                .commit(&game, async || Ok(Committed::unchanged("same")))
                .await
                .expect("commit");
            assert_eq!(unchanged, "same");
            let failed = services
                .commit(&game, async || -> ServiceResult<Committed<()>> {
                    Err(ServiceError::Conflict("refused".into()))
                })
                .await;
            assert!(matches!(failed, Err(ServiceError::Conflict(_))));
            assert_eq!(game.view().version, version);
            assert!(bus.try_recv().is_err(), "no bus message expected");
        });
    }

    #[test]
    fn writes_of_one_game_are_serialised() {
        with_services(async |services| {
            let game = new_game(&services, "Write path").await;
            let inside = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let writers = (0..8).map(|_| {
                let (services, game) = (services.clone(), game.clone());
                let (inside, most) = (inside.clone(), most.clone());
                async move {
                    services
                        .commit(&game, async || {
                            let now = inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            most.fetch_max(now + 1, std::sync::atomic::Ordering::SeqCst);
                            tokio::time::sleep(Duration::from_millis(2)).await;
                            inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                            Ok(Committed::unchanged(()))
                        })
                        .await
                }
            });
            for result in futures::future::join_all(writers).await {
                result.expect("commit");
            }
            assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 1);
        });
    }
}
