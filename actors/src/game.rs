//! The per-game actor and its handle.
//!
//! The actor serialises every change to one game's live state (catalogue, offer
//! configuration, kill switch, approvals, FSR quadrant, L1 model, published custom page)
//! and, after each change, publishes a new immutable [`GameView`] through an `ArcSwap`, so
//! readers (the offer path, catalogue reads) never wait for the actor. Learning updates of
//! the L1 model arrive at the rate of offers shown; they are folded into the view at most
//! once per [`LEARN_PUBLISH_INTERVAL`], since rebuilding the snapshot per event would cost
//! more than the freshness is worth.
//!
//! The model is shared by every node: the actor keeps the totals last read from the store,
//! what this node learned since (`pending`), and what it is handing to the store
//! (`in_flight`). The view serves `totals + in_flight + pending`, so nothing learned is
//! ever missing from it; a sync that fails gives `in_flight` back to `pending`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Addr, AsyncContext, Context, Handler, Message};
use arc_swap::ArcSwap;
use offer_domain::bandit::{ArmPick, BanditState, Feedback};
use offer_domain::catalogue::Item;
use offer_domain::custom_page::SharedPage;
use offer_domain::economy::Quadrant;
use offer_domain::game::Game;
use offer_domain::offer::{Bundle, Experiment, KillSwitch, Template};
use offer_domain::pipeline::{GameSnapshot, SnapshotInput};
use serde_json::value::RawValue;

use crate::ActorError;

/// How often learned L1 statistics are published to readers.
pub const LEARN_PUBLISH_INTERVAL: Duration = Duration::from_secs(1);

/// Everything that defines one game's live state, as loaded from the store.
#[derive(Debug, Clone, Default)]
pub struct GameConfig {
    /// The game record (mode and guardrails included).
    pub game: Option<Game>,
    /// Every item, soft-deleted ones included, sorted by `item_id`.
    pub items: Vec<Item>,
    /// L2 templates.
    pub templates: Vec<Template>,
    /// L3 bundles.
    pub bundles: Vec<Bundle>,
    /// Price experiments.
    pub experiments: Vec<Experiment>,
    /// Kill switch.
    pub kill_switch: KillSwitch,
    /// Definition keys the studio approved (Assisted mode serves only these L1/L2 offers).
    pub approved: HashSet<String>,
    /// Definition keys that already have an approval record (pending or decided), so a
    /// candidate is queued once.
    pub queued: HashSet<String>,
    /// FSR quadrant (fed by the economy figures).
    pub quadrant: Quadrant,
    /// L1 model statistics.
    pub bandit: BanditState,
    /// The published custom page, if the studio approved one.
    pub custom_page: Option<SharedPage>,
}

/// Each live item's JSON, rendered once per catalogue change: offers embed full item
/// records, and writing pre-rendered JSON saves serialising them on every request.
pub type ItemJson = HashMap<String, Box<RawValue>>;

fn render_items(items: &[Item]) -> Arc<ItemJson> {
    Arc::new(
        items
            .iter()
            .filter(|i| i.is_live())
            .filter_map(|i| {
                serde_json::value::to_raw_value(i)
                    .ok()
                    .map(|json| (i.item_id.clone(), json))
            })
            .collect(),
    )
}

/// Everything a reader needs about one game, frozen at one version.
#[derive(Debug)]
pub struct GameView {
    /// The game record.
    pub game: Game,
    /// Every item, soft-deleted ones included, sorted by `item_id`.
    pub items: Vec<Item>,
    /// L2 templates.
    pub templates: Vec<Template>,
    /// L3 bundles.
    pub bundles: Vec<Bundle>,
    /// Price experiments.
    pub experiments: Vec<Experiment>,
    /// Kill switch.
    pub kill_switch: KillSwitch,
    /// Definition keys with an approval record.
    pub queued: HashSet<String>,
    /// Each live item's JSON, as the catalogue returns it.
    pub item_json: Arc<ItemJson>,
    /// The precomputed decision input.
    pub snapshot: GameSnapshot,
    /// The published custom page, if the studio approved one.
    pub custom_page: Option<SharedPage>,
    /// Increases with every published change; clients see it as `config_version`.
    pub version: u64,
}

impl GameView {
    fn build(game: Game, config: &GameConfig, item_json: Arc<ItemJson>, version: u64) -> Self {
        let snapshot = GameSnapshot::build(SnapshotInput {
            game: &game,
            items: &config.items,
            templates: &config.templates,
            bundles: &config.bundles,
            experiments: &config.experiments,
            kill_level: config.kill_switch.level,
            quadrant: config.quadrant,
            approved: config.approved.clone(),
            bandit: config.bandit.clone(),
        });
        Self {
            game,
            items: config.items.clone(),
            templates: config.templates.clone(),
            bundles: config.bundles.clone(),
            experiments: config.experiments.clone(),
            kill_switch: config.kill_switch.clone(),
            queued: config.queued.clone(),
            item_json,
            snapshot,
            custom_page: config.custom_page.clone(),
            version,
        }
    }
}

/// A change to a game's live state.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum GameChange {
    /// Replace the game record.
    Game(Game),
    /// Replace the catalogue.
    Items(Vec<Item>),
    /// Replace the L2 templates.
    Templates(Vec<Template>),
    /// Replace the L3 bundles.
    Bundles(Vec<Bundle>),
    /// Replace the experiments.
    Experiments(Vec<Experiment>),
    /// Set the kill switch.
    KillSwitch(KillSwitch),
    /// A definition now has an approval record.
    Queued(String),
    /// A definition was approved.
    Approved(String),
    /// The FSR quadrant changed.
    Quadrant(Quadrant),
    /// A custom page version was published.
    CustomPage(SharedPage),
    /// Replace everything (another node changed the game).
    Reload(Box<GameConfig>),
}

/// One learning signal for the L1 model.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Learn {
    /// The arm offered and the segment it was offered to.
    pub pick: ArmPick,
    /// Whether the offer was shown or bought.
    pub feedback: Feedback,
}

/// Hands what this node learned since the last sync to the caller, who adds it to the
/// shared totals in the store and answers with [`ModelSynced`].
#[derive(Debug, Message)]
#[rtype(result = "BanditState")]
pub struct TakeLearned;

/// The end of a model sync: the store's totals after adding what [`TakeLearned`] gave, or
/// `None` when the store could not be reached (the counts are kept for the next sync).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ModelSynced(pub Option<BanditState>);

/// The L1 model's counts by where they are: the store's totals, and this node's counts not
/// yet in them.
#[derive(Debug, Default)]
struct ModelParts {
    totals: BanditState,
    in_flight: BanditState,
    pending: BanditState,
}

/// The actor owning one game's live state.
pub struct GameActor {
    config: GameConfig,
    model: ModelParts,
    view: Arc<ArcSwap<GameView>>,
    learned_unpublished: bool,
    /// The catalogue changed since the last publish: its JSON must be rendered again.
    items_changed: bool,
}

impl GameActor {
    fn publish(&mut self) {
        let current = self.view.load();
        let game = self
            .config
            .game
            .clone()
            .unwrap_or_else(|| current.game.clone());
        let item_json = if self.items_changed {
            render_items(&self.config.items)
        } else {
            current.item_json.clone()
        };
        self.items_changed = false;
        let next = GameView::build(game, &self.config, item_json, current.version + 1);
        self.view.store(Arc::new(next));
        self.learned_unpublished = false;
    }
}

impl Actor for GameActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(LEARN_PUBLISH_INTERVAL, |actor, _| {
            if actor.learned_unpublished {
                actor.publish();
            }
        });
    }
}

impl Handler<GameChange> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: GameChange, _: &mut Context<Self>) {
        let c = &mut self.config;
        match msg {
            GameChange::Game(g) => c.game = Some(g),
            GameChange::Items(mut items) => {
                items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
                c.items = items;
                self.items_changed = true;
            }
            GameChange::Templates(t) => c.templates = t,
            GameChange::Bundles(b) => c.bundles = b,
            GameChange::Experiments(e) => c.experiments = e,
            GameChange::KillSwitch(k) => c.kill_switch = k,
            GameChange::Queued(key) => {
                if !c.queued.insert(key) {
                    return;
                }
            }
            GameChange::Approved(key) => {
                c.queued.insert(key.clone());
                c.approved.insert(key);
            }
            GameChange::Quadrant(q) => c.quadrant = q,
            GameChange::CustomPage(page) => c.custom_page = Some(page),
            GameChange::Reload(mut fresh) => {
                // The model is synced on its own schedule; a reload of configuration keeps it.
                fresh.bandit = std::mem::take(&mut c.bandit);
                fresh.items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
                *c = *fresh;
                self.items_changed = true;
            }
        }
        self.publish();
    }
}

impl Handler<Learn> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: Learn, _: &mut Context<Self>) {
        self.config.bandit.record(msg.pick, msg.feedback);
        self.model.pending.record(msg.pick, msg.feedback);
        self.learned_unpublished = true;
    }
}

impl Handler<TakeLearned> for GameActor {
    type Result = actix::MessageResult<TakeLearned>;
    fn handle(&mut self, _: TakeLearned, _: &mut Context<Self>) -> Self::Result {
        let pending = std::mem::take(&mut self.model.pending);
        self.model.in_flight.add(&pending);
        actix::MessageResult(self.model.in_flight.clone())
    }
}

impl Handler<ModelSynced> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: ModelSynced, _: &mut Context<Self>) {
        let in_flight = std::mem::take(&mut self.model.in_flight);
        match msg.0 {
            Some(totals) => {
                let mut served = totals.clone();
                served.add(&self.model.pending);
                self.model.totals = totals;
                if served != self.config.bandit {
                    self.config.bandit = served;
                    self.learned_unpublished = true;
                }
            }
            None => self.model.pending.add(&in_flight),
        }
    }
}

/// The handle the rest of the service uses: reads the published view, sends changes. One
/// `Arc`, so cloning it on the hot path is a single reference-count increment.
#[derive(Clone)]
pub struct GameHandle(Arc<GameShared>);

struct GameShared {
    addr: Addr<GameActor>,
    view: Arc<ArcSwap<GameView>>,
}

impl GameHandle {
    /// Starts the actor on `arbiter` with its initial state.
    pub(crate) fn start(
        arbiter: &actix_rt::ArbiterHandle,
        game: Game,
        mut config: GameConfig,
    ) -> Self {
        config.items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
        config.game = Some(game.clone());
        let item_json = render_items(&config.items);
        let view = Arc::new(ArcSwap::from_pointee(GameView::build(
            game, &config, item_json, 1,
        )));
        let actor_view = view.clone();
        let addr = GameActor::start_in_arbiter(arbiter, move |_| GameActor {
            config,
            model: ModelParts::default(),
            view: actor_view,
            learned_unpublished: false,
            items_changed: false,
        });
        Self(Arc::new(GameShared { addr, view }))
    }

    /// The latest published view: no lock, no message.
    pub fn view(&self) -> Arc<GameView> {
        self.0.view.load_full()
    }

    /// Applies a change; returns once the new view is published (read-your-writes).
    pub async fn change(&self, change: GameChange) -> Result<(), ActorError> {
        self.0
            .addr
            .send(change)
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }

    /// Feeds the L1 model without waiting.
    pub fn learn(&self, pick: ArmPick, feedback: Feedback) {
        self.0.addr.do_send(Learn { pick, feedback });
    }

    /// Takes what this node learned since the last sync (see [`TakeLearned`]); every call
    /// must be followed by [`GameHandle::model_synced`].
    pub async fn take_learned(&self) -> Result<BanditState, ActorError> {
        self.0
            .addr
            .send(TakeLearned)
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }

    /// Ends a sync with the store's totals, or `None` when the store failed.
    pub async fn model_synced(&self, totals: Option<BanditState>) -> Result<(), ActorError> {
        self.0
            .addr
            .send(ModelSynced(totals))
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }
}
