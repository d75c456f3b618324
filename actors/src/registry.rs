//! The actor registry: the shards (one `Arbiter` per core) and the live game actors.
//!
//! `actix` has no work stealing and `Actor::start` panics outside an actix context, so
//! actors are always started here, on the shard their id hashes to, never from a handler.

use std::hash::{Hash, Hasher};

use actix_rt::{Arbiter, ArbiterHandle};
use dashmap::DashMap;
use offer_domain::catalogue::Item;
use offer_domain::game::Game;
use uuid::Uuid;

use crate::game::GameHandle;

/// The shards and the game actors living on them.
pub struct ActorSystem {
    arbiters: Vec<Arbiter>,
    games: DashMap<Uuid, GameHandle>,
}

impl ActorSystem {
    /// Starts `shards` arbiters (at least one). Must run inside an actix `System` (the
    /// service's bootstrap runs it under `System::with_tokio_rt`).
    pub fn start(shards: usize) -> Self {
        let arbiters = (0..shards.max(1)).map(|_| Arbiter::new()).collect();
        Self {
            arbiters,
            games: DashMap::new(),
        }
    }

    /// Number of shards.
    pub fn shards(&self) -> usize {
        self.arbiters.len()
    }

    fn shard_for(&self, id: &Uuid) -> ArbiterHandle {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut h);
        let n = self.arbiters.len() as u64;
        // The modulo result is below the shard count, which fits in usize.
        #[allow(clippy::cast_possible_truncation)]
        let i = (h.finish() % n) as usize;
        self.arbiters[i].handle()
    }

    /// The running actor of a game, if this node has loaded it.
    pub fn game(&self, game_id: &Uuid) -> Option<GameHandle> {
        self.games.get(game_id).map(|g| g.clone())
    }

    /// Starts the actor of a game with the state just loaded from the store. If another
    /// request started it meanwhile, that actor wins and the given state is dropped.
    pub fn start_game(&self, game: Game, items: Vec<Item>) -> GameHandle {
        let id = game.game_id;
        self.games
            .entry(id)
            .or_insert_with(|| GameHandle::start(&self.shard_for(&id), game, items))
            .clone()
    }

    /// Stops every shard (on shutdown).
    pub fn stop(&self) {
        for a in &self.arbiters {
            a.stop();
        }
    }
}
