//! Faults a delivery layer must survive, each seen through the real client of its platform:
//! rate-limit windows in each platform's shape, 5xx windows, resets, lost answers, stalls,
//! per-chat targeting, recorded answers and Discord's nonce idempotency.

use std::error::Error as _;
use std::time::{Duration, Instant};

use gatehouse_fakes::{FakeHandle, FaultEffect, max_calls_within};
use serde_json::{Value, json};
use serenity::all::{ChannelId, CreateMessage, Nonce};
use slack_morphism::errors::SlackClientError;
use slack_morphism::prelude::*;
use teloxide::RequestError;
use teloxide::prelude::*;

use crate::discord::http_for;
use crate::slack::client_for;
use crate::support::{control, loopback};

async fn telegram() -> (FakeHandle, Bot) {
    let fake = gatehouse_fakes::telegram::spawn(loopback()).await.unwrap();
    let bot = Bot::new("123:TEST-token").set_api_url(fake.base_url.parse().unwrap());
    (fake, bot)
}

async fn arm(fake: &FakeHandle, fault: Value) {
    control(fake, "/_fake/faults", fault).await;
}

/// The `io::ErrorKind` somewhere in an error's source chain, if any.
fn io_kind(error: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut source = Some(error);
    while let Some(error) = source {
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        source = error.source();
    }
    None
}

#[tokio::test]
async fn telegram_rate_limits_one_chat_for_a_window_and_says_how_long_is_left() {
    let (fake, bot) = telegram().await;
    arm(
        &fake,
        json!({"method": "sendMessage", "chat": 42, "for_ms": 1500, "retry_after": "window"}),
    )
    .await;
    for _ in 0..3 {
        let error = bot.send_message(ChatId(42), "card").await.unwrap_err();
        let RequestError::RetryAfter(wait) = error else {
            panic!("not a rate limit: {error:?}");
        };
        assert_eq!(wait.seconds(), 2, "1.5 s left, rounded up as Telegram does");
    }
    // Another chat is not limited.
    bot.send_message(ChatId(7), "card").await.unwrap();
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let sent = bot.send_message(ChatId(42), "card").await.unwrap();
    assert_eq!(sent.id.0, 1, "rate-limited calls created nothing");

    let limited = &fake.calls_in_chat("42")[0];
    assert_eq!(limited.status, Some(429));
    assert_eq!(limited.fault, Some(FaultEffect::Error));
    assert_eq!(limited.answer["error_code"], 429);
    assert_eq!(limited.answer["parameters"]["retry_after"], 2);
    assert_eq!(fake.calls_in_chat("42").len(), 4);
}

#[tokio::test]
async fn telegram_5xx_window_by_time_then_recovery() {
    // reqwest, not teloxide: teloxide sleeps 10 s after every 5xx before it returns.
    let (fake, _bot) = telegram().await;
    let client = reqwest::Client::new();
    let call = |method: &str| {
        client
            .post(format!("{}/bot1:A/{method}", fake.base_url))
            .json(&json!({"chat_id": 42, "text": "card"}))
            .send()
    };
    arm(&fake, json!({"method": "*", "for_ms": 1000, "status": 502})).await;
    for method in ["sendMessage", "getMe", "sendMessage"] {
        let answer = call(method).await.unwrap();
        assert_eq!(answer.status(), 502);
        assert_eq!(
            answer.json::<Value>().await.unwrap(),
            json!({"ok": false, "error_code": 502, "description": "Bad Gateway"})
        );
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(call("sendMessage").await.unwrap().status(), 200);
    let sends = fake.calls_of("sendMessage");
    assert_eq!(
        sends.last().unwrap().sent_message_id().as_deref(),
        Some("1")
    );
}

#[tokio::test]
async fn telegram_lost_answer_leaves_the_message_sent_and_recorded() {
    let (fake, bot) = telegram().await;
    arm(&fake, json!({"method": "sendMessage", "lose_answer": true})).await;
    let error = bot.send_message(ChatId(42), "card").await.unwrap_err();
    assert!(matches!(error, RequestError::Network(_)), "{error:?}");
    // The retry creates a second message: the duplicate a lost answer causes on Telegram.
    let retried = bot.send_message(ChatId(42), "card").await.unwrap();
    assert_eq!(retried.id.0, 2);

    let sends = fake.calls_of("sendMessage");
    assert_eq!(sends[0].fault, Some(FaultEffect::LostAnswer));
    assert_eq!(sends[0].status, Some(200));
    assert_eq!(sends[0].sent_message_id().as_deref(), Some("1"));
    assert_eq!(sends[1].fault, None);
    assert_eq!(sends[1].sent_message_id().as_deref(), Some("2"));
}

#[tokio::test]
async fn telegram_reset_cuts_the_connection_before_anything_happens() {
    let (fake, bot) = telegram().await;
    arm(&fake, json!({"method": "sendMessage", "reset": true})).await;
    let error = bot.send_message(ChatId(42), "card").await.unwrap_err();
    assert!(matches!(error, RequestError::Network(_)), "{error:?}");
    let sent = bot.send_message(ChatId(42), "card").await.unwrap();
    assert_eq!(sent.id.0, 1, "the reset call created nothing");
    let reset = &fake.calls_of("sendMessage")[0];
    assert_eq!(reset.fault, Some(FaultEffect::Reset));
    assert_eq!((reset.status, &reset.answer), (None, &Value::Null));
}

#[tokio::test]
async fn a_reset_is_a_tcp_reset_and_a_lost_answer_a_closed_connection() {
    let (fake, _bot) = telegram().await;
    let client = reqwest::Client::new();
    let url = format!("{}/bot1:A/sendMessage", fake.base_url);
    let send = || {
        client
            .post(&url)
            .json(&json!({"chat_id": 1, "text": "x"}))
            .send()
    };
    arm(&fake, json!({"method": "sendMessage", "reset": true})).await;
    let reset = send().await.unwrap_err();
    assert_eq!(
        io_kind(&reset),
        Some(std::io::ErrorKind::ConnectionReset),
        "{reset:?}"
    );
    arm(&fake, json!({"method": "sendMessage", "lose_answer": true})).await;
    let lost = send().await.unwrap_err();
    assert!(lost.is_request(), "{lost:?}");
    assert!(
        format!("{:?}", lost.source()).contains("IncompleteMessage"),
        "{lost:?}"
    );
    assert_eq!(send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn telegram_stall_holds_the_answer_after_the_message_exists() {
    let (fake, bot) = telegram().await;
    arm(&fake, json!({"method": "sendMessage", "stall_ms": 400})).await;
    let started = Instant::now();
    let sent = bot.send_message(ChatId(42), "card").await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert_eq!(sent.id.0, 1);
    assert_eq!(
        fake.calls_of("sendMessage")[0].fault,
        Some(FaultEffect::Stalled)
    );

    // A stalled answer that outlasts the client's patience is lost, but the message exists.
    arm(
        &fake,
        json!({"method": "sendMessage", "lose_answer": true, "stall_ms": 5000}),
    )
    .await;
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let timed_out = impatient
        .post(format!("{}/bot1:A/sendMessage", fake.base_url))
        .json(&json!({"chat_id": 42, "text": "card"}))
        .send()
        .await
        .unwrap_err();
    assert!(timed_out.is_timeout(), "{timed_out:?}");
    let lost = &fake.calls_of("sendMessage")[1];
    assert_eq!(lost.sent_message_id().as_deref(), Some("2"));
    assert_eq!(lost.fault, Some(FaultEffect::LostAnswer));
}

#[tokio::test]
async fn records_answers_so_a_test_can_measure_rates_and_find_a_card() {
    let (fake, bot) = telegram().await;
    for _ in 0..5 {
        bot.send_message(ChatId(42), "card").await.unwrap();
    }
    bot.send_message(ChatId(7), "other").await.unwrap();
    let in_chat = fake.calls_in_chat("42");
    assert_eq!(max_calls_within(&in_chat, Duration::from_secs(1)), 5);
    assert_eq!(max_calls_within(&fake.calls(), Duration::from_secs(1)), 6);
    assert!(in_chat.iter().all(|c| c.answered_at_ms >= Some(c.at_ms)));

    // The same through the control endpoint, as an operator's dry run reads it with curl.
    let url = format!("{}/_fake/calls?method=sendMessage&chat=7", fake.base_url);
    let calls: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
    assert_eq!(calls.as_array().unwrap().len(), 1);
    assert_eq!(calls[0]["answer"]["result"]["message_id"], 1);
    assert_eq!(calls[0]["answer"]["result"]["text"], "other");
    let url = format!("{}/_fake/calls?since=5", fake.base_url);
    let later: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
    assert_eq!(later[0]["seq"], 6);
}

#[tokio::test]
async fn discord_global_and_route_rate_limits_have_discords_shape() {
    let fake = gatehouse_fakes::discord::spawn(loopback()).await.unwrap();
    let http = http_for(&fake);
    arm(
        &fake,
        json!({"method": "*", "count": 2, "retry_after": 0.25, "scope": "global"}),
    )
    .await;
    let error = ChannelId::new(4000).say(&http, "card").await.unwrap_err();
    let serenity::Error::Http(serenity::http::HttpError::UnsuccessfulRequest(response)) = error
    else {
        panic!("not an HTTP error: {error:?}");
    };
    assert_eq!(response.status_code.as_u16(), 429);
    let raw = reqwest::Client::new()
        .post(format!("{}/api/v10/channels/4000/messages", fake.base_url))
        .header("authorization", "Bot x")
        .json(&json!({"content": "card"}))
        .send()
        .await
        .unwrap();
    assert_eq!(raw.status(), 429);
    assert_eq!(raw.headers()["x-ratelimit-global"], "true");
    assert_eq!(raw.headers()["x-ratelimit-scope"], "global");
    assert_eq!(raw.headers()["retry-after"], "1");
    let body: Value = raw.json().await.unwrap();
    assert_eq!(
        body,
        json!({"message": "You are being rate limited.", "retry_after": 0.25, "global": true})
    );

    // A route limit on one channel leaves the others alone.
    arm(
        &fake,
        json!({"method": "createMessage", "chat": "4000", "for_ms": 5000, "retry_after": 2.5}),
    )
    .await;
    ChannelId::new(4001).say(&http, "card").await.unwrap();
    ChannelId::new(4000).say(&http, "card").await.unwrap_err();
    let limited = fake.calls_in_chat("4000").pop().unwrap();
    assert_eq!(limited.answer["retry_after"], 2.5);
    assert_eq!(limited.answer["global"], false);
}

fn card_with_nonce(nonce: &str, enforce: bool) -> CreateMessage {
    CreateMessage::new()
        .content("Approve `ls`?")
        .nonce(Nonce::String(nonce.into()))
        .enforce_nonce(enforce)
}

#[tokio::test]
async fn discord_enforced_nonce_makes_a_retried_create_after_a_lost_answer_idempotent() {
    let fake = gatehouse_fakes::discord::spawn(loopback()).await.unwrap();
    let http = http_for(&fake);
    let channel = ChannelId::new(4000);
    arm(
        &fake,
        json!({"method": "createMessage", "lose_answer": true}),
    )
    .await;
    let lost = channel
        .send_message(&http, card_with_nonce("appr-1", true))
        .await
        .unwrap_err();
    assert!(
        matches!(
            lost,
            serenity::Error::Http(serenity::http::HttpError::Request(_))
        ),
        "{lost:?}"
    );
    let first_id = fake.calls_of("createMessage")[0].sent_message_id().unwrap();
    let retried = channel
        .send_message(&http, card_with_nonce("appr-1", true))
        .await
        .unwrap();
    assert_eq!(
        retried.id.to_string(),
        first_id,
        "the first message came back"
    );
    assert!(matches!(retried.nonce, Some(Nonce::String(n)) if n == "appr-1"));

    // Without enforce_nonce, the same nonce creates a new message, as on Discord.
    let unenforced = channel
        .send_message(&http, card_with_nonce("appr-1", false))
        .await
        .unwrap();
    assert_ne!(unenforced.id, retried.id);

    // After the (shortened) window the nonce is forgotten.
    control(&fake, "/_fake/config", json!({"nonce_window_ms": 100})).await;
    channel
        .send_message(&http, card_with_nonce("appr-2", true))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let late = channel
        .send_message(&http, card_with_nonce("appr-2", true))
        .await
        .unwrap();
    let ids: Vec<String> = fake
        .calls_of("createMessage")
        .iter()
        .filter_map(|c| c.sent_message_id())
        .collect();
    assert_eq!(ids.len(), 5);
    assert_eq!(ids[4], late.id.to_string());
    assert_ne!(ids[3], ids[4]);

    let too_long = channel
        .send_message(&http, card_with_nonce(&"n".repeat(26), true))
        .await
        .unwrap_err();
    assert!(format!("{too_long:?}").contains("50035"), "{too_long:?}");
}

#[tokio::test]
async fn slack_rate_limit_window_reset_and_lost_answer() {
    let fake = gatehouse_fakes::slack::spawn(loopback()).await.unwrap();
    let client = client_for(&fake, false);
    let token = SlackApiToken::new("xoxb-fake".into());
    let session = client.open_session(&token);
    let post = |channel: &str| {
        SlackApiChatPostMessageRequest::new(
            channel.into(),
            SlackMessageContent::new().with_text("Approve?".into()),
        )
    };

    arm(
        &fake,
        json!({"method": "chat.postMessage", "chat": "C1", "for_ms": 3000, "retry_after": 3}),
    )
    .await;
    let error = session.chat_post_message(&post("C1")).await.unwrap_err();
    let SlackClientError::RateLimitError(limit) = error else {
        panic!("not a rate limit: {error:?}");
    };
    assert_eq!(limit.retry_after, Some(Duration::from_secs(3)));
    session.chat_post_message(&post("C2")).await.unwrap();
    let limited = &fake.calls_in_chat("C1")[0];
    assert_eq!(limited.status, Some(429));
    assert_eq!(limited.answer, json!({"ok": false, "error": "ratelimited"}));
    // Disarm the window early, as a test that has seen enough would.
    reqwest::Client::new()
        .delete(format!("http://{}/_fake/faults", fake.addr))
        .send()
        .await
        .unwrap();

    arm(&fake, json!({"method": "chat.postMessage", "reset": true})).await;
    let reset = session.chat_post_message(&post("C3")).await.unwrap_err();
    assert!(
        matches!(reset, SlackClientError::HttpProtocolError(_)),
        "{reset:?}"
    );
    arm(
        &fake,
        json!({"method": "chat.postMessage", "lose_answer": true}),
    )
    .await;
    let lost = session.chat_post_message(&post("C3")).await.unwrap_err();
    assert!(
        matches!(lost, SlackClientError::HttpProtocolError(_)),
        "{lost:?}"
    );
    let messages: Value = reqwest::get(format!("http://{}/_fake/messages", fake.addr))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let stored = messages["channels"]["C3"].as_array().unwrap();
    assert_eq!(
        stored.len(),
        1,
        "the reset posted nothing, the lost answer did"
    );
    let lost = fake.calls_in_chat("C3").pop().unwrap();
    assert_eq!(lost.fault, Some(FaultEffect::LostAnswer));
    assert_eq!(
        lost.sent_message_id(),
        stored[0]["ts"].as_str().map(str::to_owned)
    );
}
