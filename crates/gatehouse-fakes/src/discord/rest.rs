//! REST routes under `/api/v10`: each records the call, checks auth, applies faults, then
//! runs one state operation.

use std::sync::Arc;

use axum::body::to_bytes;
use axum::extract::{Path, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::interactions::WebhookOp;
use super::messages::bot_user;
use super::reply::{DcError, Reply, snowflake};
use super::{APP_ID, DcState, Discord};
use crate::answer::CallSlot;
use crate::body::{self, BodyError};
use crate::faults::Before;

/// Largest body the fake reads (Discord's own limit is 25 MiB for uploads).
const MAX_BODY: usize = 8 * 1024 * 1024;

/// Whether a route needs `Authorization: Bot …` (interaction webhooks do not).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Auth {
    Bot,
    Token,
}

async fn handle(
    discord: &Discord,
    method: &'static str,
    auth: Auth,
    request: Request,
    op: impl FnOnce(&mut DcState, &Value) -> Result<Reply, DcError>,
) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let slot = parts
        .extensions
        .get::<CallSlot>()
        .cloned()
        .unwrap_or_default();
    let chat = channel_of(&path);
    let body = match to_bytes(body, MAX_BODY).await {
        Ok(bytes) => body::parse(&parts.headers, parts.uri.query(), &bytes),
        Err(error) => Err(BodyError::BadForm(error.to_string())),
    };
    let body = match body.map(merge_payload_json) {
        Ok(body) => body,
        Err(_) => {
            slot.record(&discord.calls, method, path, chat, Value::Null);
            return DcError::bad(50109, "The request body contains invalid JSON.").into_response();
        }
    };
    slot.record(&discord.calls, method, path, chat.clone(), body.clone());
    let authorized = parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.strip_prefix("Bot ").is_some_and(|t| !t.trim().is_empty()));
    if auth == Auth::Bot && !authorized {
        return DcError::unauthorized().into_response();
    }
    match discord.faults.before(method, chat.as_deref(), &slot).await {
        Before::Serve => {}
        Before::Fail(fail) => return DcError::from_fault(fail, method).into_response(),
        Before::Unsent => return DcError::not_found().into_response(),
    }
    let mut state = discord.lock();
    match op(&mut state, &body) {
        Ok(reply) => reply.into_response(),
        Err(error) => error.into_response(),
    }
}

/// The channel a `/channels/{channel}/…` route addresses (paths as seen under `/api/v10`).
fn channel_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/channels/")?;
    let channel = rest.split('/').next().filter(|c| !c.is_empty())?;
    Some(channel.to_owned())
}

/// Multipart requests carry the JSON in a `payload_json` part.
fn merge_payload_json(mut body: Value) -> Value {
    let payload = body
        .get("payload_json")
        .and_then(Value::as_str)
        .map(serde_json::from_str::<Value>);
    if let (Some(Ok(Value::Object(payload))), Some(fields)) = (payload, body.as_object_mut()) {
        fields.remove("payload_json");
        fields.extend(payload);
    }
    body
}

fn application(app: &str) -> Result<(), DcError> {
    if app == APP_ID.to_string() {
        Ok(())
    } else {
        Err(DcError::unknown(10002, "Application"))
    }
}

type Shared = State<Arc<Discord>>;

/// `GET /gateway`.
pub(super) async fn get_gateway(State(d): Shared, request: Request) -> Response {
    let url = d.gateway_url.clone();
    handle(&d, "getGateway", Auth::Token, request, |_, _| {
        Ok(Reply::Json(json!({"url": url})))
    })
    .await
}

/// `GET /gateway/bot`.
pub(super) async fn get_gateway_bot(State(d): Shared, request: Request) -> Response {
    let url = d.gateway_url.clone();
    handle(&d, "getGatewayBot", Auth::Bot, request, |_, _| {
        Ok(Reply::Json(
            json!({"url": url, "shards": 1, "session_start_limit":
            {"total": 1000, "remaining": 999, "reset_after": 14_400_000, "max_concurrency": 1}}),
        ))
    })
    .await
}

/// `GET /users/@me`.
pub(super) async fn get_current_user(State(d): Shared, request: Request) -> Response {
    handle(&d, "getCurrentUser", Auth::Bot, request, |_, _| {
        Ok(Reply::Json(bot_user()))
    })
    .await
}

/// `GET /oauth2/applications/@me`.
pub(super) async fn get_current_application(State(d): Shared, request: Request) -> Response {
    handle(&d, "getCurrentApplication", Auth::Bot, request, |_, _| {
        Ok(Reply::Json(json!({"id": APP_ID.to_string(), "name": "Gatehouse Fake", "icon": null,
            "description": "", "bot_public": false, "bot_require_code_grant": false,
            "verify_key": "0000", "flags": 0, "team": null, "owner": bot_user(), "bot": bot_user()})))
    })
    .await
}

/// `POST /users/@me/channels`.
pub(super) async fn create_dm(State(d): Shared, request: Request) -> Response {
    handle(&d, "createDm", Auth::Bot, request, |s, body| {
        let recipient = body
            .get("recipient_id")
            .and_then(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .or_else(|| v.as_u64().map(|n| n.to_string()))
            })
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| {
                DcError::invalid_form(
                    &["recipient_id".into()],
                    "BASE_TYPE_REQUIRED",
                    "This field is required",
                )
            })?;
        Ok(Reply::Json(s.channels.open_dm(&mut s.ids, recipient)))
    })
    .await
}

/// `POST /channels/{channel}/messages`.
pub(super) async fn create_message(
    State(d): Shared,
    Path(channel): Path<String>,
    request: Request,
) -> Response {
    handle(&d, "createMessage", Auth::Bot, request, |s, body| {
        let channel = snowflake(&channel, 10003, "Channel")?;
        s.channels
            .create(&mut s.ids, channel, body, None)
            .map(Reply::Json)
    })
    .await
}

/// `GET /channels/{channel}/messages/{message}`.
pub(super) async fn get_message(
    State(d): Shared,
    Path((channel, message)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(&d, "getMessage", Auth::Bot, request, |s, _| {
        let (channel, message) = (
            snowflake(&channel, 10003, "Channel")?,
            snowflake(&message, 10008, "Message")?,
        );
        s.channels
            .get(channel, message)
            .cloned()
            .map(Reply::Json)
            .ok_or_else(|| DcError::unknown(10008, "Message"))
    })
    .await
}

/// `GET /channels/{channel}`: what kind of channel it is (a thread names its parent).
pub(super) async fn get_channel(
    State(d): Shared,
    Path(channel): Path<String>,
    request: Request,
) -> Response {
    handle(&d, "getChannel", Auth::Bot, request, |s, _| {
        let channel = snowflake(&channel, 10003, "Channel")?;
        Ok(Reply::Json(s.channels.channel_json(channel)))
    })
    .await
}

/// `PATCH /channels/{channel}/messages/{message}`.
pub(super) async fn edit_message(
    State(d): Shared,
    Path((channel, message)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(&d, "editMessage", Auth::Bot, request, |s, body| {
        let (channel, message) = (
            snowflake(&channel, 10003, "Channel")?,
            snowflake(&message, 10008, "Message")?,
        );
        s.channels.edit(channel, message, body).map(Reply::Json)
    })
    .await
}

/// `DELETE /channels/{channel}/messages/{message}`.
pub(super) async fn delete_message(
    State(d): Shared,
    Path((channel, message)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(&d, "deleteMessage", Auth::Bot, request, |s, _| {
        let (channel, message) = (
            snowflake(&channel, 10003, "Channel")?,
            snowflake(&message, 10008, "Message")?,
        );
        s.channels
            .delete(channel, message)
            .map(|()| Reply::NoContent)
    })
    .await
}

/// `POST /interactions/{id}/{token}/callback`.
pub(super) async fn interaction_callback(
    State(d): Shared,
    Path((id, token)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(
        &d,
        "createInteractionResponse",
        Auth::Token,
        request,
        |s, body| s.respond(&id, &token, body),
    )
    .await
}

/// `POST /webhooks/{app}/{token}`.
pub(super) async fn execute_webhook(
    State(d): Shared,
    Path((app, token)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(&d, "executeWebhook", Auth::Token, request, |s, body| {
        s.follow_up(&app, &token, body)
    })
    .await
}

/// `GET /webhooks/{app}/{token}/messages/{message}`.
pub(super) async fn get_webhook_message(
    State(d): Shared,
    Path((app, token, message)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    handle(&d, "getWebhookMessage", Auth::Token, request, |s, _| {
        s.webhook_message(&app, &token, &message, WebhookOp::Get)
    })
    .await
}

/// `PATCH /webhooks/{app}/{token}/messages/{message}`.
pub(super) async fn edit_webhook_message(
    State(d): Shared,
    Path((app, token, message)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    handle(&d, "editWebhookMessage", Auth::Token, request, |s, body| {
        s.webhook_message(&app, &token, &message, WebhookOp::Edit(body))
    })
    .await
}

/// `DELETE /webhooks/{app}/{token}/messages/{message}`.
pub(super) async fn delete_webhook_message(
    State(d): Shared,
    Path((app, token, message)): Path<(String, String, String)>,
    request: Request,
) -> Response {
    handle(&d, "deleteWebhookMessage", Auth::Token, request, |s, _| {
        s.webhook_message(&app, &token, &message, WebhookOp::Delete)
    })
    .await
}

fn guild(text: &str) -> Result<u64, DcError> {
    snowflake(text, 10004, "Guild")
}

/// `GET /applications/{app}/guilds/{guild}/commands`.
pub(super) async fn get_guild_commands(
    State(d): Shared,
    Path((app, g)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(&d, "getGuildCommands", Auth::Bot, request, |s, _| {
        application(&app)?;
        Ok(Reply::Json(s.commands.list(Some(guild(&g)?))))
    })
    .await
}

/// `PUT /applications/{app}/guilds/{guild}/commands`.
pub(super) async fn overwrite_guild_commands(
    State(d): Shared,
    Path((app, g)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(
        &d,
        "bulkOverwriteGuildCommands",
        Auth::Bot,
        request,
        |s, body| {
            application(&app)?;
            s.commands
                .overwrite(&mut s.ids, Some(guild(&g)?), body)
                .map(Reply::Json)
        },
    )
    .await
}

/// `POST /applications/{app}/guilds/{guild}/commands`.
pub(super) async fn create_guild_command(
    State(d): Shared,
    Path((app, g)): Path<(String, String)>,
    request: Request,
) -> Response {
    handle(&d, "createGuildCommand", Auth::Bot, request, |s, body| {
        application(&app)?;
        s.commands
            .create(&mut s.ids, Some(guild(&g)?), body)
            .map(Reply::Json)
    })
    .await
}

/// `GET /applications/{app}/commands`.
pub(super) async fn get_global_commands(
    State(d): Shared,
    Path(app): Path<String>,
    request: Request,
) -> Response {
    handle(&d, "getGlobalCommands", Auth::Bot, request, |s, _| {
        application(&app)?;
        Ok(Reply::Json(s.commands.list(None)))
    })
    .await
}

/// `PUT /applications/{app}/commands`.
pub(super) async fn overwrite_global_commands(
    State(d): Shared,
    Path(app): Path<String>,
    request: Request,
) -> Response {
    handle(
        &d,
        "bulkOverwriteGlobalCommands",
        Auth::Bot,
        request,
        |s, body| {
            application(&app)?;
            s.commands
                .overwrite(&mut s.ids, None, body)
                .map(Reply::Json)
        },
    )
    .await
}

/// `POST /applications/{app}/commands`.
pub(super) async fn create_global_command(
    State(d): Shared,
    Path(app): Path<String>,
    request: Request,
) -> Response {
    handle(&d, "createGlobalCommand", Auth::Bot, request, |s, body| {
        application(&app)?;
        s.commands.create(&mut s.ids, None, body).map(Reply::Json)
    })
    .await
}

/// Any other `/api/v10` route: recorded, then 404 so a wrong client call shows.
pub(super) async fn unknown_route(State(d): Shared, slot: CallSlot, request: Request) -> Response {
    let method = format!("{} {}", request.method(), request.uri().path());
    let path = request.uri().path();
    slot.record(&d.calls, method, path, channel_of(path), Value::Null);
    DcError::not_found().into_response()
}
