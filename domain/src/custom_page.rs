//! Custom offer pages as an approval names them and as a game serves them once published.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

/// One saved version of a custom page: what a `custom_page` approval covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PageRef {
    /// The page.
    pub page_id: Uuid,
    /// The version of the page, 1 for its first save.
    #[schema(minimum = 1)]
    pub version: u32,
}

/// The custom page a game serves: the approved version with its content, as clients receive
/// it in the `config` message and the SDK status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PublishedPage {
    /// The page.
    pub page_id: Uuid,
    /// The version published.
    #[schema(minimum = 1)]
    pub version: u32,
    /// The page's Dart source, as saved.
    pub template: String,
    /// What the template reads by name: `{"items": [item_id, ...], <name>: string | number}`.
    #[schema(value_type = Object)]
    pub bindings: Map<String, Value>,
}

/// A published page shared by every view of a game (it can be 80 KiB: cloned by pointer).
pub type SharedPage = Arc<PublishedPage>;
