//! Test support for the services' own unit tests: services over a fresh in-memory embedded
//! store, inside the actix system the actors need, and a game to work on.

use std::sync::Arc;
use std::time::Duration;

use offer_actors::{ActorSystem, GameHandle};

use super::Services;
use super::game::games::{self, NewGame};
use crate::config::Settings;
use crate::store::sqlite::{SqliteOptions, SqliteStore};

/// Runs `test` with services over a fresh in-memory embedded store; stops the actors after.
pub fn with_services(test: impl AsyncFnOnce(Services)) {
    actix_rt::System::new().block_on(async {
        let settings = Settings::load(None).expect("default settings");
        let genres = settings.genres().expect("genres");
        let plans = settings.plans().expect("plans");
        let actors = ActorSystem::start(1, Duration::from_secs(60));
        let store = SqliteStore::open(&SqliteOptions::in_memory()).expect("in-memory store");
        let services = Services::new(settings, Arc::new(store), actors, genres, plans);
        test(services.clone()).await;
        services.actors.stop();
    });
}

/// A new rpg game named `name` of studio `studio`, with no currencies or items.
pub async fn new_game(services: &Services, name: &str) -> GameHandle {
    games::create(
        services,
        &offer_domain::audit::ChangedBy::member(
            "tester@example.com",
            offer_domain::audit::Via::Rest,
        ),
        "studio",
        NewGame {
            name: name.into(),
            genre: "rpg".into(),
            currencies: Vec::new(),
            items: Vec::new(),
            guardrails: Default::default(),
        },
    )
    .await
    .expect("game")
}
