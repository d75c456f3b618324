//! The HTML document of every dashboard page: its head (the title, the stylesheet and the
//! script compiled into the binary) and, for the pages outside a session (the sign-in form,
//! the error pages), the bare document around a body. The signed-in frame of
//! [`layout`](super::layout) is built on the same head.

use axum::response::Html;
use maud::{DOCTYPE, Markup, html};

/// The head of every page: its title, the stylesheet and the script.
pub fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · Offer engine" }
            link rel="stylesheet" href="/dashboard/assets/app.css";
            script src="/dashboard/assets/app.js" defer {}
        }
    }
}

/// A page outside the signed-in frame (sign-in, errors).
pub fn bare(title: &str, body: Markup) -> Html<String> {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (head(title))
                body { main { (body) } }
            }
        }
        .into_string(),
    )
}
