//! The actor registry: the shards (one `Arbiter` per core), the live game actors and the
//! open sessions.
//!
//! `actix` has no work stealing and `Actor::start` panics outside an actix context, so
//! actors are always started here, on the shard their id hashes to, never from a handler.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use actix_rt::{Arbiter, ArbiterHandle};
use dashmap::DashMap;
use offer_domain::environment::Environment;
use offer_domain::game::Game;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

use crate::game::{GameConfig, GameHandle};
use crate::session::{SessionHandle, SessionInfo};

/// What identifies an open session on a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionKey {
    /// The game.
    pub game_id: Uuid,
    /// Production or sandbox: a test key never reaches a production session.
    pub env: Environment,
    /// The client-chosen id.
    pub session_id: Uuid,
}

impl SessionKey {
    /// The key of a session.
    pub fn of(info: &SessionInfo) -> Self {
        Self {
            game_id: info.game_id,
            env: info.env,
            session_id: info.session_id,
        }
    }
}

/// The shards and the actors living on them.
pub struct ActorSystem {
    arbiters: Vec<Arbiter>,
    games: DashMap<Uuid, GameHandle>,
    sessions: Arc<DashMap<SessionKey, SessionHandle>>,
    session_idle_ttl: Duration,
}

impl ActorSystem {
    /// Starts `shards` arbiters (at least one). Must run inside an actix `System` (the
    /// service's bootstrap runs it under `System::with_tokio_rt`). A session without a
    /// socket stops after `session_idle_ttl` without activity.
    pub fn start(shards: usize, session_idle_ttl: Duration) -> Self {
        let arbiters = (0..shards.max(1)).map(|_| Arbiter::new()).collect();
        Self {
            arbiters,
            games: DashMap::new(),
            sessions: Arc::new(DashMap::new()),
            session_idle_ttl,
        }
    }

    fn shard_for(&self, id: &Uuid) -> ArbiterHandle {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        id.hash(&mut h);
        let n = self.arbiters.len() as u64;
        // The modulo result is below the shard count, which fits in usize.
        let i = (h.finish() % n) as usize;
        self.arbiters[i].handle()
    }

    /// The running actor of a game, if this node has loaded it.
    pub fn game(&self, game_id: &Uuid) -> Option<GameHandle> {
        self.games.get(game_id).map(|g| g.clone())
    }

    /// Every game this node serves.
    pub fn games(&self) -> Vec<GameHandle> {
        self.games.iter().map(|g| g.clone()).collect()
    }

    /// Starts the actor of a game with the state just loaded from the store. If another
    /// request started it meanwhile, that actor wins and the given state is dropped.
    pub fn start_game(&self, game: Game, config: GameConfig) -> GameHandle {
        let id = game.game_id;
        self.games
            .entry(id)
            .or_insert_with(|| GameHandle::start(&self.shard_for(&id), game, config))
            .clone()
    }

    /// An open session on this node.
    pub fn session(&self, key: &SessionKey) -> Option<SessionHandle> {
        self.sessions.get(key).map(|s| s.clone())
    }

    /// Opens (or returns the already open) session actor. Sessions are keyed by game,
    /// environment and id together: a client-chosen id can never reach another game's or
    /// environment's session.
    pub fn open_session(&self, info: SessionInfo, player: PlayerContext) -> SessionHandle {
        let key = SessionKey::of(&info);
        let id = info.session_id;
        let sessions = Arc::downgrade(&self.sessions);
        self.sessions
            .entry(key)
            .or_insert_with(|| {
                SessionHandle::start(
                    &self.shard_for(&id),
                    info,
                    player,
                    self.session_idle_ttl,
                    Box::new(move || {
                        if let Some(s) = sessions.upgrade() {
                            s.remove(&key);
                        }
                    }),
                )
            })
            .clone()
    }

    /// Calls `f` on every open session of a game on this node (kill-switch and config
    /// fan-out) without collecting them: a broadcast allocates nothing per recipient.
    pub fn for_each_session_of(&self, game_id: Uuid, mut f: impl FnMut(&SessionHandle)) {
        for s in self.sessions.iter() {
            if s.info().game_id == game_id {
                f(s.value());
            }
        }
    }

    /// Stops every shard (on shutdown).
    pub fn stop(&self) {
        for a in &self.arbiters {
            a.stop();
        }
    }
}
