//! What the SDK drives for a player: sessions, events and the inventory they change, the
//! history import of past money events, frequency caps, the offers served and the log of their
//! decisions, the counts of offers in their price experiments, the player record support
//! staff read, a player's data export and erasure, and the count of refused events.

pub mod caps;
pub mod decision_codec;
pub mod decision_log;
pub mod erasure;
pub mod events;
pub mod exposures;
pub mod import;
pub mod inventory;
pub mod model;
pub mod offers;
pub mod player_data;
pub mod players;
pub mod receipts;
pub mod refunds;
pub mod refused_events;
pub mod sessions;
