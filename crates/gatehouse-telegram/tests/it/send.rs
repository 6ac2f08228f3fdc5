use gatehouse_chat::ChatError;
use gatehouse_chat::config::NativeTarget;
use gatehouse_chat::delivery::Deliverer;
use gatehouse_chat::journal::{EntryKind, JournalEntry};
use gatehouse_chat::plan::{RequestMeta, plan_delivery};
use gatehouse_chat::render::{ApprovalView, render_prompt};
use gatehouse_chat::route::{MessageLocator, Route};
use gatehouse_chat::token::TokenClaim;
use gatehouse_fakes::FakeHandle;
use gatehouse_policy::ApprovalDecision;
use gatehouse_telegram::{TelegramChannel, TelegramError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{
    APPROVER, BOT, Core, FORUM, NOW_MS, approvals, calls, config, connect, control, dispatcher,
    fake, fast_policy, forum_origin, view,
};

const PROMPT_HTML: &str = "<b>Exec approval needed</b>\n\
<pre>systemctl restart nginx</pre>\n\
<b>Working directory:</b> /srv\n\
<b>Agent:</b> main\n\
<b>ID:</b> 0f3c9a1e (0f3c9a1e-7b2d-4c1a-9e55-1234567890ab)\n\
<b>Expires:</b> in 10m (1970-01-01 00:10:00 UTC)\n\
Reply /approve 0f3c9a1e allow-once|allow-always|deny";

fn dm_only() -> RequestMeta<'static> {
    RequestMeta {
        agent_id: Some("main"),
        session_key: None,
        turn_source: None,
    }
}

/// Delivers one approval raised in the forum topic, with Telegram's client set to `target`.
async fn deliver_from_topic(
    fake: &FakeHandle,
    target: NativeTarget,
) -> (Core, Vec<(JournalEntry, MessageLocator)>) {
    let core = dispatcher(connect(fake).await);
    let origin = forum_origin();
    let meta = RequestMeta {
        turn_source: Some(&origin),
        ..dm_only()
    };
    let plan = plan_delivery(meta, &approvals(target));
    let delivered = core.deliver(&plan, &view()).await;
    (core, delivered)
}

fn locator(chat: i64, message: u32, thread: Option<&str>) -> MessageLocator {
    MessageLocator {
        channel: "telegram".into(),
        account_id: None,
        chat_id: chat.to_string(),
        message_id: message.to_string(),
        thread_id: thread.map(str::to_owned),
    }
}

/// The `callback_data` of every button of a `sendMessage` body, with its label.
fn buttons(body: &Value) -> Vec<(String, String)> {
    body["reply_markup"]["inline_keyboard"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["text"].as_str().unwrap().to_owned(),
                b["callback_data"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn delivers_a_card_with_buttons_to_an_approver_dm() {
    let fake = fake().await;
    let core = dispatcher(connect(&fake).await);
    let plan = plan_delivery(dm_only(), &approvals(NativeTarget::Dm));
    let delivered = core.deliver(&plan, &view()).await;

    assert_eq!(core.journal.failures(), vec![]);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].0.kind, EntryKind::Card);
    let card_at = locator(APPROVER, 1, None);
    assert_eq!(delivered[0].1, card_at);

    let sent = calls(&fake, "sendMessage");
    assert_eq!(sent.len(), 1);
    let body = &sent[0].body;
    let tokens = buttons(body);
    assert_eq!(
        *body,
        json!({
            "chat_id": APPROVER,
            "text": PROMPT_HTML,
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": true},
            "reply_markup": {"inline_keyboard": [[
                {"text": "Allow once", "callback_data": tokens[0].1},
                {"text": "Allow always", "callback_data": tokens[1].1},
                {"text": "Deny", "callback_data": tokens[2].1},
            ]]},
        })
    );
    let decisions = [
        ApprovalDecision::AllowOnce,
        ApprovalDecision::AllowAlways,
        ApprovalDecision::Deny,
    ];
    for ((_, token), decision) in tokens.iter().zip(decisions) {
        assert!(token.len() <= 64);
        assert_eq!(
            core.dispatcher.tokens.verify(token, &card_at, 1),
            Ok(TokenClaim {
                approval_id: view().id,
                decision
            }),
            "the token is bound to the message Telegram reported"
        );
    }
}

#[tokio::test]
async fn omits_allow_always_when_it_is_not_offered() {
    let fake = fake().await;
    let core = dispatcher(connect(&fake).await);
    let view = ApprovalView {
        allow_always_offered: false,
        chain: None,
        tool: None,
        ..view()
    };
    let plan = plan_delivery(dm_only(), &approvals(NativeTarget::Dm));
    core.deliver(&plan, &view).await;
    let labels: Vec<String> = buttons(&calls(&fake, "sendMessage")[0].body)
        .into_iter()
        .map(|(label, _)| label)
        .collect();
    assert_eq!(labels, ["Allow once", "Deny"]);
}

#[tokio::test]
async fn keeps_the_forum_topic_of_the_origin() {
    let fake = fake().await;
    let (core, delivered) = deliver_from_topic(&fake, NativeTarget::Channel).await;

    assert_eq!(core.journal.failures(), vec![]);
    assert_eq!(delivered[0].1, locator(FORUM, 1, Some("42")));
    let body = &calls(&fake, "sendMessage")[0].body;
    assert_eq!(body["chat_id"], FORUM);
    assert_eq!(body["message_thread_id"], 42);
}

#[tokio::test]
async fn reports_an_approver_who_never_opened_a_dm_with_the_fix() {
    let fake = fake().await;
    control(&fake, "/_fake/config", json!({"never_started": [APPROVER]})).await;
    let (core, _) = deliver_from_topic(&fake, NativeTarget::Dm).await;

    let dm_card = core
        .journal
        .planned()
        .into_iter()
        .find(|entry| entry.kind == EntryKind::Card)
        .unwrap();
    assert_eq!(
        dm_card.route,
        Route::dm("telegram", None, &APPROVER.to_string())
    );
    let failures = core.journal.failures();
    let (key, reason) = &failures[0];
    assert_eq!(*key, dm_card.key);
    assert!(reason.starts_with("telegram refused the call"), "{reason}");
    assert!(
        reason.contains("never opened a chat with the bot"),
        "{reason}"
    );
    assert!(reason.contains(&format!("@{BOT}")), "{reason}");
    assert!(reason.contains("press Start"), "{reason}");

    // The fallback goes out once the card was refused; the card itself is tried again while
    // its approval lives, but only after the longest delay, never at once.
    core.wait(|journal| journal.count("delivered") == 2).await;
    core.wait(|journal| journal.failures().len() >= 2).await;
    let dm_attempts: Vec<u64> = calls(&fake, "sendMessage")
        .into_iter()
        .filter(|call| call.body["chat_id"] == APPROVER)
        .map(|call| call.at_ms)
        .collect();
    assert!(
        dm_attempts[1] - dm_attempts[0] >= 200,
        "a refusal is retried at the longest delay: {dm_attempts:?}"
    );

    let origin_texts: Vec<String> = calls(&fake, "sendMessage")
        .into_iter()
        .filter(|call| call.body["chat_id"] == FORUM)
        .map(|call| call.body["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(origin_texts.len(), 2, "notice, then the /approve fallback");
    assert!(
        origin_texts[1].contains("/approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab deny"),
        "{}",
        origin_texts[1]
    );
}

#[tokio::test]
async fn honours_retry_after_through_the_deliverer() {
    let fake = fake().await;
    let channel = connect(&fake).await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "sendMessage", "retry_after": 1}),
    )
    .await;
    let deliverer = Deliverer::new(fast_policy());
    let card = render_prompt(&view(), NOW_MS, 1200);
    let route = Route::dm("telegram", None, &APPROVER.to_string());

    let sent = deliverer.send(channel.as_ref(), &route, &card).await;

    assert_eq!(sent, Ok(locator(APPROVER, 1, None)));
    let attempts = calls(&fake, "sendMessage");
    assert_eq!(attempts.len(), 2);
    let waited = attempts[1].at_ms - attempts[0].at_ms;
    assert!(
        waited >= 1000,
        "retried after {waited} ms, before retry_after"
    );
    assert_eq!(deliverer.failures(), vec![]);
}

#[tokio::test]
async fn survives_a_flapping_api_without_losing_or_duplicating_a_prompt() {
    let fake = fake().await;
    let channel = connect(&fake).await;
    for fault in [
        json!({"method": "sendMessage", "count": 2, "status": 500}),
        json!({"method": "sendMessage", "status": 502, "description": "Bad Gateway"}),
        json!({"method": "sendMessage", "retry_after": 1}),
    ] {
        control(&fake, "/_fake/faults", fault).await;
    }
    let deliverer = Deliverer::new(fast_policy());
    let route = Route::dm("telegram", None, &APPROVER.to_string());
    let card = render_prompt(&view(), NOW_MS, 1200);

    let first = deliverer.send(channel.as_ref(), &route, &card).await;
    assert_eq!(first, Ok(locator(APPROVER, 1, None)));
    assert_eq!(
        calls(&fake, "sendMessage").len(),
        5,
        "four failures, one success"
    );

    // The chat holds exactly one prompt: the next message gets id 2.
    let second = deliverer.send(channel.as_ref(), &route, &card).await;
    assert_eq!(second, Ok(locator(APPROVER, 2, None)));
    assert_eq!(deliverer.failures(), vec![]);
}

#[tokio::test]
async fn gives_up_after_the_policys_attempts_and_records_the_failure() {
    let fake = fake().await;
    let channel = connect(&fake).await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "sendMessage", "count": 10, "status": 500}),
    )
    .await;
    let deliverer = Deliverer::new(fast_policy());
    let route = Route::dm("telegram", None, &APPROVER.to_string());
    let card = render_prompt(&view(), NOW_MS, 1200);

    let sent = deliverer.send(channel.as_ref(), &route, &card).await;

    assert!(matches!(sent, Err(ChatError::Transient { .. })), "{sent:?}");
    assert_eq!(calls(&fake, "sendMessage").len(), 5);
    assert_eq!(deliverer.failures()[0].attempts, 5);
}

#[tokio::test]
async fn never_prints_the_bot_token() {
    let fake = fake().await;
    let channel = connect(&fake).await;
    let printed = format!("{channel:?}");
    assert!(!printed.contains("TEST-token"), "{printed}");
    assert!(printed.contains(BOT), "{printed}");
    let paths: Vec<String> = fake.calls().into_iter().map(|call| call.path).collect();
    assert_eq!(
        paths,
        ["/bot123:***/GetMe"],
        "the token only travels in the URL"
    );
}

#[tokio::test]
async fn refuses_to_start_with_a_token_telegram_rejects() {
    let fake = fake().await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "getMe", "status": 401, "description": "Unauthorized"}),
    )
    .await;

    let refused = TelegramChannel::connect(config(&fake)).await.unwrap_err();

    let TelegramError::Connect {
        source: ChatError::Permanent { reason, .. },
    } = &refused
    else {
        panic!("expected a permanent connect failure, got {refused:?}");
    };
    assert!(
        reason.contains("botToken, tokenFile or tokenEnv"),
        "{reason}"
    );
    // The cause is the error's source, shown once by whoever prints the chain.
    assert!(!refused.to_string().contains(reason.as_str()), "{refused}");
}

#[tokio::test]
async fn reports_an_unreachable_bot_api_as_transient_without_the_token() {
    let fake = fake().await;
    let mut config = config(&fake);
    fake.shutdown().await;
    config.api_url = "http://127.0.0.1:9".parse().unwrap();

    let refused = TelegramChannel::connect(config).await.unwrap_err();

    assert!(
        matches!(
            refused,
            TelegramError::Connect {
                source: ChatError::Transient { .. }
            }
        ),
        "{refused:?}"
    );
    let printed = format!("{refused} {refused:?}");
    assert!(!printed.contains("TEST-token"), "{printed}");
    assert!(
        printed.contains("Connection refused"),
        "the cause is shown: {printed}"
    );
}
