//! Economy and billing: the faucet/sink report and the quadrant it sets, the player population,
//! the holdout comparison and its cache, the revenue-share standing, what verified figures
//! leave out of the day receipt checks began, and the results of price experiments.

pub mod billing;
pub mod experiments;
pub mod figures_cache;
pub mod health;
pub mod holdout;
pub mod population;
pub mod verified_baseline;
