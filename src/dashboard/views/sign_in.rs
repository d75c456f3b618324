//! The sign-in form: email and password, with the form's own CSRF token in a hidden field
//! and why the last attempt failed.

use maud::{Markup, html};

use crate::dashboard::session::CSRF_FIELD;

/// Where the form posts, the only path its token's cookie is sent to.
pub const FORM_PATH: &str = "/dashboard/sign-in";

/// The form carrying `token`, `email` typed in and the `problem` of the last attempt.
pub fn form(token: &str, email: &str, problem: Option<&str>) -> Markup {
    html! {
        h1 { "Sign in" }
        p.muted { "Members of a studio sign in with the email and password an admin gave them." }
        @if let Some(problem) = problem {
            p.error role="alert" id="sign-in-error" { (problem) }
        }
        form.card method="post" action=(FORM_PATH) {
            input type="hidden" name=(CSRF_FIELD) value=(token);
            label for="email" { "Email" }
            input #email type="email" name="email" autocomplete="username" required value=(email);
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="current-password" required;
            button type="submit" { "Sign in" }
        }
    }
}
