//! Which requests the reserve of connections (`server.reserved_connections`) serves once the
//! general pool (`server.max_connections`) is full: the operators' ones, never the players'.
//!
//! The edge has read a connection's first request head before any router runs
//! ([`super::head`]), so it decides by that head's path: the liveness and readiness probes,
//! `/metrics`, the dashboard and the studio's REST API (`/v1/...` but the SDK's `/v1/sdk/...`).
//! A flood of SDK sockets, the case the reserve is for, can never reach it: the SDK's paths,
//! the WebSocket among them, are outside it. A reserve connection serves this one request and
//! closes, so what it admits cannot stay and fill the reserve in turn.

/// Headers a head may have (hyper's own limit, as in [`super::head`]).
const MAX_HEADERS: usize = 100;

/// Whether the reserve serves the request whose complete head is `head`. A head that does not
/// parse is not served: it would only be refused.
pub(super) fn serves(head: &[u8]) -> bool {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => request.path.is_some_and(operator_path),
        _ => false,
    }
}

/// Whether `target` (a request target as sent, query included) is one of the operators'
/// paths.
fn operator_path(target: &str) -> bool {
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    matches!(path, "/healthz" | "/readyz" | "/metrics" | "/dashboard")
        || path.starts_with("/dashboard/")
        || (path.starts_with("/v1/") && path != "/v1/sdk" && !path.starts_with("/v1/sdk/"))
}

#[cfg(test)]
mod tests {
    use super::serves;

    fn head(target: &str) -> Vec<u8> {
        format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").into_bytes()
    }

    #[test]
    fn the_reserve_serves_probes_the_dashboard_and_the_studio_api_only() {
        for served in [
            "/healthz",
            "/readyz?verbose=1",
            "/metrics",
            "/dashboard",
            "/dashboard/games/x/kill-switch",
            "/v1/games",
            "/v1/games/x/kill-switch",
            "/v1/studio/members",
        ] {
            assert!(serves(&head(served)), "{served}");
        }
        for refused in [
            "/v1/sdk/ws",
            "/v1/sdk/offers",
            "/v1/sdk",
            "/",
            "/healthz/x",
            "/dashboardx",
            "//v1/games",
        ] {
            assert!(!serves(&head(refused)), "{refused}");
        }
        // Incomplete or malformed heads.
        assert!(!serves(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"));
        assert!(!serves(b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n"));
        assert!(!serves(&[0x16, 0x03, 0x01, 0x00, 0xa5]));
    }
}
