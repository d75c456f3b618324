//! Store receipts at purchase time: [`verify`] judges one against its game's store settings,
//! [`pool`] runs that judgement on a bounded set of blocking threads, and [`redemptions`]
//! remembers which player redeemed each store transaction. The purchase event
//! (`events::apply`) decides with them what a purchase grants and counts.

pub mod pool;
pub mod redemptions;
pub mod verify;

pub use pool::VerifyPool;
