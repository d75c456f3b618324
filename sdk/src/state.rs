//! What the SDK knows of the game (kill switch, mode, configuration, published custom page),
//! where that knowledge came from, and its copy on disk for the next cold start.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use offer_domain::game::Mode;
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::KillSwitch;
use serde::{Deserialize, Serialize};

use crate::storage;

/// The cache file in the SDK's data directory.
const CACHE_FILE: &str = "state.json";

/// Where the SDK's current state came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateSource {
    /// The engine answered in this run (status, session or socket).
    Live,
    /// The copy a previous run kept on disk; the engine has not answered yet.
    Cached,
    /// Neither: the built-in defaults (kill switch off, shadow mode, no configuration).
    Default,
}

/// The game's state as the SDK last learnt it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GameState {
    /// The kill switch.
    pub kill_switch: KillSwitch,
    /// The operating mode.
    pub mode: Mode,
    /// The live configuration's version.
    pub config_version: u64,
    /// The published custom page (`{page_id, version, template, bindings}`), or `None`
    /// when none was ever published.
    pub custom_page: Option<serde_json::Value>,
}

/// The state shared by the game's thread and the SDK's, kept on disk on every change.
#[derive(Debug)]
pub struct SharedState {
    inner: Mutex<(GameState, StateSource)>,
    cache: PathBuf,
}

impl SharedState {
    /// The cached state of `data_dir` when a readable copy exists (`Cached`), the defaults
    /// otherwise (`Default`). A damaged cache is ignored: it is rewritten on the next change.
    pub fn load(data_dir: &Path) -> Self {
        let cache = data_dir.join(CACHE_FILE);
        let cached = std::fs::read(&cache)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<GameState>(&bytes).ok());
        let inner = match cached {
            Some(state) => (state, StateSource::Cached),
            None => (GameState::default(), StateSource::Default),
        };
        Self {
            inner: Mutex::new(inner),
            cache,
        }
    }

    /// The current state and its source.
    pub fn get(&self) -> (GameState, StateSource) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The kill switch's level now.
    pub fn kill_level(&self) -> KillLevel {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .0
            .kill_switch
            .level
    }

    /// Applies what the engine just said: the state becomes `Live` and is written to the
    /// cache. Returns the state before the change. A cache that cannot be written only
    /// costs the next cold start its copy, so the error is returned for the caller to report.
    pub fn update(&self, change: impl FnOnce(&mut GameState)) -> (GameState, std::io::Result<()>) {
        let (before, after) = {
            let mut guard = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            let before = guard.0.clone();
            change(&mut guard.0);
            guard.1 = StateSource::Live;
            (before, guard.0.clone())
        };
        let written = serde_json::to_vec(&after)
            .map_err(std::io::Error::other)
            .and_then(|bytes| storage::write_atomically(&self.cache, &bytes));
        (before, written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_live_and_the_next_load_is_cached() {
        let dir = std::env::temp_dir().join(format!("offer-sdk-state-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let state = SharedState::load(&dir);
        assert_eq!(state.get().1, StateSource::Default);
        let (_, written) = state.update(|s| {
            s.kill_switch.level = KillLevel::OffersOff;
            s.config_version = 7;
            s.custom_page = Some(serde_json::json!({"page_id": "p", "version": 2}));
        });
        written.expect("cache written");
        assert_eq!(state.get().1, StateSource::Live);
        let again = SharedState::load(&dir);
        let (cached, source) = again.get();
        assert_eq!(source, StateSource::Cached);
        assert_eq!(cached.kill_switch.level, KillLevel::OffersOff);
        assert_eq!(cached.config_version, 7);
        assert!(cached.custom_page.is_some());
        let _ = std::fs::remove_dir_all(dir);
    }
}
