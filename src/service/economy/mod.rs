//! Economy and billing: the faucet/sink report and the quadrant it sets, the per-player day
//! caps that keep a few players from moving them, the player population, the holdout
//! comparison and its cache, the revenue-share standing, what verified figures leave out of
//! the day receipt checks began, the revenue by proof (counted, refunded, unverified), the
//! results of price experiments, and the adjustment lines (refunds of earlier months'
//! purchases) a month's statement lists.

pub mod adjustments;
pub mod billing;
pub mod day_caps;
pub mod experiments;
pub mod figures_cache;
pub mod health;
pub mod holdout;
pub mod population;
pub mod revenue;
pub mod verified_baseline;
