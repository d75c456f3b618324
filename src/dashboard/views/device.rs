//! The device sign-in page: the box for the user code the authoring tool shows and the game
//! to approve it for (developer), with the outcome of the last decision.

use maud::{Markup, html};
use offer_domain::game::Game;

use crate::auth::Role;
use crate::dashboard::layout::csrf;
use crate::dashboard::session::SignedIn;

/// The page with `code` in its box, the studio's games in `list` and the `outcome` of the
/// last decision (whether it went through, and its message).
pub fn page(
    user: &SignedIn,
    list: &[Game],
    code: &str,
    outcome: Option<&(bool, String)>,
) -> Markup {
    html! {
        h1 { "Device sign-in" }
        p.muted { "The authoring tool shows a code like ABCD-EFGH. Type it here to give the tool an authoring key for one game, or deny it." }
        @if let Some((ok, message)) = outcome {
            @if *ok { p.notice role="status" #device-outcome { (message) } }
            @else { p.error role="alert" #device-outcome { (message) } }
        }
        @if user.can(Role::Developer) {
            form.card method="post" action="/dashboard/device" {
                (csrf(user))
                label for="user_code" { "User code" }
                input #user_code type="text" name="user_code" required autocomplete="off" value=(code);
                label for="game_id" { "Game" }
                select #game_id name="game_id" {
                    @for g in list { option value=(g.game_id) { (g.name) } }
                }
                button type="submit" name="decision" value="approve" { "Approve" }
                " "
                button.danger type="submit" name="decision" value="deny" { "Deny" }
            }
        } @else {
            p { "Approving a device sign-in needs the developer role." }
        }
    }
}
