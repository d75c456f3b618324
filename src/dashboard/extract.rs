//! The REST extractors for path parameters and query strings, refusing as pages: a malformed
//! id names nothing, so it is the 404 page (not the JSON error a REST client reads), and an
//! unreadable query string the 400 page.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::failure::PageError;
use crate::http::extract::{ApiPath, ApiQuery};
use crate::state::AppState;

/// Path parameters of a page.
pub struct PagePath<T>(pub T);

impl<T: DeserializeOwned + Send> FromRequestParts<AppState> for PagePath<T> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let ApiPath(value) = ApiPath::<T>::from_request_parts(parts, state).await?;
        Ok(Self(value))
    }
}

/// The query string of a page.
pub struct PageQuery<T>(pub T);

impl<T: DeserializeOwned> FromRequestParts<AppState> for PageQuery<T> {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        let ApiQuery(value) = ApiQuery::<T>::from_request_parts(parts, state).await?;
        Ok(Self(value))
    }
}
