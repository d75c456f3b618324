//! The game and its catalogue: games, items, item art, and the offer configuration (L2 templates,
//! L3 bundles, price experiments, the kill switch).

pub mod assets;
pub mod games;
pub mod items;
pub mod offer_config;
