//! The open sessions of a node, each identified by its [`SessionKey`], found by their key
//! and by their player.
//!
//! A money event sent over REST, and any change of a player's inventory, pushes the new
//! balance or inventory to the player's own sessions on every node (an event sent on a
//! socket is answered on that socket). Found by scanning every open session, each such push
//! cost a look at every session of every game on the node (tens of thousands on a busy
//! node, for one or two that match), so its cost grew with the node's sessions.
//! The sessions are therefore also indexed by player: one entry per (game, environment,
//! player), holding that player's sessions.
//!
//! The index is keyed by a hash of the three ids (with this node's random keys) rather
//! than a copy of the player id: a few words per player. Players whose hashes collide
//! share an entry, and a lookup checks each session's own ids, so a collision costs a
//! comparison, never a wrong recipient.
//!
//! Both maps change together: a session enters the index while its key's shard is locked
//! for the insert, and leaves it while the sweeper holds that shard to remove it, so no
//! lookup by key finds a session the index lacks. The locks are always taken in that
//! order (key, then player), never the other way.

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use dashmap::DashMap;
use dashmap::mapref::entry::Entry;
use offer_domain::environment::Environment;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

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

/// The open sessions, by key and by player.
pub(crate) struct OpenSessions {
    by_key: DashMap<SessionKey, SessionHandle>,
    by_player: DashMap<u64, Vec<SessionHandle>>,
    hasher: RandomState,
}

impl OpenSessions {
    /// No session open.
    pub(crate) fn new() -> Self {
        Self {
            by_key: DashMap::new(),
            by_player: DashMap::new(),
            hasher: RandomState::new(),
        }
    }

    /// The index key of a player's sessions.
    fn player_slot(&self, game_id: Uuid, env: Environment, player_id: &str) -> u64 {
        self.hasher.hash_one((game_id, env, player_id))
    }

    /// An open session.
    pub(crate) fn get(&self, key: &SessionKey) -> Option<SessionHandle> {
        self.by_key.get(key).map(|s| s.clone())
    }

    /// Opens the session, or returns it if it is already open.
    pub(crate) fn open(&self, info: SessionInfo, player: PlayerContext) -> SessionHandle {
        self.by_key
            .entry(SessionKey::of(&info))
            .or_insert_with(|| {
                let slot = self.player_slot(info.game_id, info.env, &info.player_id);
                let session = SessionHandle::new(info, player);
                self.by_player
                    .entry(slot)
                    .or_default()
                    .push(session.clone());
                session
            })
            .clone()
    }

    /// Calls `f` on every open session of a game. The game is read from each entry's key,
    /// beside it in the map, so another game's session costs no look at the session.
    pub(crate) fn for_each_of_game(&self, game_id: Uuid, mut f: impl FnMut(&SessionHandle)) {
        for s in self.by_key.iter() {
            if s.key().game_id == game_id {
                f(s.value());
            }
        }
    }

    /// The open sessions of one player of a game in `env` (one or two). They are copied out
    /// of the index, so the caller holds no lock of it and may use the registry freely.
    pub(crate) fn of_player(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> Vec<SessionHandle> {
        let Some(entry) = self
            .by_player
            .get(&self.player_slot(game_id, env, player_id))
        else {
            return Vec::new();
        };
        entry
            .iter()
            .filter(|s| {
                let info = s.info();
                info.game_id == game_id && info.env == env && info.player_id == player_id
            })
            .cloned()
            .collect()
    }

    /// Closes every open session of one player of a game, in both environments: each is
    /// forgotten and its socket, if any, is cut off as erased. How many it closed.
    pub(crate) fn close_player(&self, game_id: Uuid, player_id: &str) -> usize {
        let mut closed = 0;
        for env in [Environment::Production, Environment::Sandbox] {
            for session in self.of_player(game_id, env, player_id) {
                // Out of the index while the key's shard is locked, as the sweeper does.
                let removed =
                    self.by_key
                        .remove_if(&SessionKey::of(session.info()), |key, open| {
                            self.unindex(key, open);
                            true
                        });
                if let Some((_, removed)) = removed {
                    removed.close_erased();
                    closed += 1;
                }
            }
        }
        closed
    }

    /// Forgets the sessions that have no socket and were not used for `idle_ttl`.
    pub(crate) fn forget_idle(&self, idle_ttl: Duration) {
        self.by_key.retain(|key, session| {
            if !session.expired(idle_ttl) {
                return true;
            }
            self.unindex(key, session);
            false
        });
    }

    /// Takes a session out of the player index (its key's shard is locked by the caller).
    fn unindex(&self, key: &SessionKey, session: &SessionHandle) {
        let info = session.info();
        let slot = self.player_slot(info.game_id, info.env, &info.player_id);
        if let Entry::Occupied(mut entry) = self.by_player.entry(slot) {
            entry.get_mut().retain(|s| SessionKey::of(s.info()) != *key);
            if entry.get().is_empty() {
                entry.remove();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(game_id: Uuid, env: Environment, player: &str) -> SessionInfo {
        SessionInfo {
            session_id: Uuid::new_v4(),
            game_id,
            env,
            player_id: player.into(),
        }
    }

    fn open(sessions: &OpenSessions, info: SessionInfo) -> SessionHandle {
        let player = PlayerContext::new(&info.player_id, info.game_id);
        sessions.open(info, player)
    }

    fn ids_of_player(
        sessions: &OpenSessions,
        game_id: Uuid,
        env: Environment,
        player: &str,
    ) -> Vec<Uuid> {
        let mut ids: Vec<Uuid> = sessions
            .of_player(game_id, env, player)
            .iter()
            .map(|s| s.info().session_id)
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_player_lookup_finds_exactly_that_players_sessions() {
        let sessions = OpenSessions::new();
        let (game, other_game) = (Uuid::new_v4(), Uuid::new_v4());
        let prod = Environment::Production;
        let mut mine = vec![
            open(&sessions, info(game, prod, "p1")).info().session_id,
            open(&sessions, info(game, prod, "p1")).info().session_id,
        ];
        mine.sort();
        open(&sessions, info(game, prod, "p2"));
        open(&sessions, info(game, Environment::Sandbox, "p1"));
        open(&sessions, info(other_game, prod, "p1"));

        assert_eq!(ids_of_player(&sessions, game, prod, "p1"), mine);
        assert_eq!(ids_of_player(&sessions, game, prod, "p2").len(), 1);
        assert_eq!(
            ids_of_player(&sessions, game, Environment::Sandbox, "p1").len(),
            1
        );
        assert!(ids_of_player(&sessions, game, prod, "nobody").is_empty());

        let mut of_game = 0;
        sessions.for_each_of_game(game, |_| of_game += 1);
        assert_eq!(of_game, 4);
    }

    #[test]
    fn opening_an_open_session_again_indexes_it_once() {
        let sessions = OpenSessions::new();
        let game = Uuid::new_v4();
        let first = info(game, Environment::Production, "p1");
        open(&sessions, first.clone());
        open(&sessions, first);
        assert_eq!(
            ids_of_player(&sessions, game, Environment::Production, "p1").len(),
            1
        );
    }

    #[test]
    fn a_session_of_the_player_may_open_while_a_lookups_sessions_are_in_use() {
        let sessions = std::sync::Arc::new(OpenSessions::new());
        let game = Uuid::new_v4();
        let prod = Environment::Production;
        open(&sessions, info(game, prod, "p1"));
        let (done, finished) = std::sync::mpsc::channel();
        let shared = sessions.clone();
        // On a thread of its own: a lookup that still held the index's lock while its
        // sessions are used would hang it.
        std::thread::spawn(move || {
            for _ in shared.of_player(game, prod, "p1") {
                open(&shared, info(game, prod, "p1"));
            }
            let _ = done.send(());
        });
        assert!(
            finished.recv_timeout(Duration::from_secs(10)).is_ok(),
            "opening a session waited on a lock the lookup held"
        );
        assert_eq!(ids_of_player(&sessions, game, prod, "p1").len(), 2);
    }

    #[test]
    fn forgetting_an_idle_session_takes_it_out_of_both_maps() {
        let sessions = OpenSessions::new();
        let game = Uuid::new_v4();
        let prod = Environment::Production;
        let gone = open(&sessions, info(game, prod, "p1"));
        let key = SessionKey::of(gone.info());
        // Idle time is kept in milliseconds: let one pass.
        std::thread::sleep(Duration::from_millis(5));
        sessions.forget_idle(Duration::ZERO);
        assert!(sessions.get(&key).is_none());
        assert!(ids_of_player(&sessions, game, prod, "p1").is_empty());
        assert!(sessions.by_player.is_empty(), "an emptied entry is removed");

        // A player's remaining session stays findable after another of theirs is forgotten.
        let kept = open(&sessions, info(game, prod, "p1"));
        kept.touch();
        sessions.forget_idle(Duration::from_secs(3600));
        assert_eq!(
            ids_of_player(&sessions, game, prod, "p1"),
            vec![kept.info().session_id]
        );
    }
}
