//! What a browser does not show, checked over plain HTTP: the cookie's flags, the security
//! headers, the CSRF check, the server's refusal of a viewer's writes, another studio's game,
//! the sign-in rate limit, signing out.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_SECURITY_POLICY, LOCATION, RETRY_AFTER};
use serde_json::json;

use super::browser::add_member;
use super::fixtures::item;
use super::helpers::{Role, default_backend, spawn_app, spawn_tuned};
use super::web::{
    get_page, post_form, post_sign_in, post_sign_in_from, set_cookie, sign_in, sign_in_form,
};

#[tokio::test]
async fn the_session_cookie_is_http_only_strict_and_secure_when_configured() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let answer = post_sign_in(&app, "ADA@studio-a.test", super::browser::PASSWORD).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert_eq!(answer.headers()[LOCATION], "/dashboard/games");
    let cookie = set_cookie(&answer);
    assert!(cookie.starts_with("offer_session="), "{cookie}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(flag), "{flag} in {cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "not over plain http by default: {cookie}"
    );

    let https = spawn_tuned(default_backend(), |s| s.dashboard.secure_cookie = true).await;
    add_member(&https, "ada@studio-a.test", "admin").await;
    let answer = post_sign_in(&https, "ada@studio-a.test", super::browser::PASSWORD).await;
    assert!(set_cookie(&answer).contains("; Secure"));
}

#[tokio::test]
async fn every_page_carries_the_content_security_policy_and_a_wrong_password_is_refused() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let form = reqwest::get(format!("http://{}/dashboard/sign-in", app.addr))
        .await
        .expect("get");
    assert_eq!(form.status(), StatusCode::OK);
    let csp = form.headers()[CONTENT_SECURITY_POLICY]
        .to_str()
        .expect("ascii");
    assert_eq!(
        csp,
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'"
    );
    assert_eq!(form.headers()["x-content-type-options"], "nosniff");
    assert_eq!(form.headers()["referrer-policy"], "same-origin");
    let session = sign_in(&app, "ada@studio-a.test").await;
    let page = get_page(&app, "/dashboard/games", &session.cookie).await;
    assert!(page.headers().contains_key(CONTENT_SECURITY_POLICY));
    let wrong = post_sign_in(&app, "ada@studio-a.test", "not the password").await;
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(!wrong.headers().contains_key("set-cookie"));
    // Without a session a page sends the browser to the sign-in form.
    let anon = super::web::client()
        .get(format!("http://{}/dashboard/games", app.addr))
        .send()
        .await
        .expect("get");
    assert_eq!(anon.status(), StatusCode::SEE_OTHER);
    assert_eq!(anon.headers()[LOCATION], "/dashboard/sign-in");
}

#[tokio::test]
async fn a_write_without_the_sessions_csrf_token_is_refused_and_changes_nothing() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let game = app.create_game().await;
    let s = sign_in(&app, "ada@studio-a.test").await;
    let path = format!("/dashboard/games/{game}/mode");
    for fields in [
        vec![("mode", "assisted")],
        vec![("mode", "assisted"), ("csrf", "0000")],
    ] {
        let answer = post_form(&app, &path, Some(&s.cookie), &fields).await;
        assert_eq!(answer.status(), StatusCode::FORBIDDEN);
        assert_eq!(
            app.get_json(format!("/v1/games/{game}")).await["mode"],
            "shadow"
        );
    }
    let answer = post_form(
        &app,
        &path,
        Some(&s.cookie),
        &[("csrf", &s.csrf), ("mode", "assisted")],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        app.get_json(format!("/v1/games/{game}")).await["mode"],
        "assisted"
    );
}

#[tokio::test]
async fn a_bundle_form_without_the_csrf_token_or_from_a_viewer_is_refused() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let game = app.create_game().await;
    app.bulk(&game, json!([item("sword", "equipment", 4.99)]))
        .expect(StatusCode::OK)
        .await;
    let d = sign_in(&app, "dev@studio-a.test").await;
    let v = sign_in(&app, "vic@studio-a.test").await;
    let path = format!("/dashboard/games/{game}/offers/bundles");
    let bundle = [
        ("name", "Deal"),
        ("item_ids", "sword"),
        ("price_usd", "2.99"),
    ];
    let answer = post_form(&app, &path, Some(&d.cookie), &bundle).await;
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "without the token");
    let mut fields = bundle.to_vec();
    fields.push(("csrf", &v.csrf));
    let answer = post_form(&app, &path, Some(&v.cookie), &fields).await;
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "a viewer");
    let experiments = format!("/dashboard/games/{game}/offers/experiments");
    let answer = post_form(
        &app,
        &experiments,
        Some(&v.cookie),
        &[("variants", "a 1"), ("csrf", &v.csrf)],
    )
    .await;
    assert_eq!(
        answer.status(),
        StatusCode::FORBIDDEN,
        "a viewer's experiment"
    );
    let listed = app
        .get_json(format!("/v1/games/{game}/offer-bundles"))
        .await;
    assert_eq!(listed["bundles"], json!([]));
    let listed = app.get_json(format!("/v1/games/{game}/experiments")).await;
    assert_eq!(listed["experiments"], json!([]));
    // With the token, the developer's bundle is stored.
    let mut fields = bundle.to_vec();
    fields.push(("csrf", &d.csrf));
    let answer = post_form(&app, &path, Some(&d.cookie), &fields).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let listed = app
        .get_json(format!("/v1/games/{game}/offer-bundles"))
        .await;
    assert_eq!(listed["bundles"][0]["name"], "Deal");
}

#[tokio::test]
async fn the_server_refuses_a_viewers_writes_and_another_studios_game_is_a_404() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let game = app.create_game().await;
    let v = sign_in(&app, "vic@studio-a.test").await;
    for (path, fields) in [
        (
            format!("/dashboard/games/{game}/mode"),
            vec![("mode", "assisted")],
        ),
        (
            format!("/dashboard/games/{game}/kill-switch"),
            vec![("level", "3"), ("confirmed", "yes")],
        ),
        (
            format!("/dashboard/games/{game}/keys/sdk"),
            vec![("environment", "production")],
        ),
        (
            "/dashboard/games".to_owned(),
            vec![("name", "Mine"), ("genre", "rpg")],
        ),
    ] {
        let mut fields = fields;
        fields.push(("csrf", &v.csrf));
        let answer = post_form(&app, &path, Some(&v.cookie), &fields).await;
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{path}");
    }
    assert_eq!(
        app.get_json(format!("/v1/games/{game}")).await["mode"],
        "shadow"
    );
    assert_eq!(
        app.get_json(format!("/v1/games/{game}/kill-switch")).await["level"],
        0
    );
    let listed = app.get_json(format!("/v1/games/{game}/keys")).await;
    assert_eq!(listed["keys"].as_array().expect("keys").len(), 0);
    // A viewer may read.
    assert_eq!(
        get_page(&app, &format!("/dashboard/games/{game}"), &v.cookie)
            .await
            .status(),
        StatusCode::OK
    );
    // Another studio's game reads as absent, for a page and a write alike.
    let theirs = app
        .post("/v1/games", json!({"name": "Theirs", "genre": "rpg"}))
        .token(&app.token("studio-b", Role::Admin))
        .expect(StatusCode::CREATED)
        .await["game_id"]
        .as_str()
        .expect("id")
        .to_owned();
    add_member(&app, "ada@studio-a.test", "admin").await;
    let a = sign_in(&app, "ada@studio-a.test").await;
    assert_eq!(
        get_page(&app, &format!("/dashboard/games/{theirs}"), &a.cookie)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    // A malformed id and an unknown page are the 404 page too, not a JSON error.
    for path in ["/dashboard/games/not-a-game", "/dashboard/no-such-page"] {
        let page = get_page(&app, path, &a.cookie).await;
        assert_eq!(page.status(), StatusCode::NOT_FOUND, "{path}");
        let kind = page.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .to_owned();
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        assert!(page.headers().contains_key(CONTENT_SECURITY_POLICY));
    }
    let answer = post_form(
        &app,
        &format!("/dashboard/games/{theirs}/mode"),
        Some(&a.cookie),
        &[("csrf", &a.csrf), ("mode", "assisted")],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_sign_in_without_the_forms_own_token_is_refused_before_any_password_is_checked() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let form = super::web::client()
        .get(format!("http://{}/dashboard/sign-in", app.addr))
        .send()
        .await
        .expect("get");
    let flags = set_cookie(&form);
    assert!(flags.starts_with("offer_sign_in="), "{flags}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/dashboard/sign-in"] {
        assert!(flags.contains(flag), "{flag} in {flags}");
    }
    let (cookie, token) = sign_in_form(&app).await;
    let (_, other_form_token) = sign_in_form(&app).await;
    let made_up = "b".repeat(64);
    let made_up_cookie = format!("offer_sign_in={made_up}");
    // The real token with its expiry moved a year on: the signature no longer matches.
    let (expiry, rest) = token.split_once('.').expect("expiry.nonce.mac");
    let later: i64 = expiry.parse::<i64>().expect("expiry") + 365 * 86_400;
    let stretched = format!("{later}.{rest}");
    let stretched_cookie = format!("offer_sign_in={stretched}");
    let right = [
        ("email", "ada@studio-a.test"),
        ("password", super::browser::PASSWORD),
    ];
    for (cookie, token, case) in [
        (None, Some(token.as_str()), "no cookie"),
        (Some(cookie.as_str()), None, "no field"),
        (
            Some(cookie.as_str()),
            Some(other_form_token.as_str()),
            "another form's token",
        ),
        // Any value equal in cookie and field is not enough: the server signs its tokens.
        (
            Some(made_up_cookie.as_str()),
            Some(made_up.as_str()),
            "a made-up token",
        ),
        (
            Some(stretched_cookie.as_str()),
            Some(stretched.as_str()),
            "a token with a later expiry",
        ),
    ] {
        let mut fields = right.to_vec();
        if let Some(token) = token {
            fields.push(("csrf", token));
        }
        let refused = post_form(&app, "/dashboard/sign-in", cookie, &fields).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{case}");
        assert!(
            !refused
                .headers()
                .get_all("set-cookie")
                .iter()
                .any(|v| v.as_bytes().starts_with(b"offer_session=")),
            "{case}: no session"
        );
        let page = refused.text().await.expect("page");
        assert!(
            page.contains("This sign-in form was not one this site just gave you"),
            "{case}: {page}"
        );
    }
    // The form's own cookie and token together open the session.
    let mut fields = right.to_vec();
    fields.push(("csrf", &token));
    let answer = post_form(&app, "/dashboard/sign-in", Some(&cookie), &fields).await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(set_cookie(&answer).starts_with("offer_session="));
}

#[tokio::test]
async fn sign_in_attempts_past_the_limit_are_refused_with_retry_after() {
    let app = spawn_tuned(default_backend(), |s| {
        s.dashboard.sign_ins_per_ip_and_email_per_minute = std::num::NonZeroU32::new(3).expect("3");
    })
    .await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    for _ in 0..3 {
        let wrong = post_sign_in(&app, "ada@studio-a.test", "guess guess guess").await;
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }
    // Past the limit even the right password is refused from that address: guessing gains
    // nothing.
    let limited = post_sign_in(&app, "Ada@studio-a.test", super::browser::PASSWORD).await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(limited.headers().contains_key(RETRY_AFTER));
    assert!(!limited.headers().contains_key("set-cookie"));
    // The owner, from another address, still signs in: one address's guesses lock no one out.
    let owner = post_sign_in_from(
        &app,
        [127, 0, 0, 2].into(),
        "ada@studio-a.test",
        super::browser::PASSWORD,
    )
    .await;
    assert_eq!(owner.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn guesses_spread_over_addresses_meet_the_emails_own_slower_limit() {
    let app = spawn_tuned(default_backend(), |s| {
        s.dashboard.sign_ins_per_ip_and_email_per_minute = std::num::NonZeroU32::new(2).expect("2");
        s.dashboard.sign_ins_per_email_per_hour = std::num::NonZeroU32::new(4).expect("4");
    })
    .await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    for from in [[127, 0, 0, 3], [127, 0, 0, 4]] {
        for _ in 0..2 {
            let wrong =
                post_sign_in_from(&app, from.into(), "ada@studio-a.test", "guess guess").await;
            assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
        }
    }
    let limited = post_sign_in_from(
        &app,
        [127, 0, 0, 5].into(),
        "ada@studio-a.test",
        super::browser::PASSWORD,
    )
    .await;
    assert_eq!(limited.status(), StatusCode::TOO_MANY_REQUESTS);
    // Another member's email is not limited by Ada's.
    add_member(&app, "bo@studio-a.test", "admin").await;
    let other = post_sign_in_from(
        &app,
        [127, 0, 0, 5].into(),
        "bo@studio-a.test",
        super::browser::PASSWORD,
    )
    .await;
    assert_eq!(other.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn signing_out_ends_the_session_in_the_store() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let s = sign_in(&app, "ada@studio-a.test").await;
    let out = post_form(
        &app,
        "/dashboard/sign-out",
        Some(&s.cookie),
        &[("csrf", &s.csrf)],
    )
    .await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert!(set_cookie(&out).contains("Max-Age=0"));
    // The old cookie, replayed, no longer opens a page.
    let replay = get_page(&app, "/dashboard/games", &s.cookie).await;
    assert_eq!(replay.status(), StatusCode::SEE_OTHER);
    assert_eq!(replay.headers()[LOCATION], "/dashboard/sign-in");
}
