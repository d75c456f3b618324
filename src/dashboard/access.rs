//! Who may see a dashboard page, checked once by the page's extractor: [`DashGame`] for the
//! pages under `/dashboard/games/{game_id}`, [`DashApproval`] for an approval's pages (its game
//! found through the approval) and [`Member`] for the pages of no game. The role a page needs
//! is a type parameter ([`Viewer`], [`Developer`] or [`Admin`], the REST routes' markers), so
//! the handler's signature says it and no handler repeats (or forgets) a check.
//!
//! The order is the REST transport's: the session (without one, the sign-in form), then the
//! game (the 404 page when absent, malformed or another studio's: a member never learns what
//! exists outside its studio), then the role (the 403 page). A writing form's body and its CSRF
//! token are read after, by [`CsrfForm`](super::session::CsrfForm) or
//! [`CsrfMultipart`](super::session::CsrfMultipart).

use std::marker::PhantomData;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::Markup;
use offer_actors::GameHandle;
use offer_domain::approval::Approval;
use uuid::Uuid;

use super::failure::PageError;
use super::layout::{self, Tab};
use super::session::SignedIn;
pub use crate::http::access::{Admin, Developer, MinRole, Viewer};
use crate::service::approval::approvals;
use crate::service::{ServiceError, access};
use crate::state::AppState;

/// A signed-in member with at least role `R` on the game the page's path names.
pub struct DashGame<R> {
    /// Who is asking.
    pub user: SignedIn,
    /// The game, in the member's studio.
    pub game: GameHandle,
    role: PhantomData<R>,
}

impl<R> DashGame<R> {
    /// The game's id.
    pub fn game_id(&self) -> Uuid {
        self.game.view().game.game_id
    }

    /// The answer of every page of the game: the signed-in frame with the game's tabs, `tab`
    /// current, around `body`, with `status` (200, or the status of a refusal the page shows
    /// next to its form).
    pub fn page(&self, status: StatusCode, title: &str, tab: Tab, body: Markup) -> Response {
        layout::game_page(
            status,
            &self.user,
            title,
            (&self.game.view().game, tab),
            body,
        )
    }
}

impl<R: MinRole> FromRequestParts<AppState> for DashGame<R> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = SignedIn::from_request_parts(parts, state).await?;
        let game_id = path_id(parts, state, "game_id").await?;
        let game = access::for_studio(&state.services, &user.caller.studio_id, game_id).await?;
        user.require(R::ROLE)?;
        Ok(Self {
            user,
            game,
            role: PhantomData,
        })
    }
}

/// A signed-in member with at least role `R` on the approval the page's path names, and its
/// game: another studio's approval is absent.
pub struct DashApproval<R> {
    /// Who is asking.
    pub user: SignedIn,
    /// The approval.
    pub approval: Approval,
    /// The approval's stored bytes, which its decision compares against.
    pub stored: Vec<u8>,
    /// The approval's game.
    pub game: GameHandle,
    role: PhantomData<R>,
}

impl<R: MinRole> FromRequestParts<AppState> for DashApproval<R> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = SignedIn::from_request_parts(parts, state).await?;
        let approval_id = path_id(parts, state, "approval_id").await?;
        let (approval, stored, game) =
            approvals::get_for_studio(&state.services, &user.caller.studio_id, approval_id).await?;
        user.require(R::ROLE)?;
        Ok(Self {
            user,
            approval,
            stored,
            game,
            role: PhantomData,
        })
    }
}

/// A signed-in member with at least role `R`, on a page of no game.
pub struct Member<R> {
    /// Who is asking.
    pub user: SignedIn,
    role: PhantomData<R>,
}

impl<R: MinRole> FromRequestParts<AppState> for Member<R> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let user = SignedIn::from_request_parts(parts, state).await?;
        user.require(R::ROLE)?;
        Ok(Self {
            user,
            role: PhantomData,
        })
    }
}

/// The id `name` of the page's path; a malformed id names nothing, so it is the 404 page, as
/// the path extractor of [`extract`](super::extract) answers it.
async fn path_id(parts: &mut Parts, state: &AppState, name: &str) -> Result<Uuid, PageError> {
    let absent = || PageError::from(ServiceError::NotFound("resource"));
    let params = RawPathParams::from_request_parts(parts, state)
        .await
        .map_err(|_| absent())?;
    params
        .iter()
        .find(|(found, _)| *found == name)
        .and_then(|(_, value)| value.parse().ok())
        .ok_or_else(absent)
}
