use std::time::Duration;

use axum::routing::post;
use gatehouse_fakes::FakeHandle;
use serde_json::{Value, json};
use teloxide::ApiError;
use teloxide::RequestError;
use teloxide::prelude::*;
use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, MessageId, ThreadId};
use teloxide::update_listeners::Polling;
use tokio::sync::mpsc;

use crate::support::{control, loopback, wait_for_calls};

const CHAT: i64 = -1_001_234_567_890;
const APPROVER: i64 = 4242;

async fn fake_and_bot() -> (FakeHandle, Bot) {
    let fake = gatehouse_fakes::telegram::spawn(loopback()).await.unwrap();
    let bot = Bot::new("123:TEST-token").set_api_url(fake.base_url.parse().unwrap());
    (fake, bot)
}

fn keyboard(data: &str) -> InlineKeyboardMarkup {
    InlineKeyboardMarkup::new([[
        InlineKeyboardButton::callback("Allow once", data.to_owned()),
        InlineKeyboardButton::callback("Deny", "deny:1"),
    ]])
}

/// Runs teloxide's long-polling dispatcher until `done` receives a value.
async fn dispatch_until<H>(bot: Bot, handler: H, mut done: mpsc::UnboundedReceiver<()>)
where
    H: Into<teloxide::dispatching::UpdateHandler<RequestError>>,
{
    let listener = Polling::builder(bot.clone())
        .timeout(Duration::from_secs(1))
        .build();
    let mut dispatcher = Dispatcher::builder(bot, handler.into()).build();
    let token = dispatcher.shutdown_token();
    let task = tokio::spawn(async move {
        dispatcher
            .dispatch_with_listener(listener, LoggingErrorHandler::new())
            .await;
    });
    tokio::time::timeout(Duration::from_secs(20), done.recv())
        .await
        .unwrap();
    token.shutdown().unwrap().await;
    task.await.unwrap();
}

#[tokio::test]
async fn delivers_button_press_and_accepts_answer_and_edits() {
    let (fake, bot) = fake_and_bot().await;
    let sent = bot
        .send_message(ChatId(CHAT), "Approve `ls`?")
        .message_thread_id(ThreadId(MessageId(7)))
        .reply_markup(keyboard("allow-once:1"))
        .await
        .unwrap();
    assert_eq!(sent.id, MessageId(1));
    assert_eq!(sent.thread_id, Some(ThreadId(MessageId(7))));

    let injected = control(
        &fake,
        "/_fake/inject",
        json!({"callback_query": {
        "from": {"id": APPROVER}, "data": "allow-once:1",
        "message": {"message_id": 1, "chat": {"id": CHAT}}}}),
    )
    .await;
    assert_eq!(injected["delivery"], "getUpdates");

    let (done_tx, done) = mpsc::unbounded_channel();
    let handler = Update::filter_callback_query().endpoint(move |bot: Bot, q: CallbackQuery| {
        let done_tx = done_tx.clone();
        async move {
            assert_eq!(q.from.id, UserId(APPROVER as u64));
            assert_eq!(q.data.as_deref(), Some("allow-once:1"));
            let message = q.regular_message().unwrap();
            // The fake filled in the message it stored, keyboard and topic included.
            assert_eq!(message.thread_id, Some(ThreadId(MessageId(7))));
            bot.answer_callback_query(q.id.clone())
                .text("Allowed")
                .await?;
            let edited = bot
                .edit_message_text(message.chat.id, message.id, "Allowed once by 4242")
                .await?;
            assert!(
                edited.reply_markup().is_none(),
                "an edit without markup drops the keyboard"
            );
            done_tx.send(()).unwrap();
            respond(())
        }
    });
    dispatch_until(bot.clone(), handler, done).await;

    let polls = wait_for_calls(&fake, "getUpdates", 2).await;
    assert_eq!(polls[0].body["allowed_updates"], json!(["callback_query"]));
    let answered = wait_for_calls(&fake, "answerCallbackQuery", 1).await;
    assert_eq!(answered[0].body["callback_query_id"], "cbq-1");
    let sent_body = &wait_for_calls(&fake, "sendMessage", 1).await[0].body;
    assert_eq!(
        sent_body["reply_markup"]["inline_keyboard"][0][0]["callback_data"],
        "allow-once:1"
    );

    // A callback query can be answered once only, as on Telegram.
    let again = bot
        .answer_callback_query(teloxide::types::CallbackQueryId("cbq-1".into()))
        .await
        .unwrap_err();
    assert!(
        matches!(again, RequestError::Api(ApiError::Unknown(ref m)) if m.contains("query is too old"))
    );
    // Editing to the same content is refused like Telegram does.
    let same = bot
        .edit_message_text(ChatId(CHAT), MessageId(1), "Allowed once by 4242")
        .await;
    assert!(matches!(
        same,
        Err(RequestError::Api(ApiError::MessageNotModified))
    ));
}

#[tokio::test]
async fn delivers_injected_text_message_to_long_poll() {
    let (fake, bot) = fake_and_bot().await;
    let (done_tx, done) = mpsc::unbounded_channel();
    let handler = Update::filter_message().endpoint(move |bot: Bot, m: Message| {
        let done_tx = done_tx.clone();
        async move {
            assert_eq!(m.text(), Some("/approve abcd1234 allow-once"));
            bot.send_message(m.chat.id, "ok")
                .reply_parameters(teloxide::types::ReplyParameters::new(m.id))
                .await?;
            done_tx.send(()).unwrap();
            respond(())
        }
    });
    let inject = async {
        // Injected while the poll is already waiting: the long poll answers at once.
        wait_for_calls(&fake, "getUpdates", 1).await;
        control(
            &fake,
            "/_fake/inject",
            json!({"message": {"chat": {"id": APPROVER},
            "text": "/approve abcd1234 allow-once"}}),
        )
        .await
    };
    let ((), injected) = tokio::join!(dispatch_until(bot, handler, done), inject);
    assert_eq!(injected["update_id"], 1);
    let reply = &wait_for_calls(&fake, "sendMessage", 1).await[0];
    assert_eq!(reply.body["reply_parameters"]["message_id"], 1);
}

#[tokio::test]
async fn honours_retry_after_with_a_retried_call() {
    let (fake, bot) = fake_and_bot().await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "sendMessage", "retry_after": 1}),
    )
    .await;
    let error = bot.send_message(ChatId(CHAT), "hi").await.unwrap_err();
    let RequestError::RetryAfter(wait) = error else {
        panic!("expected RetryAfter, got {error:?}")
    };
    assert_eq!(wait.seconds(), 1);
    tokio::time::sleep(wait.duration()).await;
    let sent = bot.send_message(ChatId(CHAT), "hi").await.unwrap();
    assert_eq!(
        sent.id,
        MessageId(1),
        "the rate-limited call created no message"
    );
    let calls = wait_for_calls(&fake, "sendMessage", 2).await;
    assert!(calls[1].at_ms - calls[0].at_ms >= 1000);
}

#[tokio::test]
async fn denies_callback_data_over_64_bytes() {
    let (_fake, bot) = fake_and_bot().await;
    let error = bot
        .send_message(ChatId(CHAT), "Approve?")
        .reply_markup(keyboard(&"x".repeat(65)))
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        RequestError::Api(ApiError::ButtonDataInvalid)
    ));
}

#[tokio::test]
async fn denies_dm_to_user_who_never_started_the_bot() {
    let (fake, bot) = fake_and_bot().await;
    control(&fake, "/_fake/config", json!({"never_started": [APPROVER]})).await;
    let error = bot
        .send_message(ChatId(APPROVER), "Approve?")
        .await
        .unwrap_err();
    let RequestError::Api(ApiError::Unknown(text)) = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        text,
        "Forbidden: bot can't initiate conversation with a user"
    );
    // Once the user writes to the bot, DMs work.
    control(
        &fake,
        "/_fake/inject",
        json!({"message": {"chat": {"id": APPROVER}, "text": "/start"}}),
    )
    .await;
    bot.send_message(ChatId(APPROVER), "Approve?")
        .await
        .unwrap();
}

#[tokio::test]
async fn posts_updates_to_webhook_with_secret_header() {
    let (fake, bot) = fake_and_bot().await;
    let (seen_tx, mut seen) = mpsc::unbounded_channel::<(Option<String>, Value)>();
    let app = axum::Router::new().route(
        "/hook",
        post(
            move |headers: axum::http::HeaderMap, axum::Json(update): axum::Json<Value>| {
                let seen_tx = seen_tx.clone();
                async move {
                    let secret = headers
                        .get("x-telegram-bot-api-secret-token")
                        .map(|v| v.to_str().unwrap().to_owned());
                    seen_tx.send((secret, update)).unwrap();
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let hook = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    bot.set_webhook(hook.parse().unwrap())
        .secret_token("s3cret_T")
        .await
        .unwrap();
    let info = bot.get_webhook_info().await.unwrap();
    assert_eq!(info.url.map(|u| u.to_string()), Some(hook.clone()));

    let injected = control(
        &fake,
        "/_fake/inject",
        json!({"message": {"chat": {"id": APPROVER}, "text": "hi"}}),
    )
    .await;
    assert_eq!(injected["delivery"], "webhook");
    assert_eq!(injected["attempts"][0]["status"], 200);
    let (secret, update) = seen.recv().await.unwrap();
    assert_eq!(secret.as_deref(), Some("s3cret_T"));
    // teloxide reads updates from text; from_value loses the kind.
    let update: Update = serde_json::from_str(&update.to_string()).unwrap();
    assert!(
        matches!(update.kind, teloxide::types::UpdateKind::Message(ref m) if m.text() == Some("hi")),
        "{update:?}"
    );

    // Polling while a webhook is set is Telegram's 409.
    let conflict = bot.get_updates().await.unwrap_err();
    assert!(
        matches!(conflict, RequestError::Api(ApiError::Unknown(ref m)) if m.starts_with("Conflict: can't use getUpdates"))
    );
    assert_eq!(
        bot.get_webhook_info().await.unwrap().pending_update_count,
        0
    );
}

#[tokio::test]
async fn answers_unknown_methods_and_bad_tokens_like_telegram() {
    let (fake, _bot) = fake_and_bot().await;
    let http = reqwest::Client::new();
    let unknown = http
        .post(format!("{}/bot1:x/fooBar", fake.base_url))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
    let bad_token = http
        .post(format!("{}/botX/getMe", fake.base_url))
        .send()
        .await
        .unwrap();
    assert_eq!(bad_token.status(), 401);
    let body: Value = bad_token.json().await.unwrap();
    assert_eq!(
        body,
        json!({"ok": false, "error_code": 401, "description": "Unauthorized"})
    );
    // Method names are case-insensitive; forms are accepted.
    let form = http
        .post(format!("{}/bot1:x/SENDMESSAGE", fake.base_url))
        .form(&[("chat_id", "5"), ("text", "hello")])
        .send()
        .await
        .unwrap();
    let body: Value = form.json().await.unwrap();
    assert_eq!(body["result"]["text"], "hello");
    let logged: Vec<_> = fake.calls().into_iter().map(|c| c.method).collect();
    assert_eq!(logged, ["fooBar", "getMe", "sendMessage"]);
}

#[tokio::test]
async fn ends_an_older_long_poll_when_a_newer_one_starts() {
    let (fake, _bot) = fake_and_bot().await;
    let url = format!("{}/bot1:x/getUpdates", fake.base_url);
    let http = reqwest::Client::new();
    let older = tokio::spawn({
        let (http, url) = (http.clone(), url.clone());
        async move {
            http.post(url)
                .json(&json!({"timeout": 5}))
                .send()
                .await
                .unwrap()
        }
    });
    wait_for_calls(&fake, "getUpdates", 1).await;
    let newer = http
        .post(&url)
        .json(&json!({"timeout": 0}))
        .send()
        .await
        .unwrap();
    assert_eq!(newer.status(), 200);
    let older = older.await.unwrap();
    assert_eq!(older.status(), 409);
    let body: Value = older.json().await.unwrap();
    assert!(
        body["description"]
            .as_str()
            .unwrap()
            .starts_with("Conflict: terminated by other getUpdates")
    );
}

#[tokio::test]
async fn keeps_updates_pending_when_the_webhook_fails() {
    let (fake, bot) = fake_and_bot().await;
    let unused = tokio::net::TcpListener::bind(loopback()).await.unwrap();
    let hook = format!("http://{}/hook", unused.local_addr().unwrap());
    drop(unused);
    bot.set_webhook(hook.parse().unwrap()).await.unwrap();
    let injected = control(
        &fake,
        "/_fake/inject",
        json!({"message": {"chat": {"id": APPROVER}, "text": "hi"}}),
    )
    .await;
    assert!(injected["attempts"][0]["error"].is_string(), "{injected}");
    let info = bot.get_webhook_info().await.unwrap();
    assert_eq!(info.pending_update_count, 1);
    assert!(
        info.last_error_message
            .unwrap()
            .starts_with("Connection failed")
    );
    // Back to polling: the pending update is still there.
    bot.delete_webhook().await.unwrap();
    let updates = bot.get_updates().await.unwrap();
    assert_eq!(updates.len(), 1);
}

#[tokio::test]
async fn shuts_down_promptly_while_a_long_poll_waits() {
    let (fake, _bot) = fake_and_bot().await;
    let url = format!("{}/bot1:x/getUpdates", fake.base_url);
    let poll = tokio::spawn(async move {
        let response = reqwest::Client::new()
            .post(url)
            .json(&json!({"timeout": 50}))
            .send()
            .await
            .unwrap();
        response.json::<Value>().await.unwrap()
    });
    wait_for_calls(&fake, "getUpdates", 1).await;
    tokio::time::timeout(Duration::from_secs(5), fake.shutdown())
        .await
        .unwrap();
    assert_eq!(poll.await.unwrap(), json!({"ok": true, "result": []}));
}

/// Operator walkthrough: an injected press whose `from` had a name but no `is_bot` reached the
/// bot as an update it could not read, and the press vanished. The fake completes every `from`.
#[tokio::test]
async fn completes_a_partial_from_in_injected_updates() {
    let (fake, bot) = fake_and_bot().await;
    control(
        &fake,
        "/_fake/inject",
        json!({"callback_query": {
            "from": {"id": APPROVER, "first_name": "Alice", "username": "alice"},
            "data": "x",
        }}),
    )
    .await;
    let updates = bot.get_updates().await.unwrap();
    let teloxide::types::UpdateKind::CallbackQuery(query) = &updates[0].kind else {
        panic!("not a callback query: {updates:?}");
    };
    assert_eq!(query.from.username.as_deref(), Some("alice"));
    assert!(!query.from.is_bot);
}
