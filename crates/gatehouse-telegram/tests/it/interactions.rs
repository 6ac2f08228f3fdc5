use std::sync::Arc;

use gatehouse_chat::channel::{Channel, Inbound};
use gatehouse_chat::commands::{
    PressRefusal, TextAction, TextContext, check_press, interpret_text,
};
use gatehouse_chat::config::NativeTarget;
use gatehouse_chat::dispatch::Dispatcher;
use gatehouse_chat::plan::{RequestMeta, plan_delivery};
use gatehouse_chat::render::{ResolveOutcome, render_receipt};
use gatehouse_chat::route::{MessageLocator, TurnSource};
use gatehouse_chat::token::{MemoryTokenStore, TokenClaim};
use gatehouse_fakes::FakeHandle;
use gatehouse_policy::ApprovalDecision;
use gatehouse_telegram::TelegramChannel;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{
    APPROVER, BOT, FORUM, NOW_MS, Running, approvals, calls, connect, control, dispatcher, fake,
    view,
};

/// Delivers the card to the approver's DM and to a forum topic; returns both locators.
async fn delivered(
    fake: &FakeHandle,
) -> (
    Arc<TelegramChannel>,
    Dispatcher<MemoryTokenStore>,
    Vec<MessageLocator>,
) {
    let channel = connect(fake).await;
    let dispatcher = dispatcher(Arc::clone(&channel));
    let origin = TurnSource {
        channel: "telegram".into(),
        account_id: None,
        to: FORUM.to_string(),
        thread_id: Some("42".into()),
        dm_user_id: None,
    };
    let meta = RequestMeta {
        agent_id: Some("main"),
        session_key: None,
        turn_source: Some(&origin),
    };
    let plan = plan_delivery(meta, &approvals(NativeTarget::Both));
    let outcome = dispatcher.deliver(&plan, &view(), NOW_MS).await;
    assert_eq!(outcome.failed, vec![]);
    assert_eq!(outcome.delivered.len(), 2, "one card per route, no notice");
    let copies = outcome.delivered.into_iter().map(|d| d.locator).collect();
    (channel, dispatcher, copies)
}

/// The token of button `index` on the card sent to `chat`.
fn token(fake: &FakeHandle, chat: i64, index: usize) -> String {
    let sent = calls(fake, "sendMessage");
    let body = &sent
        .iter()
        .find(|c| c.body["chat_id"] == chat)
        .unwrap()
        .body;
    body["reply_markup"]["inline_keyboard"][0][index]["callback_data"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn press(fake: &FakeHandle, from: i64, data: &str, at: &MessageLocator) -> Value {
    control(
        fake,
        "/_fake/inject",
        json!({"callback_query": {
            "from": {"id": from, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "data": data,
            "message": {"message_id": at.message_id.parse::<i64>().unwrap(),
                        "chat": {"id": at.chat_id.parse::<i64>().unwrap()}},
        }}),
    )
    .await
}

#[tokio::test]
async fn reports_an_approvers_press_and_answers_it_privately() {
    let fake = fake().await;
    let (channel, dispatcher, copies) = delivered(&fake).await;
    let mut running = Running::start(Arc::clone(&channel));
    let topic_card = copies
        .iter()
        .find(|c| c.chat_id == FORUM.to_string())
        .unwrap();
    let allow_once = token(&fake, FORUM, 0);

    press(&fake, APPROVER, &allow_once, topic_card).await;
    let Inbound::Press(pressed) = running.next().await else {
        panic!("expected a press");
    };

    assert_eq!(pressed.sender.id, APPROVER.to_string());
    assert_eq!(pressed.sender.username.as_deref(), Some("alice"));
    assert_eq!(pressed.token, allow_once);
    assert_eq!(
        pressed.message, *topic_card,
        "the topic is part of the locator"
    );
    let claim = check_press(
        &pressed,
        &dispatcher.tokens,
        &approvals(NativeTarget::Both),
        NOW_MS + 1,
    );
    assert_eq!(
        claim,
        Ok(TokenClaim {
            approval_id: view().id,
            decision: ApprovalDecision::AllowOnce
        })
    );

    channel
        .answer(&pressed.interaction, "Allowed once 0f3c9a1e.")
        .await
        .unwrap();
    let answers = calls(&fake, "answerCallbackQuery");
    assert_eq!(
        answers[0].body,
        json!({"callback_query_id": "cbq-1", "text": "Allowed once 0f3c9a1e.", "show_alert": false})
    );
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn answers_a_non_approvers_press_with_an_alert_and_keeps_the_buttons() {
    let fake = fake().await;
    let (channel, dispatcher, copies) = delivered(&fake).await;
    let mut running = Running::start(Arc::clone(&channel));
    let deny = token(&fake, FORUM, 2);
    let topic_card = copies
        .iter()
        .find(|c| c.chat_id == FORUM.to_string())
        .unwrap();

    press(&fake, 777, &deny, topic_card).await;
    let Inbound::Press(pressed) = running.next().await else {
        panic!("expected a press");
    };
    let refusal = check_press(
        &pressed,
        &dispatcher.tokens,
        &approvals(NativeTarget::Both),
        NOW_MS + 1,
    )
    .unwrap_err();
    assert_eq!(refusal, PressRefusal::NotApprover);
    channel
        .answer(&pressed.interaction, refusal.text())
        .await
        .unwrap();

    assert_eq!(
        calls(&fake, "answerCallbackQuery")[0].body,
        json!({"callback_query_id": "cbq-1", "text": "Only approvers can decide.", "show_alert": true})
    );
    assert_eq!(calls(&fake, "editMessageText"), vec![]);
    assert_eq!(calls(&fake, "editMessageReplyMarkup"), vec![]);
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn refuses_a_token_pressed_on_another_copy() {
    let fake = fake().await;
    let (channel, dispatcher, copies) = delivered(&fake).await;
    let mut running = Running::start(Arc::clone(&channel));
    let dm_token = token(&fake, APPROVER, 0);
    let topic_card = copies
        .iter()
        .find(|c| c.chat_id == FORUM.to_string())
        .unwrap();

    press(&fake, APPROVER, &dm_token, topic_card).await;
    let Inbound::Press(pressed) = running.next().await else {
        panic!("expected a press");
    };
    let refused = check_press(
        &pressed,
        &dispatcher.tokens,
        &approvals(NativeTarget::Both),
        NOW_MS + 1,
    );
    assert!(
        matches!(refused, Err(PressRefusal::Token(_))),
        "{refused:?}"
    );
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn reports_a_reply_to_a_card_with_the_card_it_replies_to() {
    let fake = fake().await;
    let (channel, _dispatcher, copies) = delivered(&fake).await;
    let mut running = Running::start(Arc::clone(&channel));
    let dm_card = copies
        .iter()
        .find(|c| c.chat_id == APPROVER.to_string())
        .unwrap();
    let card = calls(&fake, "sendMessage")
        .into_iter()
        .find(|c| c.body["chat_id"] == APPROVER)
        .unwrap();

    control(
        &fake,
        "/_fake/inject",
        json!({"message": {
            "chat": {"id": APPROVER}, "text": "deny",
            "reply_to_message": {
                "message_id": 1, "date": 1_700_000_000,
                "chat": {"id": APPROVER, "type": "private", "first_name": "Alice"},
                "from": {"id": 123, "is_bot": true, "first_name": "Gatehouse", "username": BOT},
                "text": card.body["text"],
            },
        }}),
    )
    .await;
    let Inbound::Text(text) = running.next().await else {
        panic!("expected text");
    };

    assert_eq!(text.text, "deny");
    assert!(text.is_direct);
    assert_eq!(text.reply_to.as_ref(), Some(dm_card));
    let replied_to = view().id;
    let action = interpret_text(
        &text.text,
        TextContext {
            sender: &text.sender,
            bot_username: Some(channel.bot_username()),
            replied_to_approval: Some(&replied_to),
        },
        &approvals(NativeTarget::Both),
    );
    assert_eq!(
        action,
        TextAction::Resolve {
            target: view().id,
            decision: ApprovalDecision::Deny
        }
    );
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn reports_approve_commands_addressed_to_this_bot_in_a_topic() {
    let fake = fake().await;
    let channel = connect(&fake).await;
    let mut running = Running::start(Arc::clone(&channel));

    control(
        &fake,
        "/_fake/inject",
        json!({"message": {
            "chat": {"id": FORUM, "type": "supergroup", "title": "ops", "is_forum": true},
            "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice"},
            "message_thread_id": 42, "is_topic_message": true,
            "text": format!("/approve@{BOT} 0f3c9a1e allow-once"),
        }}),
    )
    .await;
    let Inbound::Text(text) = running.next().await else {
        panic!("expected text");
    };

    assert!(!text.is_direct);
    assert_eq!(text.message.thread_id.as_deref(), Some("42"));
    assert_eq!(text.message.chat_id, FORUM.to_string());
    let action = interpret_text(
        &text.text,
        TextContext {
            sender: &text.sender,
            bot_username: Some(channel.bot_username()),
            replied_to_approval: None,
        },
        &approvals(NativeTarget::Both),
    );
    assert_eq!(
        action,
        TextAction::Resolve {
            target: "0f3c9a1e".into(),
            decision: ApprovalDecision::AllowOnce
        }
    );
    assert_eq!(running.stop().await, Ok(()));
}

#[tokio::test]
async fn edits_every_copy_into_a_receipt_and_clears_the_keyboards() {
    let fake = fake().await;
    let (_channel, dispatcher, copies) = delivered(&fake).await;
    let receipt = render_receipt(
        &view(),
        &ResolveOutcome {
            decision: ApprovalDecision::AllowOnce,
            decided_by: "alice <ops>".into(),
        },
        1200,
    );

    let failures = dispatcher.finish(&copies, &receipt, |_| false).await;

    assert_eq!(failures, vec![]);
    let edits = calls(&fake, "editMessageText");
    assert_eq!(edits.len(), 2, "the DM card and the topic card");
    for edit in &edits {
        assert!(
            edit.body.get("reply_markup").is_none(),
            "keyboard cleared: {}",
            edit.body
        );
        let text = edit.body["text"].as_str().unwrap();
        assert!(
            text.starts_with("<b>Allowed once by alice &lt;ops&gt;</b>\n<pre>"),
            "{text}"
        );
        assert_eq!(edit.body["parse_mode"], "HTML");
    }

    let again = dispatcher.finish(&copies, &receipt, |_| false).await;
    assert_eq!(again, vec![], "an edit that changes nothing counts as done");
}

#[tokio::test]
async fn deletes_every_copy_when_cleanup_is_on() {
    let fake = fake().await;
    let (_channel, dispatcher, copies) = delivered(&fake).await;
    let receipt = render_receipt(
        &view(),
        &ResolveOutcome {
            decision: ApprovalDecision::Deny,
            decided_by: "alice".into(),
        },
        1200,
    );

    assert_eq!(dispatcher.finish(&copies, &receipt, |_| true).await, vec![]);
    let mut deleted: Vec<(String, String)> = calls(&fake, "deleteMessage")
        .into_iter()
        .map(|c| {
            (
                c.body["chat_id"].to_string(),
                c.body["message_id"].to_string(),
            )
        })
        .collect();
    deleted.sort();
    let mut expected: Vec<(String, String)> = copies
        .iter()
        .map(|c| (c.chat_id.clone(), c.message_id.clone()))
        .collect();
    expected.sort();
    assert_eq!(deleted, expected);

    let again = dispatcher.finish(&copies, &receipt, |_| true).await;
    assert_eq!(again, vec![], "deleting a deleted message counts as done");
}
