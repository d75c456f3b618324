//! Page renderings that more than one handlers file shows, kept apart from the handlers so
//! that no page module imports another: the offers page and a bundle's form (the offers and
//! the bundles handlers), an item's page (the catalogue and the art upload) and the
//! screenshots section of a custom page's version (the custom pages and the approvals).

pub mod bundle_form;
pub mod item;
pub mod offers;
pub mod shots;
