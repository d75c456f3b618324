//! The custom pages of a game: the list of its pages (each with its newest version, who saved
//! it and when, and whether a version is published or under review), and one page's page: its
//! versions, a version's content (the template's size and source, the bound items and texts),
//! the newest preview's screenshots with a button to make one, and the publish request
//! (developer), each with its refusal next to its button.

use maud::{Markup, html};
use offer_domain::approval::Approval;
use offer_domain::custom_page::PageRef;
use serde_json::Value;
use uuid::Uuid;

use super::shots::shots;
use crate::auth::Role;
use crate::dashboard::layout::{Tab, csrf};
use crate::dashboard::session::SignedIn;
use crate::service::authoring::custom_pages::{Page, Version};
use crate::service::authoring::previews::{Preview, Status};

/// What is published and what waits for an approval, per page.
pub struct Standing {
    /// The game's published page and its version, if any.
    pub published: Option<PageRef>,
    /// The approvals of a custom page still pending.
    pub pending: Vec<Approval>,
}

impl Standing {
    fn published_version(&self, page_id: Uuid) -> Option<u32> {
        self.published
            .filter(|p| p.page_id == page_id)
            .map(|p| p.version)
    }

    fn pending_of(&self, page_id: Uuid) -> impl Iterator<Item = (&Approval, u32)> {
        self.pending.iter().filter_map(move |a| {
            a.page
                .filter(|p| p.page_id == page_id)
                .map(|p| (a, p.version))
        })
    }

    /// `published (version 2), version 3 under review`, or `draft`.
    fn describe(&self, page_id: Uuid) -> Markup {
        let published = self.published_version(page_id);
        let pending: Vec<u32> = self.pending_of(page_id).map(|(_, v)| v).collect();
        html! {
            @if let Some(v) = published { "published (version " (v) ")" }
            @if published.is_some() && !pending.is_empty() { ", " }
            @for (i, v) in pending.iter().enumerate() {
                @if i > 0 { ", " }
                "version " (v) " under review"
            }
            @if published.is_none() && pending.is_empty() { "draft" }
        }
    }
}

/// The custom pages of the game `game_id`.
pub fn list(game_id: Uuid, pages: &[Page], standing: &Standing) -> Markup {
    let base = Tab::CustomPages.href(game_id);
    html! {
        h1 { "Custom pages" }
        p.muted {
            "Pages the authoring tool drafts with the game's authoring key. Each save is a new version; a version is published once a developer asks for it and the request is approved. "
            a href={ (base) "/runs" } { "Authoring runs" }
        }
        @if pages.is_empty() { p.muted { "No custom page yet: the authoring tool saves the first draft." } }
        div.table-wrap { table #custom-pages {
            thead { tr { th { "Page" } th { "Versions" } th { "State" } th { "Last saved by" } th { "Last saved" } } }
            tbody {
                @for p in pages {
                    @let last = p.versions.last();
                    tr data-page-id=(p.page_id) {
                        td { a href={ (base) "/" (p.page_id) } { code { (p.page_id) } } }
                        td { (p.versions.len()) }
                        td.state { (standing.describe(p.page_id)) }
                        td { (last.map(|v| v.created_by.as_str()).unwrap_or_default()) }
                        td { (last.map_or(p.created_at, |v| v.created_at).format("%Y-%m-%d %H:%M")) }
                    }
                }
            }
        } }
    }
}

/// A refusal shown next to the form that caused it.
pub enum Refused {
    /// The preview request.
    Preview(String),
    /// The publish request.
    Publish(String),
}

/// One binding's value, as text.
fn binding_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// What a version holds: the template's size and source, the bound items and texts.
fn content(v: &Version) -> Markup {
    let items: Vec<String> = v
        .bindings
        .get("items")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(binding_text).collect())
        .unwrap_or_default();
    html! {
        section #content {
            h2 { "Version " (v.info.version) }
            dl {
                dt { "Saved" } dd { (v.info.created_at.format("%Y-%m-%d %H:%M")) " UTC by " (v.info.created_by) }
                dt { "Template" } dd #template-size { (v.template.lines().count()) " lines, " (v.template.len()) " bytes" }
                dt { "Bound items" } dd #bound-items { @if items.is_empty() { span.muted { "none" } } @else { (items.join(", ")) } }
                @for (name, value) in v.bindings.iter().filter(|(k, _)| k.as_str() != "items") {
                    dt { (name) } dd { (binding_text(value)) }
                }
            }
            details {
                summary { "The template's source" }
                pre { code { (v.template) } }
            }
        }
    }
}

fn versions_table(base: &str, page: &Page, shown: u32, standing: &Standing) -> Markup {
    let published = standing.published_version(page.page_id);
    let pending: Vec<u32> = standing.pending_of(page.page_id).map(|(_, v)| v).collect();
    html! {
        div.table-wrap { table #versions {
            thead { tr { th { "Version" } th { "Saved" } th { "By" } th { "Size" } th { "State" } } }
            tbody {
                @for v in page.versions.iter().rev() {
                    tr data-version=(v.version) aria-current=[(v.version == shown).then_some("true")] {
                        td { a href={ (base) "?version=" (v.version) } { (v.version) } }
                        td { (v.created_at.format("%Y-%m-%d %H:%M")) }
                        td { (v.created_by) }
                        td { (v.size) " bytes" }
                        td.state {
                            @if published == Some(v.version) { "published" }
                            @else if pending.contains(&v.version) { "under review" }
                        }
                    }
                }
            }
        } }
    }
}

/// One custom page's page, showing its version `version` and that version's newest
/// `preview`, with the refusal of a preview or publish request when there is one.
pub fn page(
    user: &SignedIn,
    game_id: Uuid,
    (page, version): (&Page, &Version),
    preview: Option<&Preview>,
    standing: &Standing,
    refused: Option<&Refused>,
) -> Markup {
    let page_id = page.page_id;
    let number = version.info.version;
    let base = format!("{}/{page_id}", Tab::CustomPages.href(game_id));
    let writes = user.can(Role::Developer);
    let building = preview.is_some_and(|p| matches!(p.status, Status::Queued | Status::Building));
    html! {
        h1 { "Custom page " code { (page_id) } }
        p { "State: " strong #page-state { (standing.describe(page_id)) } }
        (versions_table(&base, page, number, standing))
        (content(version))
        section #preview {
            h2 { "Preview" }
            (shots(game_id, preview))
            @if writes && !building {
                form method="post" action={ (base) "/preview" } {
                    (csrf(user))
                    input type="hidden" name="version" value=(number);
                    button #make-preview type="submit" {
                        @if preview.is_some() { "Make a new preview" } @else { "Make a preview" }
                    }
                }
            }
            @if let Some(Refused::Preview(why)) = refused { p.field-error #error-preview role="alert" { (why) } }
        }
        section #publish {
            h2 { "Publishing" }
            @let pending: Vec<(&Approval, u32)> = standing.pending_of(page_id).collect();
            @if pending.is_empty() { p.muted { "No publish request waits for an approval." } }
            ul.plain {
                @for (a, v) in &pending {
                    li { a.pending-request href={ "/dashboard/approvals/" (a.approval_id) } { "Version " (v) ", asked " (a.created_at.format("%Y-%m-%d %H:%M")) } " waits for an approval" }
                }
            }
            @if writes {
                form method="post" action={ (base) "/publish-request" } {
                    (csrf(user))
                    input type="hidden" name="version" value=(number);
                    p.muted { "The request goes to the approval queue; approving it publishes this version to every connected player." }
                    button #request-publish type="submit" { "Ask to publish version " (number) }
                }
            }
            @if let Some(Refused::Publish(why)) = refused { p.field-error #error-publish role="alert" { (why) } }
        }
        p { a href=(Tab::CustomPages.href(game_id)) { "Back to the custom pages" } }
    }
}
