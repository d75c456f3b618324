//! What a page may never reach: the import allow-list, and the APIs that would give a page
//! network access or a way out of the widget sandbox.
//!
//! Imports are an allow-list ([`ALLOWED_IMPORTS`]); everything else is refused, with a
//! specific reason for the usual suspects. APIs are found on the token stream (string
//! interpolations included), so a use is caught wherever it appears, even in code the
//! widget table would refuse for other reasons.

use super::lexer::{Piece, Tok, Token};

/// The only imports a page may have: Flutter's widget libraries and the offer SDK, which
/// provides `OfferData`, `OfferItem`, `OfferButton` and the item-art `Image`.
pub const ALLOWED_IMPORTS: &[&str] = &[
    "package:flutter/material.dart",
    "package:flutter/widgets.dart",
    "package:flutter/painting.dart",
    "package:offer_sdk/offer_sdk.dart",
];

/// Why an import is refused: a specific reason for well-known dangerous libraries, a
/// generic one otherwise; `None` for an allowed import.
pub fn import_refusal(uri: &str) -> Option<String> {
    if ALLOWED_IMPORTS.contains(&uri) {
        return None;
    }
    let reason = match uri {
        "dart:io" => "files, sockets, HTTP and processes",
        "dart:ffi" => "native code",
        "dart:isolate" => "isolates",
        "dart:html" | "package:web/web.dart" => "browser and network APIs",
        "dart:convert" => "decoding data a page never needs: bindings arrive decoded",
        "package:flutter/services.dart" => "platform channels",
        _ if uri.starts_with("package:http/") || uri.starts_with("package:dio/") => "HTTP clients",
        _ if uri.starts_with("package:web_socket_channel/") => "WebSockets",
        _ => "",
    };
    let allowed = ALLOWED_IMPORTS.join("`, `");
    Some(if reason.is_empty() {
        format!("`{uri}` is not an allowed import (allowed: `{allowed}`)")
    } else {
        format!("`{uri}` gives a page {reason}; allowed imports: `{allowed}`")
    })
}

/// The gate a forbidden API belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Danger {
    /// Reaches the network (gate `network_call`).
    Network,
    /// Leaves the widget sandbox: platform channels, isolates, files, processes, native
    /// code (gate `forbidden_api`).
    Sandbox,
}

/// Names that are network access wherever they appear.
const NETWORK: &[&str] = &[
    "HttpClient",
    "HttpRequest",
    "HttpOverrides",
    "Socket",
    "SecureSocket",
    "RawSocket",
    "ServerSocket",
    "RawDatagramSocket",
    "WebSocket",
    "WebSocketChannel",
    "IOWebSocketChannel",
    "HtmlWebSocketChannel",
    "NetworkImage",
    "NetworkAssetBundle",
    "Dio",
    "XMLHttpRequest",
    "EventSource",
    "launchUrl",
    "launch",
];

/// `Receiver.member` pairs that are network access (`*` for any member).
const NETWORK_MEMBERS: &[(&str, &str)] = &[
    ("Image", "network"),
    ("http", "*"),
    ("Uri", "parse"),
    ("Uri", "http"),
    ("Uri", "https"),
    ("Uri", "tryParse"),
];

/// Names that leave the sandbox wherever they appear.
const SANDBOX: &[&str] = &[
    "MethodChannel",
    "OptionalMethodChannel",
    "EventChannel",
    "BasicMessageChannel",
    "SystemChannels",
    "Isolate",
    "ReceivePort",
    "SendPort",
    "Process",
    "File",
    "Directory",
    "Platform",
    "DynamicLibrary",
    "Pointer",
];

/// One forbidden API use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiUse {
    /// What was used, as written (`HttpClient`, `Image.network`).
    pub name: String,
    /// Its gate.
    pub danger: Danger,
    /// 1-based line.
    pub line: u32,
}

/// Every forbidden API use in `tokens`, once per name and line.
pub fn scan(tokens: &[Token]) -> Vec<ApiUse> {
    let mut out = Vec::new();
    scan_into(tokens, &mut out);
    out
}

fn scan_into(tokens: &[Token], out: &mut Vec<ApiUse>) {
    for (i, t) in tokens.iter().enumerate() {
        let name = match &t.tok {
            Tok::Ident(name) => name,
            Tok::Str(pieces) => {
                for piece in pieces {
                    match piece {
                        Piece::Expr(inner) => scan_into(inner, out),
                        Piece::Name(name, line) => {
                            let single = [Token {
                                tok: Tok::Ident(name.clone()),
                                line: *line,
                            }];
                            scan_into(&single, out);
                        }
                        Piece::Text(_) => {}
                    }
                }
                continue;
            }
            _ => continue,
        };
        let member = match (tokens.get(i + 1), tokens.get(i + 2)) {
            (Some(dot), Some(m)) if matches!(dot.tok, Tok::Punct("." | "?.")) => match &m.tok {
                Tok::Ident(m) => Some(m.as_str()),
                _ => None,
            },
            _ => None,
        };
        let hit = if NETWORK.contains(&name.as_str()) {
            Some((name.clone(), Danger::Network))
        } else if SANDBOX.contains(&name.as_str()) {
            Some((name.clone(), Danger::Sandbox))
        } else {
            member.and_then(|m| {
                NETWORK_MEMBERS
                    .iter()
                    .any(|(r, n)| r == name && (*n == "*" || *n == m))
                    .then(|| (format!("{name}.{m}"), Danger::Network))
            })
        };
        if let Some((name, danger)) = hit {
            let api = ApiUse {
                name,
                danger,
                line: t.line,
            };
            if !out.contains(&api) {
                out.push(api);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::lexer::lex;

    fn names(src: &str) -> Vec<(String, Danger, u32)> {
        scan(&lex(src).expect("test input"))
            .into_iter()
            .map(|u| (u.name, u.danger, u.line))
            .collect()
    }

    #[test]
    fn finds_network_and_sandbox_apis_with_lines() {
        assert_eq!(
            names("a\nImage.network('u')\nhttp.get(x) '${HttpClient()}'\nMethodChannel('c')"),
            vec![
                ("Image.network".into(), Danger::Network, 2),
                ("http.get".into(), Danger::Network, 3),
                ("HttpClient".into(), Danger::Network, 3),
                ("MethodChannel".into(), Danger::Sandbox, 4),
            ]
        );
    }

    #[test]
    fn ordinary_names_pass() {
        assert!(names("Image(item: offer.items[0]) Text('http://x') Uri").is_empty());
    }

    #[test]
    fn imports() {
        assert_eq!(import_refusal("package:flutter/material.dart"), None);
        assert!(import_refusal("dart:io").is_some_and(|m| m.contains("sockets")));
        assert!(import_refusal("package:http/http.dart").is_some_and(|m| m.contains("HTTP")));
        assert!(import_refusal("dart:math").is_some());
    }
}
