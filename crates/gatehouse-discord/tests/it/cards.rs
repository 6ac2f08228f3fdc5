use gatehouse_chat::render::{ApprovalView, ResolveOutcome, render_prompt, render_receipt};
use gatehouse_chat::{Channel, ChatError, MessageLocator, Route, SendKey};
use gatehouse_policy::ApprovalDecision;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{APPROVER, CHANNEL_ID, channel, control, fake, origin};

const NOW_MS: u64 = 1_795_242_700_000;

fn view() -> ApprovalView {
    ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "printf '```' && rm -rf ./build".into(),
        cwd: Some("/srv/app".into()),
        agent_id: Some("main".into()),
        host: Some("build-1".into()),
        resolved_path: None,
        env_keys: vec!["CI".into(), "PATH".into()],
        expires_at_ms: NOW_MS + 300_000,
        allow_always_offered: true,
        chain: None,
        tool: None,
    }
}

fn card() -> gatehouse_chat::render::Card {
    render_prompt(&view(), NOW_MS, 1200).with_buttons(vec![
        (ApprovalDecision::AllowOnce, "g1.once".into()),
        (ApprovalDecision::AllowAlways, "g1.always".into()),
        (ApprovalDecision::Deny, "g1.deny".into()),
    ])
}

/// The exact body serenity's builders produce for the card above, sent under `key`.
fn expected_card_body(key: &SendKey) -> Value {
    json!({
        "tts": false,
        "embeds": [{
            "type": "rich",
            "title": "Exec approval needed",
            "description": "```\nprintf 'ˋˋˋ' && rm -rf ./build\n```",
            "color": 0x5865F2,
            "fields": [
                {"name": "Working directory", "value": "/srv/app", "inline": false},
                {"name": "Agent", "value": "main", "inline": false},
                {"name": "Host", "value": "build-1", "inline": false},
                {"name": "Env overrides", "value": "CI, PATH", "inline": false},
                {"name": "ID", "value": "0f3c9a1e (0f3c9a1e-7b2d-4c1a-9e55-1234567890ab)", "inline": false},
                {"name": "Expires", "value": "<t:1795243000:R>", "inline": false}
            ],
            "footer": {"text": "Reply /approve 0f3c9a1e allow-once|allow-always|deny"}
        }],
        "allowed_mentions": {"parse": [], "users": [], "roles": []},
        "components": [{"type": 1, "components": [
            {"type": 2, "style": 3, "label": "Allow once", "custom_id": "g1.once", "disabled": false},
            {"type": 2, "style": 1, "label": "Allow always", "custom_id": "g1.always", "disabled": false},
            {"type": 2, "style": 4, "label": "Deny", "custom_id": "g1.deny", "disabled": false}
        ]}],
        "sticker_ids": [],
        "attachments": [],
        "nonce": key.as_str(),
        "enforce_nonce": true
    })
}

#[tokio::test]
async fn delivers_a_card_to_an_approver_dm_opened_once() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    let route = Route::dm("discord", None, &APPROVER.to_string());
    let key = SendKey::random();
    let first = discord.send(&route, &card(), &key).await.unwrap();
    let second = discord
        .send(&route, &card(), &SendKey::random())
        .await
        .unwrap();

    let opened = fake.calls_of("createDm");
    assert_eq!(opened.len(), 1, "the DM channel is cached");
    assert_eq!(
        opened[0].body,
        json!({"recipient_id": APPROVER.to_string()})
    );
    let sent = fake.calls_of("createMessage");
    assert_eq!(
        sent[0].path,
        format!("/channels/{}/messages", first.chat_id)
    );
    assert_eq!(sent[0].body, expected_card_body(&key));
    assert_eq!(first.chat_id, second.chat_id);
    assert_ne!(
        first.chat_id,
        APPROVER.to_string(),
        "a DM channel id, not the user id"
    );
    assert_ne!(first.message_id, second.message_id);
    assert_eq!(first.channel, "discord");
    assert_eq!(first.thread_id, None);
}

#[tokio::test]
async fn delivers_a_card_to_the_origin_channel_and_its_thread() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    let origin = origin();
    let key = SendKey::random();
    let in_channel = discord.send(&origin, &card(), &key).await.unwrap();
    let thread =
        Route::from_target("t", "discord", &CHANNEL_ID.to_string(), None, Some("4100")).unwrap();
    let in_thread = discord
        .send(&thread, &card(), &SendKey::random())
        .await
        .unwrap();

    let sent = fake.calls_of("createMessage");
    assert_eq!(sent[0].path, format!("/channels/{CHANNEL_ID}/messages"));
    assert_eq!(sent[0].body, expected_card_body(&key));
    assert_eq!(sent[1].path, "/channels/4100/messages");
    assert_eq!(in_channel.chat_id, CHANNEL_ID.to_string());
    assert_eq!(
        (in_thread.chat_id.as_str(), in_thread.thread_id.as_deref()),
        ("4100", Some("4100"))
    );
    assert!(fake.calls_of("createDm").is_empty());
}

#[tokio::test]
async fn edits_a_resolved_card_into_a_receipt_without_buttons() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    let origin = origin();
    let delivered = discord
        .send(&origin, &card(), &SendKey::random())
        .await
        .unwrap();
    let outcome = ResolveOutcome {
        decision: ApprovalDecision::AllowOnce,
        decided_by: "alice".into(),
    };
    discord
        .update(&delivered, &render_receipt(&view(), &outcome, 1200))
        .await
        .unwrap();

    let edit = &fake.calls_of("editMessage")[0];
    assert_eq!(
        edit.path,
        format!("/channels/{CHANNEL_ID}/messages/{}", delivered.message_id)
    );
    assert_eq!(edit.body["content"], "");
    assert_eq!(edit.body["components"], json!([]));
    assert_eq!(edit.body["embeds"][0]["title"], "Allowed once by alice");
    assert_eq!(edit.body["embeds"][0]["color"], 0x57F287);
    let stored = stored_message(&fake, &delivered).await;
    assert_eq!(stored["components"], json!([]));
    assert_eq!(stored["embeds"][0]["title"], "Allowed once by alice");
}

#[tokio::test]
async fn deletes_a_card_and_counts_a_missing_one_as_deleted() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    let origin = origin();
    let delivered = discord
        .send(&origin, &card(), &SendKey::random())
        .await
        .unwrap();
    discord.delete(&delivered).await.unwrap();
    discord.delete(&delivered).await.unwrap();

    let deletes = fake.calls_of("deleteMessage");
    assert_eq!(deletes.len(), 2);
    assert_eq!(
        deletes[0].path,
        format!("/channels/{CHANNEL_ID}/messages/{}", delivered.message_id)
    );
    assert_eq!(stored_message(&fake, &delivered).await["code"], 10008);
}

#[tokio::test]
async fn refuses_a_closed_dm_permanently_with_the_fix() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    control(&fake, "/_fake/config", json!({"dm_closed": [APPROVER]})).await;
    let error = discord
        .send(
            &Route::dm("discord", None, &APPROVER.to_string()),
            &card(),
            &SendKey::random(),
        )
        .await
        .unwrap_err();
    let ChatError::Permanent { channel, reason } = error else {
        panic!("{error:?}")
    };
    assert_eq!(channel, "discord");
    assert!(reason.contains("code 50007"), "{reason}");
    assert!(reason.contains("allow direct messages"), "{reason}");
}

#[tokio::test]
async fn refuses_routes_that_name_no_discord_id() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    let route = Route::from_target("t", "discord", "general", None, None).unwrap();
    let error = discord
        .send(&route, &card(), &SendKey::random())
        .await
        .unwrap_err();
    assert!(matches!(error, ChatError::Permanent { .. }), "{error:?}");
    assert!(fake.calls().iter().all(|c| c.method != "createMessage"));
}

fn message_url(fake: &gatehouse_fakes::FakeHandle, message: &MessageLocator) -> String {
    format!(
        "{}/api/v10/channels/{}/messages/{}",
        fake.base_url, message.chat_id, message.message_id
    )
}

async fn stored_message(fake: &gatehouse_fakes::FakeHandle, message: &MessageLocator) -> Value {
    reqwest::Client::new()
        .get(message_url(fake, message))
        .header("authorization", "Bot fake-token")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// Issue 37: a create whose answer was lost was sent again and left two cards. The key goes
/// out as Discord's nonce with `enforce_nonce`, so sending it again returns the first message.
#[tokio::test]
async fn a_repeated_send_under_one_key_returns_the_first_message() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    let route = Route::dm("discord", None, &APPROVER.to_string());
    let key = SendKey::random();
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "lose_answer": true}),
    )
    .await;
    let lost = discord.send(&route, &card(), &key).await.unwrap_err();
    assert!(lost.is_retryable(), "{lost:?}");
    let again = discord.send(&route, &card(), &key).await.unwrap();
    let created = fake.calls_of("createMessage");
    assert_eq!(created.len(), 2);
    assert_eq!(
        created[0].answer["id"], created[1].answer["id"],
        "one message"
    );
    assert_eq!(again.message_id, created[0].answer["id"].as_str().unwrap());
    assert!(discord.idempotent_sends());
}
