//! The game's published custom page as stored: where it lives, how it is read back, the page
//! a saved version would publish, and the documents that publish it. Only an approval
//! publishes (in [`approvals::decide`](crate::service::approval::approvals::decide), which writes [`entry`]'s
//! documents in the same atomic store step as the decision); a publish request
//! ([`publish_request`](crate::service::approval::publish_request)) queues that approval. The game's actor then
//! serves the page (SDK status, the `config` message) and every node reloads it.

use offer_domain::custom_page::{PageRef, PublishedPage, SharedPage};
use uuid::Uuid;

use crate::service::{ServiceResult, Services, authoring::custom_pages};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The document of the game's `config` collection holding the published page.
const KEY: &str = "custom_page";

fn config(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// The game's published page, if one was ever approved.
pub async fn load(state: &Services, game_id: Uuid) -> ServiceResult<Option<SharedPage>> {
    match state.store.get(config(game_id), KEY).await? {
        Some(bytes) => Ok(Some(SharedPage::new(decode(&bytes)?))),
        None => Ok(None),
    }
}

/// The page as it would be published: the saved version's template and bindings.
pub async fn content(
    state: &Services,
    game_id: Uuid,
    page: PageRef,
) -> ServiceResult<PublishedPage> {
    let saved = custom_pages::version(state, game_id, page.page_id, page.version).await?;
    Ok(PublishedPage {
        page_id: page.page_id,
        version: page.version,
        template: saved.template,
        bindings: saved.bindings,
    })
}

/// Documents to write into one collection: their ids and encoded bodies.
pub type Entries = Vec<(String, Vec<u8>)>;

/// Where [`approvals::decide`](crate::service::approval::approvals::decide) writes the published page of
/// `game_id`, beside the decision: the collection and its one entry.
pub fn entry(game_id: Uuid, page: &PublishedPage) -> ServiceResult<(Collection, Entries)> {
    Ok((config(game_id), vec![(KEY.to_owned(), encode(page)?)]))
}
