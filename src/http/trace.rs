//! The span of each request, which the edge opens (`super::edge`): the method, the URI and
//! the version, except that the value of every `token` query parameter is replaced by
//! `redacted`. The Google Play notification URL carries its game's secret in
//! `?token=`, and a trace must never write a secret to the logs.

use axum::http::{Request, Uri};
use tracing::Span;

/// The span of one request, at debug level: a node logging at info level pays nothing for it.
pub fn request_span<B>(req: &Request<B>) -> Span {
    tracing::debug_span!(
        "request",
        method = %req.method(),
        uri = %redacted(req.uri()),
        version = ?req.version(),
    )
}

/// `uri` with the value of each `token` query parameter replaced by `redacted`.
pub fn redacted(uri: &Uri) -> String {
    let Some(query) = uri.query() else {
        return uri.to_string();
    };
    if !query.split('&').any(|pair| pair.starts_with("token=")) {
        return uri.to_string();
    }
    let query: Vec<&str> = query
        .split('&')
        .map(|pair| {
            if pair.starts_with("token=") {
                "token=redacted"
            } else {
                pair
            }
        })
        .collect();
    format!("{}?{}", uri.path(), query.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_values_never_reach_the_trace() {
        let uri: Uri = "/v1/stores/google-play/notifications/g?a=1&token=s3cret&b=2"
            .parse()
            .expect("a uri");
        assert_eq!(
            redacted(&uri),
            "/v1/stores/google-play/notifications/g?a=1&token=redacted&b=2"
        );
        let plain: Uri = "/v1/games?limit=5&mytoken=x".parse().expect("a uri");
        assert_eq!(redacted(&plain), "/v1/games?limit=5&mytoken=x");
    }
}
