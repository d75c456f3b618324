//! The learner itself: the weight table, Thompson sampling over it, the diagonal Laplace
//! update, forgetting, and the sync of statistics with the store.

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use super::drift::DriftWatch;
use super::estimate::Estimate;
use super::features::Features;
use super::prior::{Moments, Prior};
use super::source::{Source, nearest_arm};
use super::sync::{Increments, Totals, take_fixed};
use crate::bandit::{AI_CATEGORIES, ARM_COUNT, Arm, PRICE_LADDER_CENTS};
use crate::category::Category;

/// Cells of the weight table. Each holds the precision and precision x mean of its weight's
/// data (16 bytes), once as the node's view of the total and once as what it has not sent yet:
/// 2 x 16 x 16,384 = 512 KiB per game, whatever the number of distinct feature values.
pub const CELLS: usize = 1 << 14;
/// Forgetting epochs last this many half-lives: within one, a stored value grows by at most
/// 2^16 over its true weight, which the fixed-point counters hold with room to spare.
pub const EPOCH_HALF_LIVES: u64 = 16;
/// The table of a learner that has learned nothing, shared by all of them.
static NOTHING_LEARNED: [[f64; 2]; CELLS] = [[0.0; 2]; CELLS];
/// Features kept as the weightiest in a [`Choice`].
pub const TOP_FEATURES: usize = 3;

/// Crosses of one feature: with each arm, each category, each price point, and the log of the
/// price.
const CROSSES: usize = ARM_COUNT + AI_CATEGORIES.len() + PRICE_LADDER_CENTS.len() + 1;
/// The cross of a feature with the log of the price: one weight per feature that every price
/// point shares, the feature's price sensitivity.
const SLOPE: usize = CROSSES - 1;
/// The price the slope cross is centred on, in cents.
const SLOPE_CENTRE_CENTS: f64 = 999.0;
/// Value of a feature's arm cross relative to its category and price crosses: with half the
/// prior spread, an arm's own weights only correct what its category and price point, learned
/// from every arm that shares them, predict. The simulated evaluation earned more with it than
/// with 1, most on its scenario with a noisy attribute.
const ARM_CROSS: f64 = 0.5;
/// Newton iterations of the Laplace step at most; it converges in a handful.
const MAX_NEWTON: usize = 50;

/// The learner's settings for one game.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnerSettings {
    /// Shown offers after which an observation counts half. Default 20,000: about 29,000
    /// offers of effective memory (`half_life / ln 2`), some 1,600 per arm over 18 arms,
    /// enough to tell a 3% conversion from a 4% one in the busiest contexts, while a game
    /// showing 50,000 offers a day follows a change of taste within a day.
    pub half_life_offers: f64,
    /// Weight of an offer served by another level (template, bundle, shelf) as evidence
    /// about the nearest arm; default 1, as much as an L1 offer.
    pub fallback_weight: f64,
    /// Prior precision of each weight. Features enter with values scaled by `1 / sqrt(n)`
    /// (`n` active features), so an arm's prior log-odds have a variance of about
    /// `2.5 / prior_precision` whatever `n`. Default 0.5: on 20 seeds of the simulated
    /// evaluation (`offer-load arena --in-process`) it earned as much as 0.3 and 1 on average and
    /// had the fewest runs stuck on a poor arm; 2 learned prices markedly slower.
    pub prior_precision: f64,
    /// Scales the standard deviation of Thompson draws. Chapelle and Li found that a
    /// posterior narrower than the model's earns more; here the Laplace posterior of a dear
    /// arm that rarely sells is too wide on the high side (its precision grows with
    /// `p (1 - p)`, tiny for small `p`), so full-width draws keep exploring it long after
    /// its failures ruled it out. Default 0.4: on 20 seeds of the simulated evaluation's
    /// scenario with both category and price to learn, full-width draws earned 0.70 of the
    /// oracle, 0.5, 0.4 and 0.35 0.81 to 0.82; 0.4 did best where the trigger alone decides
    /// (0.94 against 0.92 for 0.5) and with a noisy attribute.
    pub exploration: f64,
    /// Session attributes that never become features.
    pub ignored_attributes: Vec<String>,
}

impl Default for LearnerSettings {
    fn default() -> Self {
        Self {
            half_life_offers: 20_000.0,
            fallback_weight: 1.0,
            prior_precision: 0.5,
            exploration: 0.4,
            ignored_attributes: Vec::new(),
        }
    }
}

/// The pick of a decision and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The arm to offer.
    pub arm: Arm,
    /// Its sampled expected revenue, in cents: `sigmoid(sampled log-odds) x price`.
    pub sampled_revenue_cents: f64,
    /// The arm that came second and its sampled expected revenue, when another was allowed.
    pub runner_up: Option<(Arm, f64)>,
    /// The features that weighed most on the chosen arm: index in the decision's
    /// [`Features`] and contribution to its log-odds (posterior mean), largest first.
    pub top_features: Vec<(usize, f64)>,
}

impl Choice {
    /// The weightiest features by label, for a decision trace.
    pub fn top_labels<'f>(&self, features: &'f Features) -> Vec<(&'f str, f64)> {
        self.top_features
            .iter()
            .filter_map(|(i, w)| Some((features.label(*i)?, *w)))
            .collect()
    }
}

/// How much a game's learner has learned, for a model view.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnerView {
    /// Shown offers of the game (the clock of forgetting).
    pub offers: u64,
    /// Observations still remembered: each weighted by its weight and by how much it has
    /// faded.
    pub effective_observations: f64,
    /// The same per arm, in [`Arm::all`] order.
    pub per_arm: Vec<(Arm, f64)>,
    /// How many times the learner started again after a change of taste.
    pub restarts: u32,
    /// The offer count when it last started (0 if it never started again).
    pub learning_since: u64,
}

/// The contextual learner of one game. See the module documentation of
/// [`crate::learner`] for the model.
#[derive(Debug, Clone)]
pub struct Learner {
    settings: LearnerSettings,
    prior: Prior,
    /// Per cell `[precision, precision x mean]` of the data, in the units of `epoch`: the
    /// store's totals plus what this node has not sent.
    cells: Vec<[f64; 2]>,
    /// What this node has not sent yet, same units.
    pending: Vec<[f64; 2]>,
    /// Per arm, the weight of its observations, same units.
    arms: [f64; ARM_COUNT],
    pending_arms: [f64; ARM_COUNT],
    /// Shown offers of the game as known here, and those not sent yet.
    offers: u64,
    pending_offers: u64,
    /// The forgetting epoch the values are in: offers `epoch x epoch_len ..`.
    epoch: u64,
    /// How many times the game's learner started again after a change of taste; the
    /// statistics are those of this generation only.
    generation: u32,
    /// The game's offer count when the current generation started here (or when this node
    /// heard of it).
    generation_since: u64,
    /// Whether this node started the current generation and has not told the store yet.
    restart_unsent: bool,
    /// This node's watch over the purchase rate of the learner's own offers.
    drift: DriftWatch,
}

impl Learner {
    /// A learner that knows nothing but `prior`. Its weight tables are allocated when it
    /// first learns, so a game that never serves the AI costs a few hundred bytes, not 512
    /// KiB.
    pub fn new(settings: LearnerSettings, prior: Prior) -> Self {
        Self {
            settings,
            prior,
            cells: Vec::new(),
            pending: Vec::new(),
            arms: [0.0; ARM_COUNT],
            pending_arms: [0.0; ARM_COUNT],
            offers: 0,
            pending_offers: 0,
            epoch: 0,
            generation: 0,
            generation_since: 0,
            restart_unsent: false,
            drift: DriftWatch::default(),
        }
    }

    /// The settings.
    pub fn settings(&self) -> &LearnerSettings {
        &self.settings
    }

    /// The cold-start prior.
    pub fn prior(&self) -> &Prior {
        &self.prior
    }

    /// Takes new settings and a new prior and keeps the statistics: the prior is an offset of
    /// the log-odds, never part of them. The half-life must not change (the statistics are
    /// kept in units of its epochs): a caller that changes it starts a new learner.
    pub fn reconfigure(&mut self, settings: LearnerSettings, prior: Prior) {
        debug_assert_eq!(
            settings.half_life_offers.max(1.0),
            self.half_life(),
            "a new half-life needs a new learner"
        );
        self.settings = settings;
        self.prior = prior;
    }

    /// The prior log-odds the statistics correct, for `trigger`. After a change of taste
    /// the genre template's category for the moment no longer counts: the tastes it
    /// describes may be the ones that changed (a season that turns `currency_low` towards
    /// consumables would otherwise start the new generation leaning the wrong way), while
    /// the game's price range still holds. Every node derives it from the generation, so
    /// they agree without storing it.
    fn offsets(&self, trigger: &str) -> [f64; ARM_COUNT] {
        let moments = if self.generation == 0 {
            Moments::FromTemplate
        } else {
            Moments::Unknown
        };
        self.prior.logits(trigger, moments)
    }

    /// Allocates the weight tables on first learning.
    fn allocate(&mut self) {
        for t in [&mut self.cells, &mut self.pending] {
            if t.is_empty() {
                *t = vec![[0.0; 2]; CELLS];
            }
        }
    }

    /// The stored `[precision, precision x mean]` of every cell: all zero before anything
    /// was learned (a shared table then, not one per game).
    #[inline]
    fn table(&self) -> &[[f64; 2]] {
        if self.cells.is_empty() {
            &NOTHING_LEARNED
        } else {
            &self.cells
        }
    }

    /// A cell's stored `[precision, precision x mean]`.
    #[inline]
    fn stored(&self, cell: usize) -> [f64; 2] {
        self.table()[cell]
    }

    /// Bytes the learner holds: bounded by [`CELLS`] and the prior, never by the traffic.
    pub fn memory_bytes(&self) -> usize {
        let prior = self.prior.heap_bytes();
        let ignored: usize = self
            .settings
            .ignored_attributes
            .iter()
            .map(|a| a.capacity() + std::mem::size_of::<String>())
            .sum();
        std::mem::size_of::<Self>()
            + (self.cells.capacity() + self.pending.capacity()) * std::mem::size_of::<[f64; 2]>()
            + prior
            + ignored
    }

    /// The half-life in offers, at least one offer (a smaller or invalid setting would fade
    /// evidence to nothing before it could be read).
    fn half_life(&self) -> f64 {
        self.settings.half_life_offers.max(1.0)
    }

    /// The prior precision, kept positive so that every posterior is proper.
    fn prior_precision(&self) -> f64 {
        self.settings.prior_precision.max(1e-6)
    }

    /// Offers per forgetting epoch, at least 16.
    fn epoch_len(&self) -> u64 {
        (EPOCH_HALF_LIVES as f64 * self.half_life()).round() as u64
    }

    /// `2^(-offers / half-life)` between two offer counts (`to >= from` fades).
    fn fade(&self, from: u64, to: u64) -> f64 {
        let d = to as f64 - from as f64;
        (-d / self.half_life()).exp2()
    }

    /// The factor from stored values to true ones now.
    fn scale(&self) -> f64 {
        self.fade(self.epoch * self.epoch_len(), self.offers)
    }

    /// Posterior `(precision, mean)` of a cell, `scale` from [`Learner::scale`].
    #[inline]
    fn posterior(&self, cell: usize, scale: f64) -> (f64, f64) {
        let [q, h] = self.stored(cell);
        let q = self.prior_precision() + scale * q;
        (q, scale * h / q)
    }

    /// Posterior `(precision, mean)` of a weight cell, for model views and tests.
    pub fn cell_posterior(&self, cell: usize) -> Option<(f64, f64)> {
        (cell < CELLS).then(|| self.posterior(cell, self.scale()))
    }

    /// Thompson sampling: draws every allowed arm's log-odds from the posterior and picks the
    /// highest `sigmoid(log-odds) x price`. Arms off the ladder are skipped, so the pick is
    /// always one of `allowed`; `None` when none is on it.
    ///
    /// Weights are independent Gaussians, so an arm's log-odds `w . x` is Gaussian with the
    /// summed means and variances: one normal draw per arm gives exactly the draw of that
    /// arm's log-odds that sampling every weight would (the arms' draws are independent here,
    /// where sampling the shared weights would correlate arms of one category or price).
    pub fn choose(
        &self,
        features: &Features,
        allowed: &[Arm],
        rng: &mut impl Rng,
    ) -> Option<Choice> {
        let scale = self.scale();
        let x = feature_value(features);
        let offsets = self.offsets(features.trigger());
        // Every cross of every feature, summed once: a feature's crosses are adjacent cells.
        // Posterior mean and variance of each cell with one division, the table and the
        // prior precision read once.
        let (table, prior_precision) = (self.table(), self.prior_precision());
        let mut means = [0.0f64; CROSSES];
        let mut vars = [0.0f64; CROSSES];
        for &f in features.hashes() {
            for k in 0..CROSSES {
                let [q, h] = table[cell(f, k)];
                let var = 1.0 / (prior_precision + scale * q);
                means[k] += scale * h * var;
                vars[k] += var;
            }
        }
        let mut best: Option<(f64, Arm, usize)> = None;
        let mut second: Option<(f64, Arm)> = None;
        for arm in allowed {
            let Some(a) = arm.index() else { continue };
            let (c, p) = split(a);
            let lp = log_price(p);
            let (c, p) = (ARM_COUNT + c, ARM_COUNT + AI_CATEGORIES.len() + p);
            let mean =
                offsets[a] + x * (ARM_CROSS * means[a] + means[c] + means[p] + lp * means[SLOPE]);
            let var = x
                * x
                * (ARM_CROSS * ARM_CROSS * vars[a] + vars[c] + vars[p] + lp * lp * vars[SLOPE]);
            let z: f64 = StandardNormal.sample(rng);
            let revenue =
                sigmoid(mean + self.settings.exploration * var.sqrt() * z) * arm.price_cents as f64;
            match best {
                Some((r, _, _)) if revenue <= r => {
                    if second.is_none_or(|(s, _)| revenue > s) {
                        second = Some((revenue, *arm));
                    }
                }
                _ => {
                    if let Some((r, b, _)) = best {
                        second = Some((r, b));
                    }
                    best = Some((revenue, *arm, a));
                }
            }
        }
        let (revenue, arm, a) = best?;
        Some(Choice {
            arm,
            sampled_revenue_cents: revenue,
            runner_up: second.map(|(r, arm)| (arm, r)),
            top_features: self.top_features(features, a, scale, x),
        })
    }

    /// The [`TOP_FEATURES`] features with the largest posterior contribution to arm `a`.
    fn top_features(&self, features: &Features, a: usize, scale: f64, x: f64) -> Vec<(usize, f64)> {
        let (c, p) = split(a);
        let mut top: Vec<(usize, f64)> = Vec::with_capacity(TOP_FEATURES + 1);
        for (i, &f) in features.hashes().iter().enumerate() {
            let mean = |k: usize| self.posterior(cell(f, k), scale).1;
            let w = x
                * (ARM_CROSS * mean(a)
                    + mean(ARM_COUNT + c)
                    + mean(ARM_COUNT + AI_CATEGORIES.len() + p)
                    + log_price(p) * mean(SLOPE));
            let at = top.partition_point(|(_, t)| t.abs() >= w.abs());
            if at < TOP_FEATURES {
                top.insert(at, (i, w));
                top.truncate(TOP_FEATURES);
            }
        }
        top
    }

    /// The cells an observation of arm `a` touches and their feature values, each cell once
    /// (two crosses hashed to one cell add their values).
    fn active_cells(features: &Features, a: usize) -> Vec<(usize, f64)> {
        let (c, p) = split(a);
        let x = feature_value(features);
        let mut out: Vec<(usize, f64)> = Vec::with_capacity(4 * features.len());
        for &f in features.hashes() {
            let crosses = [
                (a, ARM_CROSS * x),
                (ARM_COUNT + c, x),
                (ARM_COUNT + AI_CATEGORIES.len() + p, x),
                (SLOPE, log_price(p) * x),
            ];
            for (k, v) in crosses {
                out.push((cell(f, k), v));
            }
        }
        out.sort_unstable_by_key(|(i, _)| *i);
        out.dedup_by(|next, kept| {
            let same = next.0 == kept.0;
            if same {
                kept.1 += next.1;
            }
            same
        });
        out
    }

    /// The weight cells an offer of `arm` in this context reads, in ascending order; empty
    /// for an arm off the ladder. For model views and tests.
    pub fn cells_of(features: &Features, arm: Arm) -> Vec<usize> {
        arm.index()
            .map(|a| {
                Self::active_cells(features, a)
                    .into_iter()
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Learns from one shown L1 offer of `arm`: bought or not. Counts one shown offer. An arm
    /// off the ladder teaches nothing and is not counted; returns whether it was learned.
    pub fn observe(&mut self, features: &Features, arm: Arm, bought: bool) -> bool {
        let learned = self.observe_weighted(features, arm, bought, self.source_weight(Source::Ai));
        if learned {
            self.watch_shown(bought);
        }
        learned
    }

    /// Learns from a single-item offer another level served (template, bundle, shelf): as an
    /// offer of the arm of its category at the nearest price point of the ladder (nearest in
    /// ratio), weighted by [`LearnerSettings::fallback_weight`]. An item outside the AI
    /// categories teaches nothing; returns whether it was learned.
    pub fn observe_fallback(
        &mut self,
        features: &Features,
        category: Category,
        price_cents: i64,
        bought: bool,
    ) -> bool {
        let Some(arm) = nearest_arm(category, price_cents) else {
            return false;
        };
        self.observe_weighted(features, arm, bought, self.source_weight(Source::Fallback))
    }

    /// A shown offer of `arm`, served by `source`: learns from it as not bought (the site
    /// [`Learner::observe`] fits for a miss, weighted by the source) and counts one shown
    /// offer. A later [`Learner::bought`] turns it into a purchase. An arm off the ladder
    /// teaches nothing and is not counted; returns whether it was learned.
    pub fn shown(&mut self, features: &Features, arm: Arm, source: Source) -> bool {
        let learned = self.observe_weighted(features, arm, false, self.source_weight(source));
        if learned && source == Source::Ai {
            self.watch_shown(false);
        }
        learned
    }

    /// Tells the drift watch of one more L1 offer shown (`bought` when it is known to have
    /// sold already), and starts again when the purchase rate of the learner's offers
    /// collapsed (see [`super::drift`]).
    fn watch_shown(&mut self, bought: bool) {
        let changed = self.drift.shown();
        if bought {
            self.drift.bought();
        }
        if changed {
            self.restart();
        }
    }

    /// Starts a new generation: drops every statistic (this node's unsent ones too, which
    /// belong to the tastes that changed) and learns again from the prior. The offer count,
    /// the clock of forgetting, goes on. The next [`Learner::take_increments`] tells the
    /// store, and every node that loads the totals follows.
    fn restart(&mut self) {
        self.start_generation(self.generation.saturating_add(1), self.offers);
        self.restart_unsent = true;
    }

    /// Drops every statistic and takes `generation`, started at offer `since`.
    fn start_generation(&mut self, generation: u32, since: u64) {
        self.cells = Vec::new();
        self.pending = Vec::new();
        self.arms = [0.0; ARM_COUNT];
        self.pending_arms = [0.0; ARM_COUNT];
        self.generation = generation;
        self.generation_since = since;
        self.drift.reset();
    }

    /// A purchase of an offer already counted by [`Learner::shown`]. The likelihood of
    /// "bought" is that of "not bought" times `exp(z)`, `z` the log-odds
    /// (`log sigmoid(z) - log(1 - sigmoid(z)) = z`), and `z` is linear in the weights: turning
    /// the miss into a purchase multiplies the posterior by `exp(weight x . w)`, which adds
    /// `weight x_i` to each active cell's precision x mean and nothing to its precision. The
    /// change is exact, independent of the posterior, and so adds up across nodes whichever
    /// node saw the show. Counts no offer; returns whether it was learned (arm on the
    /// ladder).
    pub fn bought(&mut self, features: &Features, arm: Arm, source: Source) -> bool {
        let Some(a) = arm.index() else { return false };
        if source == Source::Ai {
            self.drift.bought();
        }
        let weight = self.source_weight(source);
        let scale = self.scale();
        self.allocate();
        for (i, x) in Self::active_cells(features, a) {
            let dh = weight * x / scale;
            self.cells[i][1] += dh;
            self.pending[i][1] += dh;
        }
        true
    }

    /// Posterior of `arm`'s purchase log-odds in this context, the prior's offset included;
    /// `None` for an arm off the ladder.
    pub fn estimate(&self, features: &Features, arm: Arm) -> Option<Estimate> {
        let a = arm.index()?;
        let scale = self.scale();
        let mut mean = self.offsets(features.trigger())[a];
        let mut var = 0.0;
        for (i, x) in Self::active_cells(features, a) {
            let (q, m) = self.posterior(i, scale);
            mean += x * m;
            var += x * x / q;
        }
        Some(Estimate {
            mean_log_odds: mean,
            sd_log_odds: var.sqrt(),
        })
    }

    /// The weight of an observation from `source`, finite and not negative.
    fn source_weight(&self, source: Source) -> f64 {
        let w = match source {
            Source::Ai => 1.0,
            Source::Fallback => self.settings.fallback_weight,
        };
        if w.is_finite() { w.max(0.0) } else { 0.0 }
    }

    /// One observation with weight `weight`: Chapelle and Li's diagonal Laplace update for a
    /// batch of one. The MAP of `prior + weight x log-likelihood` lies on the line
    /// `w = m + c D^-1 x` (`D` the diagonal precision), so a one-dimensional Newton solve of
    /// `c = weight (y - sigmoid(mu + c s2))` finds it exactly (`mu`, `s2` the log-odds' prior
    /// mean and variance); each precision then grows by `weight x_i^2 p (1 - p)` at the MAP's
    /// `p`.
    fn observe_weighted(
        &mut self,
        features: &Features,
        arm: Arm,
        bought: bool,
        weight: f64,
    ) -> bool {
        let Some(a) = arm.index() else { return false };
        let scale = self.scale();
        let active = Self::active_cells(features, a);
        let mut mu = self.offsets(features.trigger())[a];
        let mut s2 = 0.0;
        for (i, x) in &active {
            let (q, m) = self.posterior(*i, scale);
            mu += x * m;
            s2 += x * x / q;
        }
        let (c, p) = laplace_step(mu, s2, bought, weight);
        self.allocate();
        for (i, x) in active {
            let (q, m) = self.posterior(i, scale);
            let q_new = q + weight * x * x * p * (1.0 - p);
            let m_new = m + c * x / q;
            let dq = (q_new - q) / scale;
            let dh = (q_new * m_new - q * m) / scale;
            for t in [&mut self.cells[i], &mut self.pending[i]] {
                t[0] += dq;
                t[1] += dh;
            }
        }
        self.arms[a] += weight / scale;
        self.pending_arms[a] += weight / scale;
        self.offers += 1;
        self.pending_offers += 1;
        self.roll_epochs();
        true
    }

    /// Moves to the epoch of the current offer count, rescaling the stored values.
    fn roll_epochs(&mut self) {
        let len = self.epoch_len();
        let target = self.offers / len;
        if target == self.epoch {
            return;
        }
        let k = self.fade(self.epoch * len, target * len);
        for t in self.cells.iter_mut().chain(self.pending.iter_mut()) {
            t[0] *= k;
            t[1] *= k;
        }
        for w in self.arms.iter_mut().chain(self.pending_arms.iter_mut()) {
            *w *= k;
        }
        self.epoch = target;
    }

    /// What this node learned since its last call, to add to the store's totals; what could
    /// not be sent (below the fixed point's resolution) stays for the next one.
    pub fn take_increments(&mut self) -> Increments {
        let mut cells = Vec::new();
        for (i, t) in self.pending.iter_mut().enumerate() {
            if t[0] == 0.0 && t[1] == 0.0 {
                continue;
            }
            let (q, h) = (take_fixed(&mut t[0]), take_fixed(&mut t[1]));
            if q != 0 || h != 0 {
                // CELLS fits a u32.
                cells.push((i as u32, q, h));
            }
        }
        let arms = self
            .pending_arms
            .iter_mut()
            .enumerate()
            .filter(|(_, w)| **w != 0.0)
            .map(|(a, w)| (a as u32, take_fixed(w)))
            .collect();
        Increments {
            generation: self.generation,
            restarted: std::mem::take(&mut self.restart_unsent),
            epoch: self.epoch,
            offers: std::mem::take(&mut self.pending_offers),
            cells,
            arms,
        }
    }

    /// Replaces what this node knows by the store's totals (which hold every node's sent
    /// increments, this one's included) plus what it has not sent yet.
    ///
    /// Totals of a newer generation (another node started again) replace this node's
    /// statistics, unsent ones included; totals of an older one (this node started again
    /// and the store has not heard yet) count as empty.
    pub fn load(&mut self, counters: &[(String, i64)]) {
        let mut totals = Totals::parse(counters, CELLS, ARM_COUNT);
        if totals.generation > self.generation {
            self.start_generation(totals.generation, totals.offers);
            self.restart_unsent = false;
        } else if totals.generation < self.generation {
            totals.cells.clear();
            totals.arms.clear();
        }
        let len = self.epoch_len();
        let old = self.epoch;
        self.offers = totals.offers.saturating_add(self.pending_offers);
        self.epoch = self.offers / len;
        let k = self.fade(old * len, self.epoch * len);
        for t in self.pending.iter_mut() {
            t[0] *= k;
            t[1] *= k;
        }
        for w in self.pending_arms.iter_mut() {
            *w *= k;
        }
        self.cells.clone_from(&self.pending);
        self.arms = self.pending_arms;
        if totals.cells.values().any(|rows| !rows.is_empty()) {
            self.allocate();
        }
        for (epoch, rows) in &totals.cells {
            let k = self.fade(epoch * len, self.epoch * len);
            for (i, q, h) in rows {
                self.cells[*i][0] += k * q;
                self.cells[*i][1] += k * h;
            }
        }
        for (epoch, rows) in &totals.arms {
            let k = self.fade(epoch * len, self.epoch * len);
            for (a, w) in rows {
                self.arms[*a] += k * w;
            }
        }
    }

    /// How much the learner has learned.
    pub fn view(&self) -> LearnerView {
        let scale = self.scale();
        let per_arm: Vec<(Arm, f64)> = Arm::all()
            .zip(self.arms.iter().map(|w| w * scale))
            .collect();
        LearnerView {
            offers: self.offers,
            effective_observations: per_arm.iter().map(|(_, w)| w).sum(),
            per_arm,
            restarts: self.generation,
            learning_since: self.generation_since,
        }
    }
}

/// The value every active feature enters with: `1 / sqrt(n)`, so that the prior variance of
/// an arm's log-odds does not grow with the number of features.
fn feature_value(features: &Features) -> f64 {
    1.0 / (features.len().max(1) as f64).sqrt()
}

/// The value of the slope cross at price point `p`: half the log of the price over
/// [`SLOPE_CENTRE_CENTS`] (from -1.2 at 99 cents to 0.8 at $49.99).
fn log_price(p: usize) -> f64 {
    (PRICE_LADDER_CENTS[p] as f64 / SLOPE_CENTRE_CENTS).ln() / 2.0
}

/// Category and price positions of arm index `a`.
fn split(a: usize) -> (usize, usize) {
    (a / PRICE_LADDER_CENTS.len(), a % PRICE_LADDER_CENTS.len())
}

/// The cell of feature hash `f` crossed with `k`: an arm (`0..18`), a category (`18..21`),
/// a price point (`21..27`) or the log of the price (`27`). A feature's crosses are adjacent
/// cells from where its hash points (wrapping round the table): a decision reads one short run
/// of cells per feature. Two features' runs overlap as often as scattered cells would
/// collide.
#[inline]
pub(super) fn cell(f: u64, k: usize) -> usize {
    debug_assert!(k < CROSSES);
    // The mask keeps the index below CELLS, a power of two; the hash is mixed already.
    (f as usize).wrapping_add(k) & (CELLS - 1)
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

/// Solves `c = weight (y - sigmoid(mu + c s2))` by Newton's method; returns `c` and the
/// purchase probability at the MAP.
pub fn laplace_step(mu: f64, s2: f64, bought: bool, weight: f64) -> (f64, f64) {
    let y = if bought { 1.0 } else { 0.0 };
    let mut c = 0.0;
    for _ in 0..MAX_NEWTON {
        let p = sigmoid(mu + c * s2);
        let g = c - weight * (y - p);
        let step = g / (1.0 + weight * s2 * p * (1.0 - p));
        c -= step;
        if step.abs() < 1e-15 {
            break;
        }
    }
    (c, sigmoid(mu + c * s2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_laplace_step_solves_its_equation() {
        for (mu, s2, y, w) in [
            (0.0, 1.0, true, 1.0),
            (-3.0, 5.0, false, 2.0),
            (2.0, 0.1, true, 0.5),
        ] {
            let (c, p) = laplace_step(mu, s2, y, w);
            let target = w * (if y { 1.0 } else { 0.0 } - p);
            assert!((c - target).abs() < 1e-12, "{c} {target}");
        }
    }

    #[test]
    fn nonsense_settings_keep_the_posterior_finite() {
        use rand::SeedableRng;
        let settings = LearnerSettings {
            half_life_offers: 0.0,
            prior_precision: f64::NAN,
            ..LearnerSettings::default()
        };
        let mut learner = Learner::new(settings, Prior::default());
        let f = Features::from_labels("t", vec!["bias".to_owned()]);
        let arm = Arm::all().next().expect("an arm");
        for i in 0..100 {
            assert!(learner.observe(&f, arm, i % 2 == 0));
        }
        for c in Learner::cells_of(&f, arm) {
            let (q, m) = learner.cell_posterior(c).expect("cell");
            assert!(q.is_finite() && q > 0.0 && m.is_finite());
        }
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let choice = learner.choose(&f, &[arm], &mut rng).expect("an arm");
        assert!(choice.sampled_revenue_cents.is_finite());
    }

    #[test]
    fn cells_stay_in_the_table() {
        for f in [0, 1, u64::MAX, 0xdead_beef] {
            for k in 0..CROSSES {
                assert!(cell(f, k) < CELLS);
            }
        }
    }
}
