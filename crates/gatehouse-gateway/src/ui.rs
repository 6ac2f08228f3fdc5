//! The Control UI's static assets, embedded so users need no separate build or files.
//!
//! Responses carry a strict Content-Security-Policy (scripts only from this origin, no inline
//! code) and forbid framing, because the page holds an admin token in session storage.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("../ui/index.html");
/// The script is several files (one job each) joined into one strict-mode function scope, so
/// the page needs no module loader, no build step and no route per file.
const APP_JS: &str = concat!(
    "(() => {\n\"use strict\";\n",
    include_str!("../ui/js/dom.js"),
    include_str!("../ui/js/wire.js"),
    include_str!("../ui/js/connection.js"),
    include_str!("../ui/js/approvals.js"),
    include_str!("../ui/js/allowlists.js"),
    include_str!("../ui/js/grants.js"),
    include_str!("../ui/js/check.js"),
    include_str!("../ui/js/chat.js"),
    include_str!("../ui/js/main.js"),
    "})();\n",
);
const APP_CSS: &str = include_str!("../ui/app.css");

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
                   img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub(crate) async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

pub(crate) async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", APP_JS)
}

pub(crate) async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
