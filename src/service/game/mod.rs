//! The game and its catalogue: games, items, item art, the offer configuration (L2 templates,
//! L3 bundles, price experiments, the kill switch), the store settings (receipt
//! verification, the stores' identifiers), and player identity (signed player tokens).

pub mod assets;
pub mod games;
pub mod items;
pub mod offer_config;
pub mod player_auth;
pub mod stores;
