//! The per-game actor and its handle.
//!
//! The actor serialises every change to one game's live state (catalogue, offer
//! configuration, kill switch, approvals, FSR quadrant, L1 model, published custom page,
//! store settings) and, after each change, publishes a new immutable [`GameView`] through an
//! `ArcSwap`, so readers (the offer path, catalogue reads) never wait for the actor. Lessons
//! for the L1 learner arrive at the rate of offers shown; they are folded into the view at
//! most once per [`LEARN_PUBLISH_INTERVAL`], since rebuilding the snapshot per event would
//! cost more than the freshness is worth.
//!
//! The learner is shared by every node through additive statistics: the actor's learner
//! holds the store's totals plus what this node learned since it last handed its increments
//! over ([`TakeLearned`]). The increments being added to the store are kept until the store
//! answers ([`ModelSynced`]); when it could not be reached they are handed over again with
//! the next ones, so nothing learned is lost or counted twice, and the learner keeps serving
//! them meanwhile.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use actix::{Actor, Addr, AsyncContext, Context, Handler, Message};
use arc_swap::ArcSwap;
use offer_domain::catalogue::Item;
use offer_domain::custom_page::SharedPage;
use offer_domain::economy::Quadrant;
use offer_domain::game::Game;
use offer_domain::learner::Learner;
use offer_domain::learning::prior_of;
use offer_domain::offer::{Bundle, Experiment, KillSwitch, Template};
use offer_domain::pipeline::{GameSnapshot, Lesson, SnapshotInput};
use offer_domain::player_auth::PlayerAuth;
use offer_domain::store_settings::{StoreSettings, Verification};
use serde_json::value::RawValue;

use crate::ActorError;

/// How often what the L1 learner learned is published to the offer path: a few hundred
/// offers of a busy game, and five rebuilds of the snapshot a second at most.
pub const LEARN_PUBLISH_INTERVAL: Duration = Duration::from_millis(200);

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
    /// The published custom page, if the studio approved one.
    pub custom_page: Option<SharedPage>,
    /// Receipt verification and the stores' identifiers (verification `off` until set).
    pub stores: StoreSettings,
    /// Whether sessions need a signed player token, and the keys that verify it.
    pub player_auth: PlayerAuth,
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
    /// Receipt verification and the stores' identifiers, which the purchase path reads.
    pub stores: StoreSettings,
    /// Player identity: what opening a session needs.
    pub player_auth: PlayerAuth,
    /// Increases with every published change; clients see it as `config_version`.
    pub version: u64,
}

impl GameView {
    fn build(
        game: Game,
        config: &GameConfig,
        learner: Arc<Learner>,
        item_json: Arc<ItemJson>,
        version: u64,
    ) -> Self {
        let snapshot = GameSnapshot::build(SnapshotInput {
            game: &game,
            items: &config.items,
            templates: &config.templates,
            bundles: &config.bundles,
            experiments: &config.experiments,
            kill_level: config.kill_switch.level,
            quadrant: config.quadrant,
            approved: config.approved.clone(),
            learner,
            enforce_payment: config.stores.verification == Verification::Enforce,
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
            stores: config.stores.clone(),
            player_auth: config.player_auth.clone(),
            version,
        }
    }
}

/// A change to a game's live state.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum GameChange {
    /// Replace the game record.
    Game(Box<Game>),
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
    /// Replace the store settings.
    Stores(StoreSettings),
    /// Replace the player identity settings.
    PlayerAuth(PlayerAuth),
    /// Replace everything (another node changed the game).
    Reload(Box<GameConfig>),
}

/// One lesson for the L1 learner: an offer was shown, or bought.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct Learn {
    /// What the offer teaches.
    pub lesson: Lesson,
    /// `true` for a purchase (of an offer already counted as shown), `false` for a show.
    pub bought: bool,
}

/// What this node learned since its last sync, for the store's shared totals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Learned {
    /// The half-life the statistics fade with: counters of different half-lives never mix,
    /// so they are kept under a name carrying it.
    pub half_life_offers: u32,
    /// Named counters to add to the totals.
    pub counters: Vec<(String, i64)>,
}

/// Hands what this node learned since the last sync to the caller, who adds it to the
/// shared totals in the store and answers with [`ModelSynced`].
#[derive(Debug, Message)]
#[rtype(result = "Learned")]
pub struct TakeLearned;

/// The end of a model sync: the store's totals (of the half-life given) after adding what
/// [`TakeLearned`] gave, or `None` when the store could not be reached (the increments are
/// then handed over again with the next ones).
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub struct ModelSynced {
    /// The half-life of the counters synced.
    pub half_life_offers: u32,
    /// The store's totals, if the sync succeeded.
    pub totals: Option<Vec<(String, i64)>>,
}

/// Adds counters of the same name together, so a batch names each counter once.
fn merged(counters: impl IntoIterator<Item = (String, i64)>) -> Vec<(String, i64)> {
    let mut sums: BTreeMap<String, i64> = BTreeMap::new();
    for (name, v) in counters {
        let slot = sums.entry(name).or_default();
        *slot = slot.saturating_add(v);
    }
    sums.into_iter().filter(|(_, v)| *v != 0).collect()
}

/// The game's learner and its increments on their way to the store.
struct Model {
    learner: Learner,
    /// The learner as last published to the offer path.
    published: Arc<Learner>,
    /// The half-life the learner's statistics fade with.
    half_life_offers: u32,
    /// Increments handed to a sync that has not answered yet.
    in_flight: Vec<(String, i64)>,
    /// Increments of a failed sync, handed over again with the next ones.
    unsent: Vec<(String, i64)>,
}

impl Model {
    /// A learner of `game` that knows nothing but the prior of `config`.
    fn new(game: &Game, config: &GameConfig) -> Self {
        let learner = Learner::new(
            game.learner.settings(),
            prior_of(&config.templates, &config.items),
        );
        Self {
            published: Arc::new(learner.clone()),
            learner,
            half_life_offers: game.learner.half_life_offers,
            in_flight: Vec::new(),
            unsent: Vec::new(),
        }
    }

    /// Follows a change of the game's learner settings, templates or catalogue: the
    /// statistics are kept, except when the half-life changed, which starts again from the
    /// prior (evidence faded at one rate cannot be read at another). Returns whether
    /// anything changed.
    fn reconfigure(&mut self, game: &Game, config: &GameConfig) -> bool {
        let settings = game.learner.settings();
        let prior = prior_of(&config.templates, &config.items);
        if game.learner.half_life_offers != self.half_life_offers {
            *self = Self::new(game, config);
            return true;
        }
        if *self.learner.settings() == settings && *self.learner.prior() == prior {
            return false;
        }
        self.learner.reconfigure(settings, prior);
        true
    }
}

/// The actor owning one game's live state.
pub struct GameActor {
    config: GameConfig,
    model: Model,
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
        if self.learned_unpublished {
            self.model.published = Arc::new(self.model.learner.clone());
        }
        let next = GameView::build(
            game,
            &self.config,
            Arc::clone(&self.model.published),
            item_json,
            current.version + 1,
        );
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
        // Only the game record (its learner settings), the templates and the catalogue shape
        // the learner's settings and prior.
        let shapes_learner = matches!(
            msg,
            GameChange::Game(_)
                | GameChange::Items(_)
                | GameChange::Templates(_)
                | GameChange::Reload(_)
        );
        let c = &mut self.config;
        match msg {
            GameChange::Game(g) => c.game = Some(*g),
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
            GameChange::Stores(stores) => c.stores = stores,
            GameChange::PlayerAuth(auth) => c.player_auth = auth,
            GameChange::Reload(mut fresh) => {
                // The learner is synced on its own schedule; a reload of configuration keeps it.
                fresh.items.sort_by(|a, b| a.item_id.cmp(&b.item_id));
                *c = *fresh;
                self.items_changed = true;
            }
        }
        if shapes_learner
            && let Some(game) = &self.config.game
            && self.model.reconfigure(game, &self.config)
        {
            self.learned_unpublished = true;
        }
        self.publish();
    }
}

impl Handler<Learn> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: Learn, _: &mut Context<Self>) {
        let Lesson {
            arm,
            source,
            features,
        } = &msg.lesson;
        let learner = &mut self.model.learner;
        let learned = if msg.bought {
            learner.bought(features, *arm, *source)
        } else {
            learner.shown(features, *arm, *source)
        };
        self.learned_unpublished |= learned;
    }
}

impl Handler<TakeLearned> for GameActor {
    type Result = actix::MessageResult<TakeLearned>;
    fn handle(&mut self, _: TakeLearned, _: &mut Context<Self>) -> Self::Result {
        let m = &mut self.model;
        let fresh = m.learner.take_increments().to_counters();
        m.in_flight = merged(std::mem::take(&mut m.unsent).into_iter().chain(fresh));
        actix::MessageResult(Learned {
            half_life_offers: m.half_life_offers,
            counters: m.in_flight.clone(),
        })
    }
}

impl Handler<ModelSynced> for GameActor {
    type Result = ();
    fn handle(&mut self, msg: ModelSynced, _: &mut Context<Self>) {
        let m = &mut self.model;
        let in_flight = std::mem::take(&mut m.in_flight);
        if msg.half_life_offers != m.half_life_offers {
            // The half-life changed during the sync: the learner started again, and these
            // totals belong to the statistics it left.
            return;
        }
        match msg.totals {
            Some(totals) => {
                m.learner.load(&totals);
                self.learned_unpublished = true;
            }
            None => m.unsent = in_flight,
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
        let model = Model::new(&game, &config);
        let view = Arc::new(ArcSwap::from_pointee(GameView::build(
            game,
            &config,
            Arc::clone(&model.published),
            item_json,
            1,
        )));
        let actor_view = view.clone();
        let addr = GameActor::start_in_arbiter(arbiter, move |_| GameActor {
            config,
            model,
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

    /// Teaches the L1 learner without waiting: a show (`bought` false) or a purchase.
    pub fn learn(&self, lesson: Lesson, bought: bool) {
        self.0.addr.do_send(Learn { lesson, bought });
    }

    /// Takes what this node learned since the last sync (see [`TakeLearned`]); every call
    /// must be followed by [`GameHandle::model_synced`].
    pub async fn take_learned(&self) -> Result<Learned, ActorError> {
        self.0
            .addr
            .send(TakeLearned)
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }

    /// Ends a sync with the store's totals, or `None` when the store failed.
    pub async fn model_synced(
        &self,
        half_life_offers: u32,
        totals: Option<Vec<(String, i64)>>,
    ) -> Result<(), ActorError> {
        self.0
            .addr
            .send(ModelSynced {
                half_life_offers,
                totals,
            })
            .await
            .map_err(|e| ActorError::Unavailable(e.to_string()))
    }
}
