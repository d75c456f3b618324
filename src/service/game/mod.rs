//! The game and its catalogue: games, items, item art, the offer configuration (L2 templates,
//! L3 bundles, price experiments, the kill switch), and the store settings (receipt
//! verification, the stores' identifiers).

pub mod assets;
pub mod games;
pub mod items;
pub mod offer_config;
pub mod stores;
