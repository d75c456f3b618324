//! The per-game actor and its handle.
//!
//! The actor serialises every change to one game's live state (catalogue, configuration)
//! and, after each change, publishes a new immutable [`GameView`] through an `ArcSwap`, so
//! readers (the offer path, catalogue reads) never wait for the actor.

use std::sync::Arc;

use actix::{Actor, Addr, Context, Handler, Message};
use arc_swap::ArcSwap;
use offer_domain::catalogue::Item;
use offer_domain::game::Game;

use crate::ActorError;

/// Everything a reader needs about one game, frozen at one version.
#[derive(Debug, Clone)]
pub struct GameView {
    /// The game record.
    pub game: Game,
    /// Every item, soft-deleted ones included, sorted by `item_id`.
    pub items: Arc<Vec<Item>>,
    /// Increases with every change; clients see it as `config_version`.
    pub version: u64,
}

/// The actor owning one game's live state.
pub struct GameActor {
    view: Arc<ArcSwap<GameView>>,
}

impl Actor for GameActor {
    type Context = Context<Self>;
}

/// Replaces the game record.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetGame(pub Game);

/// Replaces the catalogue.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SetItems(pub Vec<Item>);

impl GameActor {
    fn publish(&mut self, change: impl FnOnce(&mut GameView)) {
        let mut next = GameView::clone(&self.view.load());
        change(&mut next);
        next.version += 1;
        self.view.store(Arc::new(next));
    }
}

impl Handler<SetGame> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: SetGame, _: &mut Context<Self>) {
        self.publish(|v| v.game = msg.0);
    }
}

impl Handler<SetItems> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: SetItems, _: &mut Context<Self>) {
        let mut items = msg.0;
        items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
        self.publish(|v| v.items = Arc::new(items));
    }
}

/// The handle the rest of the service uses: reads the published view, sends changes.
#[derive(Clone)]
pub struct GameHandle {
    addr: Addr<GameActor>,
    view: Arc<ArcSwap<GameView>>,
}

impl GameHandle {
    /// Starts the actor on `arbiter` with its initial state.
    pub(crate) fn start(arbiter: &actix_rt::ArbiterHandle, game: Game, items: Vec<Item>) -> Self {
        let mut items = items;
        items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
        let view = Arc::new(ArcSwap::from_pointee(GameView {
            game,
            items: Arc::new(items),
            version: 1,
        }));
        let actor_view = view.clone();
        let addr = GameActor::start_in_arbiter(arbiter, move |_| GameActor { view: actor_view });
        Self { addr, view }
    }

    /// The latest published view: no lock, no message.
    pub fn view(&self) -> Arc<GameView> {
        self.view.load_full()
    }

    /// Replaces the game record; returns once the new view is published.
    pub async fn set_game(&self, game: Game) -> Result<(), ActorError> {
        self.addr
            .send(SetGame(game))
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }

    /// Replaces the catalogue; returns once the new view is published.
    pub async fn set_items(&self, items: Vec<Item>) -> Result<(), ActorError> {
        self.addr
            .send(SetItems(items))
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }
}
