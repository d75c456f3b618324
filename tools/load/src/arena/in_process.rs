//! `arena --in-process`: the same game played against the contextual learner alone, in this
//! process, with no engine around it. Fast (seconds per run), for tuning the learner.
//!
//! The population, the stream of players and triggers and the purchase draws come from the
//! same seeds as against the engine, so both modes face the same players in the same order.
//! The learner sees what the engine's learner sees: the trigger, the `platform` and
//! `country` attributes, the other attributes (`level`, and `device` on `noise`), no
//! lifetime spend and 0 days since install (the engine reads both when a session opens, and
//! every player opens its one session new, before any purchase). It starts from
//! [`Prior::default`] (no genre template, the whole ladder in range), so everything it earns
//! it learned. Each offer is learned as the engine learns it: [`Learner::shown`] when
//! served, then [`Learner::bought`] when it sells.
//!
//! There is no holdout here (the engine's holdout keeps 10% of players from any offer, a
//! matter of the engine, not of the learner): every offer is scored. The shadow scenario
//! needs the engine's Shadow mode and fallback levels and is not played in process.

use std::collections::HashMap;
use std::time::Instant;

use offer_domain::bandit::Arm;
use offer_domain::learner::{Context, Features, Learner, LearnerSettings, Prior, Source};
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};

use super::play::{BUYER_SALT, OFFERS_SALT, Played};
use super::scenario::{Player, Scenario, TRIGGERS, Timeline, arm_revenues, population, truth};
use super::score::OfferScore;

/// Salt of the learner's Thompson draws, apart from the world's streams.
const SAMPLER_SALT: u64 = 0x7407_5a3d;

/// Plays `scenario` over `timeline` with `players` players against a fresh learner with
/// `settings`, everything drawn from `seed`. Every answer counts at level 1 (the AI's) in
/// [`Played::levels`], and at 0 when the learner has no arm to offer.
pub fn play(
    settings: &LearnerSettings,
    scenario: Scenario,
    timeline: Timeline,
    players: usize,
    seed: u64,
) -> Played {
    let mut world = StdRng::seed_from_u64(seed);
    let population = population(scenario, players.max(1), &mut world);
    let mut draws = StdRng::seed_from_u64(seed ^ OFFERS_SALT);
    let mut buyer = StdRng::seed_from_u64(seed ^ BUYER_SALT);
    let mut sampler = StdRng::seed_from_u64(seed ^ SAMPLER_SALT);
    let mut learner = Learner::new(settings.clone(), Prior::default());
    let arms: Vec<Arm> = Arm::all().collect();
    let mut played = Played::new(timeline.offers);
    let started = Instant::now();
    while played.scores.len() < timeline.offers {
        let t = played.scores.len();
        let who = draws.random_range(0..population.len());
        let trigger = draws.random_range(0..TRIGGERS.len());
        let player = &population[who];
        let features = features(player, TRIGGERS[trigger]);
        let choice = learner.choose(&features, &arms, &mut sampler);
        let shifted = timeline.shifted(t);
        let p = choice.as_ref().map_or(0.0, |c| {
            truth(
                scenario,
                shifted,
                player,
                trigger,
                c.arm.category,
                c.arm.price_cents,
            )
        });
        // Drawn for every offer, as against the engine.
        let bought = buyer.random::<f64>() < p;
        match &choice {
            Some(c) => {
                played.levels[1] += 1;
                learner.shown(&features, c.arm, Source::Ai);
                if bought {
                    learner.bought(&features, c.arm, Source::Ai);
                    played.purchases += 1;
                }
            }
            None => played.levels[0] += 1,
        }
        played.scores.push(OfferScore {
            engine: p * choice.map_or(0.0, |c| c.arm.price_cents as f64),
            arms: arm_revenues(scenario, shifted, player, trigger),
        });
    }
    played.elapsed = started.elapsed();
    let view = learner.view();
    played.restarts = Some((view.restarts, view.learning_since));
    played
}

/// What the learner sees of `player` on `trigger`.
fn features(player: &Player, trigger: &str) -> Features {
    let session = player.attributes();
    let field = |name: &str| session[name].as_str();
    let attributes: HashMap<String, serde_json::Value> = session
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(name, _)| !matches!(name.as_str(), "platform" | "country"))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    let context = Context {
        trigger,
        platform: field("platform"),
        country: field("country"),
        spend_cents: 0,
        days_since_install: Some(0),
        attributes: &attributes,
    };
    Features::extract(&context, &[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arena::score::{best_single_arm, shares};

    #[test]
    fn a_short_run_plays_every_offer_and_scores_a_share_of_the_oracle() {
        let timeline = Timeline::of(Scenario::Category, 400);
        let played = play(
            &LearnerSettings::default(),
            Scenario::Category,
            timeline,
            100,
            1,
        );
        assert_eq!(played.scores.len(), 400);
        assert_eq!(played.levels[0] + played.levels[1], 400);
        assert_eq!(played.holdout_requests, 0);
        let (from, to) = timeline.scored;
        let window = &played.scores[from..to];
        let s = shares(window, best_single_arm(window));
        assert!((0.0..=1.0).contains(&s.engine), "{}", s.engine);
        assert!(s.engine > 0.0, "the learner sold nothing");
    }

    #[test]
    fn runs_are_seeded() {
        let run = |seed| {
            let timeline = Timeline::of(Scenario::Both, 200);
            play(
                &LearnerSettings::default(),
                Scenario::Both,
                timeline,
                50,
                seed,
            )
            .scores
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn after_a_shift_the_learner_starts_again_and_recovers() {
        // Seeded: the same run every time. 16,000 offers take a few seconds in a debug build.
        let timeline = Timeline::of(Scenario::Shift, 16_000);
        let shift = timeline.shift_at.expect("the shift scenario shifts");
        let played = play(
            &LearnerSettings::default(),
            Scenario::Shift,
            timeline,
            5_000,
            1,
        );
        let (restarts, since) = played
            .restarts
            .expect("the in-process run reports restarts");
        assert_eq!(restarts, 1, "one change, one restart");
        let since = usize::try_from(since).expect("an offer count");
        assert!(
            (shift..shift + 1_500).contains(&since),
            "started again at {since}, the shift at {shift}"
        );
        let (from, to) = timeline.scored;
        let window = &played.scores[from..to];
        let s = shares(window, best_single_arm(window));
        assert!(
            s.engine > s.single,
            "after the shift it earns {:.3}, the best single offer {:.3}",
            s.engine,
            s.single
        );
    }
}
