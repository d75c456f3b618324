//! The actor registry: the shards (one `Arbiter` per core), the live game actors and the
//! open sessions (kept by `open_sessions.rs`), with the sweeper that forgets idle
//! sessions.
//!
//! `actix` has no work stealing and `Actor::start` panics outside an actix context, so
//! actors are always started here, on the shard their id hashes to, never from a handler.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Weak};
use std::time::Duration;

use actix_rt::{Arbiter, ArbiterHandle};
use dashmap::DashMap;
use offer_domain::environment::Environment;
use offer_domain::game::Game;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

use crate::game::{GameConfig, GameHandle};
use crate::open_sessions::{OpenSessions, SessionKey};
use crate::session::{SessionHandle, SessionInfo};

/// The shards and the actors living on them, and the open sessions.
pub struct ActorSystem {
    arbiters: Vec<Arbiter>,
    games: DashMap<Uuid, GameHandle>,
    sessions: Arc<OpenSessions>,
}

impl ActorSystem {
    /// Starts `shards` arbiters (at least one). Must run inside an actix `System` (the
    /// service's bootstrap runs it under `System::with_tokio_rt`). A session without a
    /// socket is forgotten after `session_idle_ttl` without activity, by a sweeper on the
    /// first shard that looks every quarter of that time (at least every 250 ms).
    pub fn start(shards: usize, session_idle_ttl: Duration) -> Self {
        let arbiters: Vec<Arbiter> = (0..shards.max(1)).map(|_| Arbiter::new()).collect();
        let sessions = Arc::new(OpenSessions::new());
        if let Some(first) = arbiters.first() {
            first.spawn(sweep_idle_sessions(
                Arc::downgrade(&sessions),
                session_idle_ttl,
            ));
        }
        Self {
            arbiters,
            games: DashMap::new(),
            sessions,
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
        self.sessions.get(key)
    }

    /// Opens (or returns the already open) session. Sessions are keyed by game,
    /// environment and id together: a client-chosen id can never reach another game's or
    /// environment's session.
    pub fn open_session(&self, info: SessionInfo, player: PlayerContext) -> SessionHandle {
        self.sessions.open(info, player)
    }

    /// Calls `f` on every open session of a game on this node (kill-switch and config
    /// fan-out) without collecting them: a broadcast allocates nothing per recipient.
    pub fn for_each_session_of(&self, game_id: Uuid, f: impl FnMut(&SessionHandle)) {
        self.sessions.for_each_of_game(game_id, f);
    }

    /// The open sessions of one player of a game in `env` on this node (the push of a
    /// changed balance or inventory), found without looking at anyone else's.
    pub fn sessions_of_player(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> Vec<SessionHandle> {
        self.sessions.of_player(game_id, env, player_id)
    }

    /// Closes every open session of one player of a game on this node (both environments),
    /// cutting off their sockets: the player was erased. How many it closed.
    pub fn close_player_sessions(&self, game_id: Uuid, player_id: &str) -> usize {
        self.sessions.close_player(game_id, player_id)
    }

    /// Stops every shard (on shutdown).
    pub fn stop(&self) {
        for a in &self.arbiters {
            a.stop();
        }
    }
}

/// Forgets, every quarter of `idle_ttl` (at least every 250 ms), the sessions that have no
/// socket and were not used for `idle_ttl`; ends with the registry.
async fn sweep_idle_sessions(sessions: Weak<OpenSessions>, idle_ttl: Duration) {
    let every = (idle_ttl / 4).max(Duration::from_millis(250));
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        sessions.forget_idle(idle_ttl);
    }
}
