//! The stylesheet and the script of the dashboard, compiled into the binary: no build step,
//! nothing fetched at run time.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::service::ServiceError;

const CSS: &str = include_str!("assets/app.css");
const JS: &str = include_str!("assets/app.js");

/// `GET /dashboard/assets/{file}`: `app.css` or `app.js`; anything else is a 404.
pub async fn serve(axum::extract::Path(file): axum::extract::Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "app.css" => (CSS, "text/css; charset=utf-8"),
        "app.js" => (JS, "text/javascript; charset=utf-8"),
        _ => return ApiError::Service(ServiceError::NotFound("asset")).into_response(),
    };
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}
