//! The pages' markup, apart from their handlers: each function draws a page's body (or a
//! piece several pages show) from the data its handler gathered and authorized, and the
//! handler answers it in the game's frame. No view reads a service; no handlers file imports
//! another, so the pieces two pages share live here.

pub mod approvals;
pub mod audit;
pub mod bundle;
pub mod catalogue;
pub mod chart;
pub mod custom_pages;
pub mod device;
pub mod economy;
pub mod experiments;
pub mod games;
pub mod live;
pub mod model;
pub mod offers;
pub mod products;
pub mod runs;
pub mod shots;
pub mod sign_in;
pub mod stores;
