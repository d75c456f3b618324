//! The immutable, precomputed view of one game's configuration that every decision reads.
//!
//! Built once per configuration change, it holds the indexes the levels walk (sellable items
//! per category, the store shelf, bundles per trigger, items per L1 arm), so a decision
//! only walks short lists that are already in preference order.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use uuid::Uuid;

use super::experiment::{SnapExperiment, snap_experiment};
use super::payment::Payable;
use super::usd_to_cents_f64;
use crate::bandit::{ARM_COUNT, Arm, PRICE_LADDER_CENTS};
use crate::catalogue::{Item, MAX_PRICE_CENTS};
use crate::category::Category;
use crate::economy::Quadrant;
use crate::game::{Game, Guardrails, Mode};
use crate::kill_level::KillLevel;
use crate::learner::Learner;
use crate::offer::{Bundle, Experiment, Template};
use crate::policy;

/// Everything a snapshot is built from. A struct rather than nine arguments so callers name
/// each part.
#[derive(Debug, Clone)]
pub struct SnapshotInput<'a> {
    /// The game: its id, guardrails and mode.
    pub game: &'a Game,
    /// The whole catalogue; soft-deleted items are dropped here.
    pub items: &'a [Item],
    /// L2 genre templates; the first per event type wins.
    pub templates: &'a [Template],
    /// L3 studio bundles, in preference order.
    pub bundles: &'a [Bundle],
    /// Price experiments; the first with a positive total weight applies.
    pub experiments: &'a [Experiment],
    /// Kill-switch level.
    pub kill_level: KillLevel,
    /// The game's current FSR quadrant.
    pub quadrant: Quadrant,
    /// Definition keys of the L1/L2 offers the studio approved (Assisted mode).
    pub approved: HashSet<String>,
    /// The L1 learner, shared with the game's actor: the snapshot reads the version
    /// published last.
    pub learner: Arc<Learner>,
    /// Whether the game enforces store receipts: offers no store product sells are then
    /// not served.
    pub enforce_payment: bool,
}

/// An L3 bundle whose items all resolved to live catalogue items.
#[derive(Debug, Clone)]
pub(super) struct SnapBundle {
    /// The configured bundle's id.
    pub(super) bundle_id: Uuid,
    /// Its items, shared with the snapshot.
    pub(super) items: Vec<Arc<Item>>,
    /// Its price, in whole cents within the accepted range.
    pub(super) price_cents: i64,
}

/// The immutable, precomputed view of one game's configuration that every decision reads.
///
/// Items are shared as `Arc<Item>`, so an offer holds its items without copying them.
#[derive(Debug, Clone)]
pub struct GameSnapshot {
    game_id: Uuid,
    mode: Mode,
    guardrails: Guardrails,
    kill_level: KillLevel,
    quadrant: Quadrant,
    /// Live items by id.
    items: HashMap<String, Arc<Item>>,
    /// Live, sellable (priced, within the cap) items per category, best value first.
    by_category: [Vec<Arc<Item>>; 5],
    /// L4: fallback-eligible sellable items, non-cosmetics then cosmetics, best value first.
    shelf: Vec<Arc<Item>>,
    templates: HashMap<String, Template>,
    bundles: Vec<SnapBundle>,
    /// Per trigger event: the bundles it may serve (its own and the untriggered ones), in
    /// configured order.
    bundles_by_trigger: HashMap<String, Vec<usize>>,
    /// Bundles without triggers, for events no bundle names.
    untriggered_bundles: Vec<usize>,
    /// Per arm index: the items of its category nearest its price point, nearest first.
    arm_items: Vec<Vec<Arc<Item>>>,
    /// Arms within the cap with at least one item.
    l1_arms: Vec<Arm>,
    /// Arms within the cap with at least one item that is not a loot box.
    l1_arms_no_loot_box: Vec<Arm>,
    /// The first experiment with a positive total weight.
    experiment: Option<SnapExperiment>,
    approved: HashSet<String>,
    learner: Arc<Learner>,
    /// The offers a store product sells, when the game enforces store receipts.
    payable: Option<Payable>,
}

/// Position of a category in the per-category index.
fn category_index(c: Category) -> usize {
    match c {
        Category::Currency => 0,
        Category::Consumable => 1,
        Category::Equipment => 2,
        Category::Bundle => 3,
        Category::Cosmetic => 4,
    }
}

/// Value per dollar of price: the best-value sort key. Only called for priced items.
fn value_ratio(item: &Item) -> f64 {
    let price = item.price_cents as f64;
    item.effective_value_usd() * 100.0 / price
}

/// Best value first; ties by id so the order is deterministic.
fn by_best_value(a: &Arc<Item>, b: &Arc<Item>) -> Ordering {
    value_ratio(b)
        .total_cmp(&value_ratio(a))
        .then_with(|| a.item_id.cmp(&b.item_id))
}

/// The ladder index nearest a price (the cheaper point on a tie).
fn nearest_ladder_index(price_cents: i64) -> usize {
    let mut best = 0;
    for (i, p) in PRICE_LADDER_CENTS.iter().enumerate() {
        if (p - price_cents).abs() < (PRICE_LADDER_CENTS[best] - price_cents).abs() {
            best = i;
        }
    }
    best
}

impl GameSnapshot {
    /// Builds the snapshot and its indexes. Soft-deleted items are dropped; items with no
    /// real-money price (priced only in an earned currency) or above the price cap are never
    /// auto-selected (L1, L2, L4); bundles with an item that is missing or deleted are
    /// dropped; templates and bundle items of category `bundle` are left to L3.
    pub fn build(input: SnapshotInput<'_>) -> Self {
        let guardrails = input.game.guardrails.clone();
        let items: HashMap<String, Arc<Item>> = input
            .items
            .iter()
            .filter(|i| i.is_live())
            .map(|i| (i.item_id.clone(), Arc::new(i.clone())))
            .collect();
        let mut sellable: Vec<Arc<Item>> = items
            .values()
            .filter(|i| i.price_cents > 0 && policy::price_allowed(&guardrails, i.price_cents))
            .cloned()
            .collect();
        sellable.sort_by(by_best_value);

        let mut by_category: [Vec<Arc<Item>>; 5] = Default::default();
        for item in &sellable {
            by_category[category_index(item.category)].push(Arc::clone(item));
        }
        let shelf_items = || {
            sellable
                .iter()
                .filter(|i| i.fallback_eligible && i.category != Category::Bundle)
        };
        let shelf: Vec<Arc<Item>> = shelf_items()
            .filter(|i| i.category != Category::Cosmetic)
            .chain(shelf_items().filter(|i| i.category == Category::Cosmetic))
            .cloned()
            .collect();

        let mut templates = HashMap::new();
        for t in input.templates {
            templates
                .entry(t.event_type.clone())
                .or_insert_with(|| t.clone());
        }

        let (bundles, bundles_by_trigger, untriggered_bundles) =
            index_bundles(input.bundles, &items);

        let mut arm_items: Vec<Vec<Arc<Item>>> = vec![Vec::new(); ARM_COUNT];
        for item in &sellable {
            let arm = Arm {
                category: item.category,
                price_cents: PRICE_LADDER_CENTS[nearest_ladder_index(item.price_cents)],
            };
            if let Some(slot) = arm.index().and_then(|i| arm_items.get_mut(i)) {
                slot.push(Arc::clone(item));
            }
        }
        let mut l1_arms = Vec::new();
        let mut l1_arms_no_loot_box = Vec::new();
        for (arm, list) in Arm::all().zip(arm_items.iter_mut()) {
            // Already best value first; a stable sort keeps that order among equal distances.
            list.sort_by_key(|i| (i.price_cents - arm.price_cents).abs());
            if list.is_empty() || !policy::price_allowed(&guardrails, arm.price_cents) {
                continue;
            }
            l1_arms.push(arm);
            if list.iter().any(|i| !i.is_loot_box) {
                l1_arms_no_loot_box.push(arm);
            }
        }

        Self {
            game_id: input.game.game_id,
            mode: input.game.mode,
            guardrails,
            kill_level: input.kill_level,
            quadrant: input.quadrant,
            items,
            by_category,
            shelf,
            templates,
            bundles,
            bundles_by_trigger,
            untriggered_bundles,
            arm_items,
            l1_arms,
            l1_arms_no_loot_box,
            experiment: input.experiments.iter().find_map(snap_experiment),
            approved: input.approved,
            learner: input.learner,
            payable: input
                .enforce_payment
                .then(|| Payable::build(input.items, input.bundles)),
        }
    }

    /// Whether the offer of `items` at `price_cents` may be served to a player on
    /// `platform`: always, unless the game enforces store receipts and no product of a store
    /// the player buys from sells it.
    pub(super) fn payable(
        &self,
        platform: Option<&str>,
        items: &[Arc<Item>],
        price_cents: i64,
    ) -> bool {
        self.payable
            .as_ref()
            .is_none_or(|index| index.pays(platform, items, price_cents))
    }

    /// The game this snapshot describes.
    pub fn game_id(&self) -> Uuid {
        self.game_id
    }

    /// The operating mode the snapshot decides in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The kill-switch level the snapshot decides at.
    pub fn kill_level(&self) -> KillLevel {
        self.kill_level
    }

    /// The FSR quadrant the snapshot decides in.
    pub fn quadrant(&self) -> Quadrant {
        self.quadrant
    }

    /// A live item by id, shared: lets callers resolve purchases without copying.
    pub fn item(&self, item_id: &str) -> Option<&Arc<Item>> {
        self.items.get(item_id)
    }

    /// The L1 learner the snapshot samples from.
    pub fn learner(&self) -> &Learner {
        &self.learner
    }

    /// The studio's bounds every candidate is checked against.
    pub(super) fn guardrails(&self) -> &Guardrails {
        &self.guardrails
    }

    /// Whether the studio approved this offer definition (Assisted mode).
    pub(super) fn is_approved(&self, definition_key: &str) -> bool {
        self.approved.contains(definition_key)
    }

    /// The arms L1 may pick for a player where loot boxes are allowed, for model views.
    pub fn ai_arms(&self) -> &[Arm] {
        &self.l1_arms
    }

    /// The arms L1 may pick: within the cap, with an item, and with an item that is not a
    /// loot box when loot boxes are not allowed for the player.
    pub(super) fn l1_arms(&self, loot_boxes_allowed: bool) -> &[Arm] {
        if loot_boxes_allowed {
            &self.l1_arms
        } else {
            &self.l1_arms_no_loot_box
        }
    }

    /// The items of an arm's category nearest its price point, nearest first.
    pub(super) fn arm_items(&self, arm: Arm) -> &[Arc<Item>] {
        arm.index()
            .and_then(|i| self.arm_items.get(i))
            .map_or(&[], Vec::as_slice)
    }

    /// The L2 template of a trigger event.
    pub(super) fn template(&self, event_type: &str) -> Option<&Template> {
        self.templates.get(event_type)
    }

    /// The sellable items of a category, best value first.
    pub(super) fn sellable(&self, category: Category) -> &[Arc<Item>] {
        &self.by_category[category_index(category)]
    }

    /// The L3 bundles a trigger event may serve, in configured order.
    pub(super) fn bundles_for(&self, event_type: &str) -> impl Iterator<Item = &SnapBundle> {
        self.bundles_by_trigger
            .get(event_type)
            .unwrap_or(&self.untriggered_bundles)
            .iter()
            .filter_map(|i| self.bundles.get(*i))
    }

    /// The L4 store shelf, non-cosmetics first, best value first.
    pub(super) fn shelf(&self) -> &[Arc<Item>] {
        &self.shelf
    }

    /// The price experiment that applies, if any.
    pub(super) fn experiment(&self) -> Option<&SnapExperiment> {
        self.experiment.as_ref()
    }
}

/// The kept bundles, the bundles each named trigger serves, and the untriggered ones.
type BundleIndex = (Vec<SnapBundle>, HashMap<String, Vec<usize>>, Vec<usize>);

/// Resolves bundles against the live items, dropping those with a missing item or a price
/// outside the accepted range, and indexes them by trigger.
fn index_bundles(bundles: &[Bundle], items: &HashMap<String, Arc<Item>>) -> BundleIndex {
    let mut kept: Vec<(SnapBundle, &[String])> = Vec::new();
    for b in bundles {
        let resolved: Option<Vec<Arc<Item>>> =
            b.item_ids.iter().map(|id| items.get(id).cloned()).collect();
        let cents = usd_to_cents_f64(b.price_usd);
        let valid_price = cents.is_finite() && (0.0..=MAX_PRICE_CENTS as f64).contains(&cents);
        let Some(resolved) = resolved.filter(|r| valid_price && !r.is_empty()) else {
            continue;
        };
        // Finite, in range and rounded: the cast is exact.
        let price_cents = cents as i64;
        kept.push((
            SnapBundle {
                bundle_id: b.bundle_id,
                items: resolved,
                price_cents,
            },
            &b.triggers,
        ));
    }
    let mut by_trigger: HashMap<String, Vec<usize>> = HashMap::new();
    let mut untriggered = Vec::new();
    for (i, (_, triggers)) in kept.iter().enumerate() {
        if triggers.is_empty() {
            untriggered.push(i);
        }
        for t in *triggers {
            by_trigger.entry(t.clone()).or_default();
        }
    }
    // Each named trigger serves its own bundles and the untriggered ones, in configured order.
    for (event, list) in &mut by_trigger {
        *list = kept
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| t.is_empty() || t.iter().any(|x| x == event))
            .map(|(i, _)| i)
            .collect();
    }
    (
        kept.into_iter().map(|(b, _)| b).collect(),
        by_trigger,
        untriggered,
    )
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use chrono::Utc;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::pipeline::{PlayerContext, decide};
    use crate::testing::{SnapshotFixture, ids, offer, player, run};

    #[test]
    fn deleted_items_never_serve() {
        let mut fx = SnapshotFixture::small();
        for i in &mut fx.items {
            if i.item_id == "gems_1000" || i.item_id == "sword" {
                i.deleted_at = Some(Utc::now());
            }
        }
        let snap = fx.snapshot();
        assert!(snap.item("sword").is_none());
        let p = PlayerContext::new("player_0", snap.game_id());
        let d = run(&snap, &p, "first_loss");
        // gems_100 and potion tie on value (1.0 per dollar): the id breaks the tie.
        assert_eq!(ids(offer(&d)), ["gems_100"]);
        // The bundle holding the deleted sword is gone; L1 never offers deleted items.
        let mut p = player();
        p.events_seen = 1;
        for seed in 0..200 {
            let d = decide(
                &snap,
                &p,
                "first_loss",
                Utc::now(),
                &mut StdRng::seed_from_u64(seed),
                NonZeroU32::MIN,
            );
            let o = offer(&d);
            assert!(o.items.iter().all(|i| i.is_live()));
            assert!(!ids(o).contains(&"sword") && !ids(o).contains(&"gems_1000"));
        }
        let mut shadow = fx;
        shadow.game.mode = Mode::Shadow;
        let d = run(&shadow.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).level, 4);
    }
}
