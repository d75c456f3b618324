//! Studio members through the REST API: an admin adds and lists them, a taken email is a
//! conflict, a non-admin is refused, and revoking a member's sessions signs every browser of
//! the member out at once.

use reqwest::StatusCode;
use reqwest::header::LOCATION;
use serde_json::json;

use super::browser::add_member;
use super::helpers::{Role, spawn_app};
use super::web::{get_page, sign_in};

#[tokio::test]
async fn an_admin_adds_lists_and_signs_members_out() {
    let app = spawn_app().await;
    add_member(&app, "Dev@Studio-A.test", "developer").await;
    // The same email in any case, in any studio, is taken.
    app.post(
        "/v1/studio/members",
        json!({"email": "dev@studio-a.test", "password": "another password", "role": "viewer"}),
    )
    .token(&app.token("studio-b", Role::Admin))
    .expect_error(StatusCode::CONFLICT, "conflict")
    .await;
    app.post(
        "/v1/studio/members",
        json!({"email": "x@studio-a.test", "password": "short", "role": "viewer"}),
    )
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
    app.post(
        "/v1/studio/members",
        json!({"email": "y@studio-a.test", "password": "long enough password", "role": "viewer"}),
    )
    .token(&app.token("studio-a", Role::Developer))
    .expect_error(StatusCode::FORBIDDEN, "forbidden")
    .await;
    let listed = app.get_json("/v1/studio/members").await;
    let members = listed["members"].as_array().expect("members");
    assert_eq!(members.len(), 1);
    assert_eq!(members[0]["email"], "dev@studio-a.test");
    assert_eq!(members[0]["role"], "developer");
    assert!(members[0].get("password_hash").is_none());
    // Another studio sees none of them.
    let theirs = app
        .get("/v1/studio/members")
        .token(&app.token("studio-b", Role::Admin))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(theirs["members"].as_array().expect("members").len(), 0);

    let one = sign_in(&app, "dev@studio-a.test").await;
    let two = sign_in(&app, "dev@studio-a.test").await;
    let member_id = members[0]["member_id"].as_str().expect("id");
    app.delete(format!("/v1/studio/members/{member_id}/sessions"))
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    assert_eq!(
        get_page(&app, "/dashboard/games", &one.cookie)
            .await
            .status(),
        StatusCode::OK
    );
    app.delete(format!("/v1/studio/members/{member_id}/sessions"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    for s in [one, two] {
        let page = get_page(&app, "/dashboard/games", &s.cookie).await;
        assert_eq!(page.status(), StatusCode::SEE_OTHER);
        assert_eq!(page.headers()[LOCATION], "/dashboard/sign-in");
    }
    // A new sign-in works again.
    let three = sign_in(&app, "dev@studio-a.test").await;
    assert_eq!(
        get_page(&app, "/dashboard/games", &three.cookie)
            .await
            .status(),
        StatusCode::OK
    );
}
