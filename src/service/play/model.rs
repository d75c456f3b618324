//! What the AI level's learner has learned, in words a studio can read: for each trigger the
//! arm it would pick now, its estimated conversion with a 95% interval, how much evidence
//! stands behind it, and the features that weigh most; and how much the learner remembers
//! overall. `GET /v1/games/{game_id}/model` and the dashboard's Model page show it.
//!
//! A pick depends on the whole context (platform, level, country, ...), so each trigger is
//! judged over the contexts of this node's latest decisions at that trigger: the arm with the
//! highest estimated revenue (posterior mean conversion x price, no exploration) in each, and
//! the one picked most often reported. A trigger with no recent decision (one the genre
//! template or a bundle names) is judged for a player of whom nothing else is known.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use offer_actors::GameHandle;
use offer_domain::bandit::Arm;
use offer_domain::learner::{Estimate, Features, Learner, LearnerView};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use utoipa::ToSchema;

use crate::service::Services;

/// Recent contexts judged per trigger, at most.
const CONTEXTS_PER_TRIGGER: usize = 200;
/// Recent decisions read from this node's log, at most.
const RECENT_DECISIONS: usize = 4_000;
/// Triggers reported, at most (the busiest first).
const MAX_TRIGGERS: usize = 32;
/// Features listed per trigger.
const STRONGEST: usize = 3;
/// The normal quantile of a 95% interval.
const Z95: f64 = 1.96;

/// What the learner of one game has learned.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelReport {
    /// Shown offers the learner has counted (the clock its evidence fades by).
    pub offers: u64,
    /// Offers it still remembers: each weighted by how much it has faded (and by the
    /// fallback weight for other levels' offers). 0 means it knows only its prior.
    pub effective_observations: f64,
    /// In a sentence: how much it has learned.
    pub summary: String,
    /// The half-life of its evidence, in shown offers.
    pub half_life_offers: u32,
    /// How many times it started again from its prior because the purchase rate of its
    /// offers collapsed (a change of taste).
    pub restarts: u32,
    /// The offer count when it last started again (0 if it never did): what it knows was
    /// learned since.
    pub learning_since_offer: u64,
    /// Per trigger, the arm it would pick now.
    pub by_trigger: Vec<TriggerModel>,
    /// Per arm, the offers it remembers.
    pub arms: Vec<ArmEvidence>,
}

/// The learner's pick at one trigger.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TriggerModel {
    /// The trigger event.
    pub trigger: String,
    /// Recent decisions at this trigger the pick was judged over on this node; 0 when none
    /// (judged for a player of whom nothing else is known).
    pub contexts: usize,
    /// The arm picked most often, with its estimates averaged over the contexts.
    pub pick: ArmEstimate,
    /// Share of the contexts in which that arm is the best.
    pub pick_share: f64,
    /// The second most picked arm, when another was ever best.
    pub runner_up: Option<ArmEstimate>,
    /// The features that weigh most on the pick, with their mean contribution to its
    /// purchase log-odds (positive: more likely to buy).
    pub strongest_features: Vec<FeatureWeight>,
}

/// An arm with what the learner estimates of it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ArmEstimate {
    /// The arm.
    pub arm: Arm,
    /// Estimated purchase probability of one showing.
    pub conversion: f64,
    /// Lower end of its 95% credible interval.
    pub conversion_low: f64,
    /// Upper end of its 95% credible interval.
    pub conversion_high: f64,
    /// Estimated revenue per showing, in cents.
    pub expected_revenue_cents: f64,
    /// The evidence behind the estimate, as the number of offers in this very context that
    /// would narrow the prior as much (0: prior only).
    pub evidence_offers: f64,
}

/// A feature and its weight on a pick.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FeatureWeight {
    /// The feature, for example `platform=ios` or `attr:level~t0:9`.
    pub feature: String,
    /// Its mean contribution to the pick's purchase log-odds.
    pub log_odds: f64,
}

/// The offers the learner remembers of one arm.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ArmEvidence {
    /// The arm.
    pub arm: Arm,
    /// Offers remembered, faded.
    pub effective_observations: f64,
}

/// The report of `game`'s learner as this node serves it.
pub fn report(state: &Services, game: &GameHandle) -> ModelReport {
    let view = game.view();
    let learner = view.snapshot.learner();
    let arms = view.snapshot.ai_arms();
    let game_id = view.game.game_id;
    let mut contexts: BTreeMap<String, Vec<Arc<Features>>> = BTreeMap::new();
    for (trigger, features) in state.decisions.contexts(game_id, RECENT_DECISIONS) {
        let list = contexts.entry(trigger).or_default();
        if list.len() < CONTEXTS_PER_TRIGGER {
            list.push(features);
        }
    }
    let mut busiest: Vec<(String, Vec<Arc<Features>>)> = contexts.into_iter().collect();
    busiest.sort_by_key(|(_, list)| std::cmp::Reverse(list.len()));
    busiest.truncate(MAX_TRIGGERS);
    let seen: BTreeSet<String> = busiest.iter().map(|(t, _)| t.clone()).collect();
    let configured = view
        .templates
        .iter()
        .map(|t| t.event_type.clone())
        .chain(view.bundles.iter().flat_map(|b| b.triggers.iter().cloned()));
    let unseen: BTreeSet<String> = configured.filter(|t| !seen.contains(t)).collect();
    for trigger in unseen {
        if busiest.len() >= MAX_TRIGGERS {
            break;
        }
        busiest.push((trigger, Vec::new()));
    }
    let blank = Learner::new(learner.settings().clone(), learner.prior().clone());
    let judge = Judge {
        learner,
        blank: &blank,
        arms,
    };
    let mut triggers: Vec<TriggerModel> = busiest
        .into_iter()
        .filter_map(|(trigger, list)| judge.trigger(trigger, list))
        .collect();
    triggers.sort_by(|a, b| a.trigger.cmp(&b.trigger));
    let LearnerView {
        offers,
        effective_observations,
        per_arm,
        restarts,
        learning_since,
    } = learner.view();
    let mut summary = summary(offers, effective_observations);
    if restarts > 0 {
        summary.push_str(&format!(
            " Started again from its prior {restarts} time(s) when its offers stopped selling \
             as they had; the last time at offer {learning_since}."
        ));
    }
    ModelReport {
        offers,
        effective_observations,
        summary,
        half_life_offers: view.game.learner.half_life_offers,
        restarts,
        learning_since_offer: learning_since,
        by_trigger: triggers,
        arms: per_arm
            .into_iter()
            .map(|(arm, w)| ArmEvidence {
                arm,
                effective_observations: w,
            })
            .collect(),
    }
}

/// How much the learner has learned, in a sentence.
fn summary(offers: u64, remembered: f64) -> String {
    if remembered < 1.0 {
        "Nothing learned yet: picks follow the prior (the genre template's categories at \
         every price of the catalogue's range)."
            .to_owned()
    } else if remembered < 1_000.0 {
        format!(
            "Early learning: {remembered:.0} offers remembered of {offers} shown; picks still \
             lean on the prior and explore widely."
        )
    } else {
        format!(
            "Learning from {remembered:.0} remembered offers of {offers} shown; older evidence \
             fades with the half-life."
        )
    }
}

/// Judges picks with one learner, against a learner that knows only the prior.
struct Judge<'a> {
    learner: &'a Learner,
    blank: &'a Learner,
    arms: &'a [Arm],
}

impl Judge<'_> {
    /// The model of one trigger over its recent contexts (or a bare one when none).
    fn trigger(&self, trigger: String, mut list: Vec<Arc<Features>>) -> Option<TriggerModel> {
        let contexts = list.len();
        if list.is_empty() {
            let bare = vec!["bias".to_owned(), format!("trigger={trigger}")];
            list.push(Arc::new(Features::from_labels(&trigger, bare)));
        }
        let mut picks: HashMap<Arm, Vec<ArmEstimate>> = HashMap::new();
        let mut weights: HashMap<Arm, BTreeMap<String, (f64, usize)>> = HashMap::new();
        let mut rng = StdRng::seed_from_u64(0);
        for features in &list {
            let Some(best) = self.best(features) else {
                continue;
            };
            if let Some(choice) = self.learner.choose(features, &[best.arm], &mut rng) {
                let sums = weights.entry(best.arm).or_default();
                for (label, w) in choice.top_labels(features) {
                    let slot = sums.entry(label.to_owned()).or_default();
                    slot.0 += w;
                    slot.1 += 1;
                }
            }
            picks.entry(best.arm).or_default().push(best);
        }
        let mut ranked: Vec<(Arm, Vec<ArmEstimate>)> = picks.into_iter().collect();
        ranked.sort_by(|a, b| {
            b.1.len()
                .cmp(&a.1.len())
                .then(a.0.price_cents.cmp(&b.0.price_cents))
        });
        let mut ranked = ranked.into_iter();
        let (arm, estimates) = ranked.next()?;
        let pick_share = estimates.len() as f64 / list.len() as f64;
        let mut strongest: Vec<FeatureWeight> = weights
            .remove(&arm)
            .unwrap_or_default()
            .into_iter()
            .map(|(feature, (sum, n))| FeatureWeight {
                feature,
                log_odds: sum / n.max(1) as f64,
            })
            .collect();
        strongest.sort_by(|a, b| b.log_odds.abs().total_cmp(&a.log_odds.abs()));
        strongest.truncate(STRONGEST);
        Some(TriggerModel {
            trigger,
            contexts,
            pick: mean(arm, &estimates),
            pick_share,
            runner_up: ranked.next().map(|(arm, e)| mean(arm, &e)),
            strongest_features: strongest,
        })
    }

    /// The arm with the highest estimated revenue in one context.
    fn best(&self, features: &Features) -> Option<ArmEstimate> {
        self.arms
            .iter()
            .filter_map(|arm| self.estimate(features, *arm))
            .max_by(|a, b| {
                a.expected_revenue_cents
                    .total_cmp(&b.expected_revenue_cents)
            })
    }

    /// What the learner estimates of `arm` in one context.
    fn estimate(&self, features: &Features, arm: Arm) -> Option<ArmEstimate> {
        let e: Estimate = self.learner.estimate(features, arm)?;
        let prior = self.blank.estimate(features, arm)?;
        let conversion = e.conversion();
        let (low, high) = e.interval(Z95);
        // A logistic observation adds about p (1 - p) to the log-odds' precision.
        let gained = 1.0 / e.sd_log_odds.powi(2) - 1.0 / prior.sd_log_odds.powi(2);
        let per_offer = (conversion * (1.0 - conversion)).max(1e-9);
        Some(ArmEstimate {
            arm,
            conversion,
            conversion_low: low,
            conversion_high: high,
            expected_revenue_cents: conversion * arm.price_cents as f64,
            evidence_offers: (gained / per_offer).max(0.0),
        })
    }
}

/// The mean of an arm's estimates over several contexts.
fn mean(arm: Arm, estimates: &[ArmEstimate]) -> ArmEstimate {
    let n = estimates.len().max(1) as f64;
    let avg = |f: fn(&ArmEstimate) -> f64| estimates.iter().map(f).sum::<f64>() / n;
    ArmEstimate {
        arm,
        conversion: avg(|e| e.conversion),
        conversion_low: avg(|e| e.conversion_low),
        conversion_high: avg(|e| e.conversion_high),
        expected_revenue_cents: avg(|e| e.expected_revenue_cents),
        evidence_offers: avg(|e| e.evidence_offers),
    }
}
