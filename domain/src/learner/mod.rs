//! The contextual learner of the AI level: Thompson sampling over a diagonal Bayesian
//! logistic regression on hashed context features (Chapelle and Li, "An Empirical
//! Evaluation of Thompson Sampling", NIPS 2011, their Algorithm 3 with batches of one).
//!
//! # Features and weights
//! [`Features::extract`] turns a decision's [`Context`] (trigger event, platform, country,
//! spender tier, days since install, session attributes) into at most
//! [`features::MAX_FEATURES`] indicator features. Each feature `f` is crossed with the arm
//! (category x price point), with the arm's category alone, with its price point alone, and
//! with the log of its price (the feature's price sensitivity, shared by every price point,
//! so that what one price taught informs its neighbours on the ladder): the shared crosses
//! let what one context taught carry to another (a price
//! learned for level-40 iOS players informs level-45 Android players through the price x
//! level-bucket cells). Every cross is hashed into a table of [`CELLS`] weights, so a game's
//! learner costs the same 512 KiB whatever the number of distinct values it meets.
//!
//! An arm's purchase log-odds are `prior(arm, trigger) + x . w` over its `4n` active cells
//! (`n` active features), with `x_i = 1 / sqrt(n)` on the category and price crosses, half
//! that on the arm crosses, and `ln(price / $9.99) / 2` times that on the slope crosses. Each weight has an independent Gaussian posterior with precision
//! `q_i` and mean `m_i`; [`Learner::choose`] draws every allowed arm's log-odds, and picks
//! the highest `sigmoid(draw) x price`. The [`Choice`] says which features weighed most and
//! what the runner-up drew, for decision traces.
//!
//! [`Learner::observe`] learns from an L1 offer, [`Learner::observe_fallback`] from a
//! single-item offer of any other level at the nearest price point ([`nearest_arm`]),
//! weighted by [`LearnerSettings::fallback_weight`]. Where a show and its purchase arrive as
//! separate events, [`Learner::shown`] learns the offer as not bought and
//! [`Learner::bought`] later turns it into a purchase: the likelihood of a purchase is that of
//! a miss times `exp(z)` (`z` the log-odds, linear in the weights), so the swap adds
//! `weight x_i` to each active cell's precision x mean, exactly, on whichever node hears of
//! it. [`Learner::estimate`] gives an arm's posterior log-odds in a context.
//!
//! # Statistics that add up
//! Each weight's posterior is the product of its Gaussian prior `N(0, 1 / prior_precision)`
//! (the cold-start [`Prior`] is an offset of the log-odds, not a weight, so it never enters
//! the statistics) and one Gaussian factor per observation, the site the Laplace update
//! fits: its natural parameters are the change of `(q_i, q_i m_i)` the update makes. Gaussian
//! factors multiply by adding natural parameters, so a cell's data is the sum of its sites'
//! `(precision, precision x mean)`, whichever node fitted them. A node keeps what it added
//! since its last sync ([`Learner::take_increments`]); the store adds every node's increments
//! to its totals, and [`Learner::load`] reads the totals back plus what the node has not sent.
//! One node that syncs between any two observations is exactly the sequential learner; nodes
//! that observe concurrently fit their sites against posteriors that miss each other's
//! latest sites, the usual approximation of parallel assumed-density filtering, small while a
//! sync interval holds few observations per cell.
//!
//! # Forgetting
//! Evidence fades with a half-life counted in the game's shown offers
//! ([`LearnerSettings::half_life_offers`]). The observation at offer count `n` is stored
//! multiplied by `2^((n - e) / H)` and read multiplied by `2^(-(N - e) / H)`, `N` the offer
//! count now and `e` the start of the current epoch: sums still add, and moving the clock
//! costs nothing. Every [`EPOCH_HALF_LIVES`] half-lives a new epoch starts (stored values
//! shrink by `2^-16`), so stored values never grow past `2^16` times their weight. The store
//! keeps counters per epoch; a reader scales each epoch's totals to its own, so nodes need
//! not roll together, and totals of epochs two or more behind weigh at most `2^-16` and may
//! be dropped. Each node counts its own offers on top of the last total it read, so an
//! observation's fading is off by at most the offers other nodes showed since.
//!
//! # Counters
//! [`Increments::to_counters`] names what a sync adds as `(String, i64)` counters, as the
//! store keeps for the bandit today: `n` (offers), `<epoch>:<cell>:q` and `<epoch>:<cell>:h`
//! (precision and precision x mean, fixed point with [`sync::FIXED_POINT_ONE`] to one), and
//! `<epoch>:a<arm>` (observation weight per arm, for [`Learner::view`]). Only touched cells
//! are sent; a full table is at most `2 x CELLS x 2` counters.
//!
//! # Cold start
//! [`Prior`] gives every price point of the game's range the same expected revenue (so cheap
//! arms are explored as much as dear ones), starts prices outside it lower, and favours the
//! category the genre template serves for each trigger. [`Learner::view`] tells how many
//! observations the learner still remembers.

pub mod drift;
mod estimate;
pub mod features;
mod kernel;
pub mod prior;
mod source;
pub mod sync;

pub use estimate::Estimate;
pub use features::{Context, Features};
pub use kernel::{
    CELLS, Choice, EPOCH_HALF_LIVES, Learner, LearnerSettings, LearnerView, TOP_FEATURES,
    laplace_step,
};
pub use prior::{Moments, Prior};
pub use source::{Source, nearest_arm};
pub use sync::{Increments, Totals};
