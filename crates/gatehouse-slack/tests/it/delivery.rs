use std::time::Duration;

use gatehouse_chat::delivery::{Deliverer, DeliverySettings, RetryPolicy};
use gatehouse_chat::render::{ResolveOutcome, render_receipt};
use gatehouse_chat::{Channel, ChatError, RateScope, Route, SendKey};
use gatehouse_policy::ApprovalDecision;
use gatehouse_slack::SlackMode;
use gatehouse_slack::encode::encode_card;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{channel, config, control, fake, pending_card, view, wait_for_calls};

fn chat_route(chat: &str, thread: Option<&str>) -> Route {
    Route::from_target("targets", "slack", &format!("channel:{chat}"), None, thread).unwrap()
}

#[tokio::test]
async fn delivers_a_card_to_an_approver_dm_with_exact_blocks() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    let key = SendKey::random();
    let locator = slack
        .send(&Route::dm("slack", None, "U0ALICE"), &pending_card(), &key)
        .await
        .unwrap();

    let open = &fake.calls_of("conversations.open")[0];
    assert_eq!(open.body, json!({"users": ["U0ALICE"]}));
    let post = &fake.calls_of("chat.postMessage")[0];
    let expected = json!({
        "channel": locator.chat_id,
        "text": "Exec approval needed\n```\nrm -rf /tmp/build &amp;&amp; echo &lt;!here&gt;\n```\nWorking directory: /srv/app\nAgent: main\nResolved path: /usr/bin/rm\nID: 0f3c9a1e (0f3c9a1e-7b2d-4c1a-9e55-1234567890ab)\nExpires: in 5m (2026-11-21 06:46:40 UTC)\nReply /approve 0f3c9a1e allow-once|allow-always|deny",
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": "Exec approval needed"}},
            {"type": "section", "text": {"type": "mrkdwn",
                "text": "```\nrm -rf /tmp/build &amp;&amp; echo &lt;!here&gt;\n```"}},
            {"type": "context", "elements": [
                {"type": "plain_text", "text": "Working directory: /srv/app"},
                {"type": "plain_text", "text": "Agent: main"},
                {"type": "plain_text", "text": "Resolved path: /usr/bin/rm"},
                {"type": "plain_text", "text": "ID: 0f3c9a1e (0f3c9a1e-7b2d-4c1a-9e55-1234567890ab)"},
                {"type": "plain_text", "text": "Expires: in 5m (2026-11-21 06:46:40 UTC)"}]},
            {"type": "context", "elements": [
                {"type": "plain_text", "text": "Reply /approve 0f3c9a1e allow-once|allow-always|deny"}]},
            {"type": "actions", "block_id": "gatehouse-decision", "elements": [
                {"type": "button", "action_id": "allow-once", "value": "g1.tok-once", "style": "primary",
                 "text": {"type": "plain_text", "text": "Allow once"}},
                {"type": "button", "action_id": "allow-always", "value": "g1.tok-always",
                 "text": {"type": "plain_text", "text": "Allow always"}},
                {"type": "button", "action_id": "deny", "value": "g1.tok-deny", "style": "danger",
                 "text": {"type": "plain_text", "text": "Deny"}}]}],
        // The send key, so a post whose answer is lost can be found instead of sent twice.
        "metadata": {"event_type": "gatehouse_message", "event_payload": {"key": key.as_str()}}
    });
    assert_eq!(post.body, expected);
    assert!(locator.chat_id.starts_with('D'), "{locator:?}");
    assert_eq!(locator.channel, "slack");
    assert_eq!(locator.thread_id, None);

    // A second card to the same approver reuses the DM instead of opening it again.
    slack
        .send(
            &Route::dm("slack", None, "U0ALICE"),
            &pending_card(),
            &SendKey::random(),
        )
        .await
        .unwrap();
    assert_eq!(fake.calls_of("conversations.open").len(), 1);
}

fn expected_post(chat: &str, thread: Option<&str>, key: &SendKey) -> Value {
    let mut body = serde_json::to_value(encode_card(&pending_card())).unwrap();
    body["channel"] = json!(chat);
    body["metadata"] =
        json!({"event_type": "gatehouse_message", "event_payload": {"key": key.as_str()}});
    if let Some(thread) = thread {
        body["thread_ts"] = json!(thread);
    }
    body
}

#[tokio::test]
async fn delivers_to_the_origin_channel_and_its_thread() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    let (first, second) = (SendKey::random(), SendKey::random());
    let in_channel = slack
        .send(&chat_route("C0OPS", None), &pending_card(), &first)
        .await
        .unwrap();
    let in_thread = slack
        .send(
            &chat_route("C0OPS", Some("1795243000.000100")),
            &pending_card(),
            &second,
        )
        .await
        .unwrap();

    let posts = fake.calls_of("chat.postMessage");
    assert_eq!(posts[0].body, expected_post("C0OPS", None, &first));
    assert_eq!(
        posts[1].body,
        expected_post("C0OPS", Some("1795243000.000100"), &second)
    );
    assert_eq!(in_channel.chat_id, "C0OPS");
    assert_eq!(in_thread.thread_id.as_deref(), Some("1795243000.000100"));
    assert_ne!(in_channel.message_id, in_thread.message_id);
    assert!(fake.calls_of("conversations.open").is_empty());
}

#[tokio::test]
async fn updates_a_card_into_a_receipt_without_buttons_then_deletes_it() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    let locator = slack
        .send(
            &chat_route("C0OPS", None),
            &pending_card(),
            &SendKey::random(),
        )
        .await
        .unwrap();
    let outcome = ResolveOutcome {
        decision: ApprovalDecision::AllowOnce,
        decided_by: "alice".into(),
    };
    let receipt = render_receipt(&view(true), &outcome, 1200);
    slack.update(&locator, &receipt).await.unwrap();

    let update = &fake.calls_of("chat.update")[0];
    assert_eq!(update.body["channel"], "C0OPS");
    assert_eq!(update.body["ts"], locator.message_id.as_str());
    assert_eq!(
        update.body["blocks"][0],
        json!({"type": "header", "text": {"type": "plain_text", "text": "Allowed once by alice"}})
    );
    let blocks = update.body["blocks"].as_array().unwrap();
    assert!(blocks.iter().all(|b| b["type"] != "actions"), "{blocks:?}");

    slack.delete(&locator).await.unwrap();
    let delete = &fake.calls_of("chat.delete")[0];
    assert_eq!(
        delete.body,
        json!({"channel": "C0OPS", "ts": locator.message_id})
    );
    let again = slack.delete(&locator).await.unwrap_err();
    assert!(
        matches!(again, ChatError::Permanent { ref reason, .. } if reason.contains("message_not_found"))
    );
}

#[tokio::test]
async fn reports_429_retry_after_and_the_core_deliverer_honours_it() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    let route = chat_route("C0OPS", None);
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "chat.postMessage", "retry_after": 2}),
    )
    .await;
    let error = slack
        .send(&route, &pending_card(), &SendKey::random())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ChatError::RateLimited {
            channel: "slack".into(),
            retry_after: Duration::from_secs(2),
            scope: RateScope::Chat,
        }
    );

    control(
        &fake,
        "/_fake/faults",
        json!({"method": "chat.postMessage", "retry_after": 1}),
    )
    .await;
    let deliverer = Deliverer::new(RetryPolicy::default());
    deliverer
        .send(slack.as_ref(), &route, &pending_card())
        .await
        .unwrap();
    let posts = wait_for_calls(&fake, "chat.postMessage", 3).await;
    assert!(
        posts[2].at_ms - posts[1].at_ms >= 1000,
        "retried before Retry-After: {} ms",
        posts[2].at_ms - posts[1].at_ms
    );
    assert!(deliverer.failures().is_empty());
}

#[tokio::test]
async fn refuses_unknown_channels_as_permanent_with_the_fix() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "chat.postMessage", "status": 200, "description": "not_in_channel"}),
    )
    .await;
    let error = slack
        .send(
            &chat_route("C0OTHER", None),
            &pending_card(),
            &SendKey::random(),
        )
        .await
        .unwrap_err();
    let ChatError::Permanent { reason, .. } = error else {
        panic!("{error:?}")
    };
    assert!(
        reason.contains("not_in_channel") && reason.contains("/invite"),
        "{reason}"
    );
}

/// Moved from the adapter's own spacer: Slack's tiers are now stated by the adapter
/// (`Channel::pacing`) and kept by the chat core's pacer, for every caller.
#[tokio::test]
async fn spaces_posts_to_one_channel_by_slacks_tier() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    let deliverer = Deliverer::new(RetryPolicy::default()).with_settings(
        "slack",
        DeliverySettings {
            pacing: slack.pacing(),
            ..DeliverySettings::default()
        },
    );
    let start = tokio::time::Instant::now();
    let post = |chat: &'static str| {
        let slack = std::sync::Arc::clone(&slack);
        let deliverer = &deliverer;
        async move {
            deliverer
                .send(slack.as_ref(), &chat_route(chat, None), &pending_card())
                .await
                .unwrap()
        }
    };
    post("C0OPS").await;
    post("C0DEV").await;
    let other_channel = start.elapsed();
    post("C0OPS").await;
    let same_channel = start.elapsed();
    assert!(
        other_channel < Duration::from_secs(1),
        "another channel waited: {other_channel:?}"
    );
    assert!(
        same_channel >= Duration::from_secs(1),
        "same channel not spaced: {same_channel:?}"
    );
    assert_eq!(fake.calls_of("chat.postMessage").len(), 3);
}

#[tokio::test]
async fn finds_a_sent_card_by_its_key_in_the_conversation_history() {
    let fake = fake().await;
    let slack = channel(config(&fake, SlackMode::Socket));
    assert!(slack.finds_sent());
    let route = Route::dm("slack", None, "U0ALICE");
    let key = SendKey::random();
    let sent = slack.send(&route, &pending_card(), &key).await.unwrap();
    slack
        .send(&route, &pending_card(), &SendKey::random())
        .await
        .unwrap();
    assert_eq!(slack.find_sent(&route, &key).await.unwrap(), Some(sent));
    assert_eq!(
        slack.find_sent(&route, &SendKey::random()).await.unwrap(),
        None
    );
    let history = &fake.calls_of("conversations.history")[0];
    assert_eq!(
        history.body["include_all_metadata"],
        json!("true"),
        "{}",
        history.body
    );
    // Threads are not looked up (no metadata from conversations.replies).
    let threaded = chat_route("C0OPS", Some("1795243000.000100"));
    assert_eq!(slack.find_sent(&threaded, &key).await.unwrap(), None);
    assert_eq!(fake.calls_of("conversations.history").len(), 2);
}
