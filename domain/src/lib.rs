//! Pure domain logic of the offer engine.
//!
//! Nothing in this crate performs I/O: every function takes the state it needs as arguments
//! and returns a value, so the HTTP layer, the actors, the benches and the tests all call the
//! same code.
//!
//! Layout, leaves first (each module only uses the ones listed before it):
//! - [`validation`]: the field-error list every validator returns, and the shared limits.
//! - [`schema`]: the OpenAPI document's names for the validators' textual rules.
//! - [`environment`]: production and sandbox, kept apart everywhere.
//! - [`category`]: the catalogue category of an item.
//! - [`currency`]: the currencies of a game.
//! - [`product_ids`]: the stores that sign purchases and the product ids items and bundles
//!   are sold under.
//! - [`catalogue`]: items, their validation and the three value (USD) rules.
//! - [`kill_level`]: the kill switch's levels and what each one turns off.
//! - [`offer`]: offer configuration records (templates, bundles, experiments) and offers.
//! - [`product_grant`]: which store product pays for which item or bundle, resolved at
//!   purchase time and when an offer is served.
//! - [`store_settings`]: a game's store settings: receipt verification and each store's
//!   identifiers.
//! - [`game`]: games, guardrails, operating mode and the genre calibration table.
//! - [`holdout`]: the permanent 10% holdout hash.
//! - [`policy`]: guardrail checks (price cap, loot boxes, frequency caps).
//! - [`bandit`]: the L1 Thompson-sampling model.
//! - [`economy`]: FSR quadrants.
//! - [`fsr`]: the faucet/sink ratio report over rolling 7-day windows.
//! - [`mann_whitney`]: the one-sided rank test behind the holdout ARPU p-value.
//! - [`holdout_arpu`]: ARPU of treatment against the holdout, and revenue-share eligibility.
//! - [`experiment_results`]: a price experiment's figures per variant, its tests against
//!   the control and the sample-ratio check.
//! - [`adjustment`]: a store refund (or its reversal) of a purchase of an earlier month, as
//!   a line on the statement of the month it arrived in.
//! - [`revenue_share`]: the revenue-share standing: conditions, plan by monthly players and
//!   its base fee, the revenue share and the amount due, next billing day.
//! - [`statement`]: a closed month's statement as CSV.
//! - [`simulation`]: the approval simulation, 10,000 Monte Carlo trials of an offer's effect
//!   on the 7-day FSR.
//! - [`custom_page`]: a custom page's version as approvals name it, and as a game serves it.
//! - [`approval`]: approval records and the decide-once rule.
//! - [`pipeline`]: the immutable game snapshot and the five-level offer decision.
//! - [`learner`]: the contextual L1 learner's kernel: hashed context features, Thompson
//!   sampling over a Bayesian logistic regression, statistics that nodes add up.
//! - [`learning`]: a game's learner settings and its cold-start prior.
//! - [`offer_validation`]: the rules templates, bundles and experiments must follow.
//! - [`secret_scan`]: finds anything shaped like a service key in text.
//! - [`template`]: custom offer pages: the Dart template subset, its one parser, the widget
//!   table, bindings and the validator's gates.
//! - `testing` (tests and the `testing` feature only): fixtures for tests, benches and the
//!   load tool.

pub mod adjustment;
pub mod approval;
pub mod audit;
pub mod bandit;
pub mod catalogue;
pub mod category;
pub mod currency;
pub mod custom_page;
pub mod day_caps;
pub mod economy;
pub mod environment;
pub mod experiment_results;
pub mod fsr;
pub mod game;
pub mod holdout;
pub mod holdout_arpu;
pub mod kill_level;
pub mod learner;
pub mod learning;
pub mod mann_whitney;
pub mod offer;
pub mod offer_validation;
pub mod pipeline;
pub mod player_auth;
pub mod policy;
pub mod product_grant;
pub mod product_ids;
pub mod revenue_share;
pub mod schema;
pub mod secret_scan;
pub mod simulation;
pub mod statement;
pub mod store_settings;
pub mod template;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod timestamp;
pub mod validation;
