//! Custom offer pages and the authoring tool: drafts, validation, previews and the published
//! page, the tool's runs and its device sign-in.

pub mod custom_pages;
pub mod device;
pub mod page_validation;
pub mod previews;
pub mod published_page;
pub mod runs;
