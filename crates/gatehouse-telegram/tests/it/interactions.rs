use std::sync::Arc;

use gatehouse_chat::ChatError;
use gatehouse_chat::channel::{ButtonPress, Channel, Inbound, InboundText};
use gatehouse_chat::commands::{
    PressRefusal, TextAction, TextContext, check_press, interpret_text,
};
use gatehouse_chat::config::NativeTarget;
use gatehouse_chat::dispatch::Settlement;
use gatehouse_chat::grammar::start::Conversation;
use gatehouse_chat::plan::{RequestMeta, plan_delivery};
use gatehouse_chat::render::{ResolveOutcome, render_receipt};
use gatehouse_chat::route::MessageLocator;
use gatehouse_chat::token::TokenClaim;
use gatehouse_fakes::FakeHandle;
use gatehouse_policy::ApprovalDecision;
use gatehouse_telegram::TelegramChannel;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{
    APPROVER, BOT, Core, FORUM, NOW_MS, Running, approvals, calls, connect, control, dispatcher,
    fake, forum_origin, view,
};

/// One approval delivered as a card to the approver's DM and to a forum topic, with the
/// channel's `run` going.
struct Delivered {
    fake: FakeHandle,
    channel: Arc<TelegramChannel>,
    core: Core,
    copies: Vec<MessageLocator>,
    running: Running,
}

impl Delivered {
    async fn new() -> Self {
        let fake = fake().await;
        let channel = connect(&fake).await;
        let core = dispatcher(Arc::clone(&channel));
        let origin = forum_origin();
        let meta = RequestMeta {
            agent_id: Some("main"),
            session_key: None,
            turn_source: Some(&origin),
        };
        let plan = plan_delivery(meta, &approvals(NativeTarget::Both));
        let delivered = core.deliver(&plan, &view()).await;
        assert_eq!(core.journal.failures(), vec![]);
        assert_eq!(delivered.len(), 2, "one card per route, no notice");
        let copies = delivered.into_iter().map(|(_, locator)| locator).collect();
        let running = Running::start(Arc::clone(&channel));
        Self {
            fake,
            channel,
            core,
            copies,
            running,
        }
    }

    /// The copy delivered to `chat`.
    fn copy_in(&self, chat: i64) -> MessageLocator {
        let chat = chat.to_string();
        self.copies
            .iter()
            .find(|copy| copy.chat_id == chat)
            .cloned()
            .unwrap()
    }

    /// The `sendMessage` body of the card sent to `chat`.
    fn card_body(&self, chat: i64) -> Value {
        calls(&self.fake, "sendMessage")
            .into_iter()
            .find(|call| call.body["chat_id"] == chat)
            .unwrap()
            .body
    }

    /// The token of button `index` on the card sent to `chat`.
    fn token(&self, chat: i64, index: usize) -> String {
        let body = self.card_body(chat);
        body["reply_markup"]["inline_keyboard"][0][index]["callback_data"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Has user `from` press a button carrying `data` on the message at `at`, as Telegram
    /// would report it, and returns what the channel made of it.
    async fn press(&mut self, from: i64, data: &str, at: &MessageLocator) -> ButtonPress {
        self.inject(json!({"callback_query": {
            "from": {"id": from, "is_bot": false, "first_name": "Alice", "username": "alice"},
            "data": data,
            "message": {"message_id": at.message_id.parse::<i64>().unwrap(),
                        "chat": {"id": at.chat_id.parse::<i64>().unwrap()}},
        }}))
        .await;
        match self.running.next().await {
            Inbound::Press(press) => press,
            Inbound::Text(text) => panic!("expected a press, got {text:?}"),
        }
    }

    /// Injects a `message` update and returns what the channel made of it.
    async fn say(&mut self, message: Value) -> InboundText {
        self.inject(json!({ "message": message })).await;
        match self.running.next().await {
            Inbound::Text(text) => text,
            Inbound::Press(press) => panic!("expected text, got {press:?}"),
        }
    }

    async fn inject(&self, update: Value) {
        control(&self.fake, "/_fake/inject", update).await;
    }

    /// The chat core's verdict on a press.
    fn check(&self, press: &ButtonPress) -> Result<TokenClaim, PressRefusal> {
        check_press(
            press,
            &self.core.dispatcher.tokens,
            &approvals(NativeTarget::Both),
            NOW_MS + 1,
        )
    }

    /// The chat core's reading of a text message.
    fn interpret(&self, text: &InboundText, replied_to: Option<&str>) -> TextAction {
        interpret_text(
            &text.text,
            TextContext {
                sender: &text.sender,
                bot_username: Some(self.channel.bot_username()),
                replied_to_approval: replied_to,
                conversation: Conversation::Shared,
            },
            &approvals(NativeTarget::Both),
        )
    }

    async fn stop(self) {
        assert_eq!(self.running.stop().await, Ok(()));
    }

    /// Settles the approval into `card` (deleting the copies with `cleanup`) and waits until
    /// every copy is done.
    async fn settle(&self, card: gatehouse_chat::render::Card, cleanup: bool) {
        let delete_on = if cleanup {
            ["telegram".to_owned()].into()
        } else {
            Default::default()
        };
        self.core
            .dispatcher
            .settle(&view().id, Settlement { card, delete_on });
        let copies = self.copies.len();
        self.core
            .wait(|journal| journal.count("finished") == copies)
            .await;
        assert_eq!(self.core.journal.failures(), vec![]);
    }

    /// Makes the same final call on every copy again, directly, as a retry whose first attempt
    /// landed would.
    async fn again(&self, card: &gatehouse_chat::render::Card, cleanup: bool) -> Vec<ChatError> {
        let deliverer = &self.core.dispatcher.deliverer;
        let mut failures = Vec::new();
        for copy in &self.copies {
            let done = if cleanup {
                deliverer.delete(self.channel.as_ref(), copy).await
            } else {
                deliverer.update(self.channel.as_ref(), copy, card).await
            };
            failures.extend(done.err());
        }
        failures
    }
}

fn receipt(decision: ApprovalDecision, decided_by: &str) -> gatehouse_chat::render::Card {
    let outcome = ResolveOutcome {
        decision,
        decided_by: decided_by.into(),
    };
    render_receipt(&view(), &outcome, 1200)
}

#[tokio::test]
async fn reports_an_approvers_press_and_answers_it_privately() {
    let mut t = Delivered::new().await;
    let topic_card = t.copy_in(FORUM);
    let allow_once = t.token(FORUM, 0);

    let pressed = t.press(APPROVER, &allow_once, &topic_card).await;

    assert_eq!(pressed.sender.id, APPROVER.to_string());
    assert_eq!(pressed.sender.username.as_deref(), Some("alice"));
    assert_eq!(pressed.token, allow_once);
    assert_eq!(
        pressed.message, topic_card,
        "the topic is part of the locator"
    );
    assert_eq!(
        t.check(&pressed),
        Ok(TokenClaim {
            approval_id: view().id,
            decision: ApprovalDecision::AllowOnce
        })
    );
    t.channel
        .answer(&pressed.interaction, "Allowed once 0f3c9a1e.")
        .await
        .unwrap();
    assert_eq!(
        calls(&t.fake, "answerCallbackQuery")[0].body,
        json!({"callback_query_id": "cbq-1", "text": "Allowed once 0f3c9a1e.", "show_alert": false})
    );
    t.stop().await;
}

#[tokio::test]
async fn answers_a_non_approvers_press_with_an_alert_and_keeps_the_buttons() {
    let mut t = Delivered::new().await;
    let topic_card = t.copy_in(FORUM);
    let deny = t.token(FORUM, 2);

    let pressed = t.press(777, &deny, &topic_card).await;
    let refusal = t.check(&pressed).unwrap_err();
    t.channel
        .answer(&pressed.interaction, refusal.text())
        .await
        .unwrap();

    assert_eq!(refusal, PressRefusal::NotApprover);
    assert_eq!(
        calls(&t.fake, "answerCallbackQuery")[0].body,
        json!({"callback_query_id": "cbq-1", "text": "Only approvers can decide.", "show_alert": true})
    );
    assert_eq!(calls(&t.fake, "editMessageText"), vec![]);
    assert_eq!(calls(&t.fake, "editMessageReplyMarkup"), vec![]);
    t.stop().await;
}

#[tokio::test]
async fn refuses_a_token_pressed_on_another_copy() {
    let mut t = Delivered::new().await;
    let topic_card = t.copy_in(FORUM);
    let dm_token = t.token(APPROVER, 0);

    let pressed = t.press(APPROVER, &dm_token, &topic_card).await;

    let refused = t.check(&pressed);
    assert!(
        matches!(refused, Err(PressRefusal::Token(_))),
        "{refused:?}"
    );
    t.stop().await;
}

#[tokio::test]
async fn reports_a_reply_to_a_card_with_the_card_it_replies_to() {
    let mut t = Delivered::new().await;
    let dm_card = t.copy_in(APPROVER);
    let card_text = t.card_body(APPROVER)["text"].clone();

    let text = t
        .say(json!({
            "chat": {"id": APPROVER}, "text": "deny",
            "reply_to_message": {
                "message_id": 1, "date": 1_700_000_000,
                "chat": {"id": APPROVER, "type": "private", "first_name": "Alice"},
                "from": {"id": 123, "is_bot": true, "first_name": "Gatehouse", "username": BOT},
                "text": card_text,
            },
        }))
        .await;

    assert_eq!(text.text, "deny");
    assert!(text.is_direct);
    assert_eq!(text.reply_to, Some(dm_card));
    let replied_to = view().id;
    assert_eq!(
        t.interpret(&text, Some(&replied_to)),
        TextAction::Resolve {
            target: view().id,
            decision: ApprovalDecision::Deny
        }
    );
    t.stop().await;
}

#[tokio::test]
async fn reports_approve_commands_addressed_to_this_bot_in_a_topic() {
    let mut t = Delivered::new().await;

    let text = t
        .say(json!({
            "chat": {"id": FORUM, "type": "supergroup", "title": "ops", "is_forum": true},
            "from": {"id": APPROVER, "is_bot": false, "first_name": "Alice"},
            "message_thread_id": 42, "is_topic_message": true,
            "text": format!("/approve@{BOT} 0f3c9a1e allow-once"),
        }))
        .await;

    assert!(!text.is_direct);
    assert_eq!(text.message.chat_id, FORUM.to_string());
    assert_eq!(text.message.thread_id.as_deref(), Some("42"));
    assert_eq!(
        t.interpret(&text, None),
        TextAction::Resolve {
            target: "0f3c9a1e".into(),
            decision: ApprovalDecision::AllowOnce
        }
    );
    t.stop().await;
}

#[tokio::test]
async fn edits_every_copy_into_a_receipt_and_clears_the_keyboards() {
    let t = Delivered::new().await;
    let receipt = receipt(ApprovalDecision::AllowOnce, "alice <ops>");

    t.settle(receipt.clone(), false).await;

    let edits = calls(&t.fake, "editMessageText");
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
    let again = t.again(&receipt, false).await;
    assert_eq!(again, vec![], "an edit that changes nothing counts as done");
    t.stop().await;
}

#[tokio::test]
async fn deletes_every_copy_when_cleanup_is_on() {
    let t = Delivered::new().await;
    let receipt = receipt(ApprovalDecision::Deny, "alice");

    t.settle(receipt.clone(), true).await;

    let mut deleted: Vec<(String, String)> = calls(&t.fake, "deleteMessage")
        .into_iter()
        .map(|c| {
            (
                c.body["chat_id"].to_string(),
                c.body["message_id"].to_string(),
            )
        })
        .collect();
    deleted.sort();
    let mut expected: Vec<(String, String)> = t
        .copies
        .iter()
        .map(|c| (c.chat_id.clone(), c.message_id.clone()))
        .collect();
    expected.sort();
    assert_eq!(deleted, expected);
    let again = t.again(&receipt, true).await;
    assert_eq!(again, vec![], "deleting a deleted message counts as done");
    t.stop().await;
}
