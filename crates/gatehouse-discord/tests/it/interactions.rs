use std::collections::HashMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use gatehouse_chat::commands::{
    ElevatedRequest, PressRefusal, TextAction, TextContext, check_press, interpret_text,
};
use gatehouse_chat::config::{
    ChatApprovalSettings, ChatApprovals, NativeClientSettings, NativeEnabled, NativeTarget,
};
use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::dispatch::{Dispatcher, Settlement};
use gatehouse_chat::grammar::start::Conversation;
use gatehouse_chat::journal::MemoryJournal;
use gatehouse_chat::plan::{RequestMeta, plan_delivery};
use gatehouse_chat::render::{ApprovalView, ResolveOutcome, render_receipt};
use gatehouse_chat::token::{MemoryTokenStore, TokenRegistry};
use gatehouse_chat::{ButtonPress, Channel, ChatError, Inbound, InboundText, MessageLocator};
use gatehouse_chat::{Platform, Platforms};
use gatehouse_discord::DiscordChannel;
use gatehouse_fakes::FakeHandle;
use gatehouse_fakes::discord::{APP_ID, BOT_ID, GUILD_ID};
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::elevated::ElevatedLevel;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::{APPROVER, CHANNEL_ID, STRANGER, fake, inject, next, running, wait_for_calls};

/// Discord's deadline for the first response to an interaction.
const ACK_DEADLINE_MS: u64 = 3000;

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn approvals() -> ChatApprovals {
    ChatApprovalSettings {
        native: vec![NativeClientSettings {
            channel: "discord".into(),
            enabled: NativeEnabled::On,
            approvers: vec![format!("<@{APPROVER}>")],
            target: NativeTarget::Dm,
            ..NativeClientSettings::default()
        }],
        ..ChatApprovalSettings::default()
    }
    .validate(&Platforms::new([
        &gatehouse_discord::Discord as &dyn Platform
    ]))
    .unwrap()
}

fn view() -> ApprovalView {
    ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "make deploy".into(),
        cwd: Some("/srv/app".into()),
        agent_id: Some("main".into()),
        host: None,
        resolved_path: None,
        env_keys: Vec::new(),
        expires_at_ms: now_ms() + 300_000,
        allow_always_offered: false,
        chain: None,
        tool: None,
    }
}

/// A running channel, the real chat core around it, and one card delivered to the approver's DM.
struct Approval {
    fake: FakeHandle,
    discord: Arc<DiscordChannel>,
    events: mpsc::Receiver<Inbound>,
    core: Arc<Dispatcher<MemoryTokenStore>>,
    journal: Arc<MemoryJournal>,
    approvals: ChatApprovals,
    card: MessageLocator,
}

async fn delivered_approval() -> Approval {
    let fake = fake().await;
    let (discord, events) = running(&fake).await;
    let approvals = approvals();
    let journal = Arc::new(MemoryJournal::default());
    let core = Arc::new(Dispatcher::new(
        HashMap::from([(
            "discord".to_owned(),
            Arc::clone(&discord) as Arc<dyn Channel>,
        )]),
        Deliverer::new(RetryPolicy::default()),
        TokenRegistry::in_memory(),
        journal.clone(),
        Arc::new(now_ms),
    ));
    core.start();
    let meta = RequestMeta {
        agent_id: Some("main"),
        ..RequestMeta::default()
    };
    core.request(view(), &plan_delivery(meta, &approvals));
    wait_for_calls(&fake, "createMessage", 1).await;
    let card = eventually(|| journal.delivered().pop().map(|(_, locator)| locator)).await;
    assert_eq!(journal.count("send-failed"), 0);
    Approval {
        fake,
        discord,
        events,
        core,
        journal,
        approvals,
        card,
    }
}

impl Approval {
    /// The `custom_id` of the card's button for `label`, as Discord stored it.
    fn token(&self, label: &str) -> String {
        let sent = &self.fake.calls_of("createMessage")[0];
        let buttons = sent.body["components"][0]["components"].as_array().unwrap();
        let button = buttons.iter().find(|b| b["label"] == label).unwrap();
        button["custom_id"].as_str().unwrap().to_owned()
    }

    /// Injects a click and returns the press the adapter reported, plus the injection time.
    async fn press(&mut self, user: u64, custom_id: &str) -> (ButtonPress, u64) {
        let injected_at = now_ms();
        inject(
            &self.fake,
            "INTERACTION_CREATE",
            json!({"type": 3, "channel_id": self.card.chat_id, "user": {"id": user.to_string()},
                "message": {"id": self.card.message_id}, "data": {"custom_id": custom_id}}),
        )
        .await;
        let Inbound::Press(press) = next(&mut self.events).await else {
            panic!("expected a press")
        };
        (press, injected_at)
    }

    /// Presses as `user`, lets the core check the press at `now_ms`, and answers the refusal
    /// privately through the core's deliverer, as the gateway does.
    async fn refused_press(&mut self, user: u64, custom_id: &str, now_ms: u64) -> PressRefusal {
        let (press, _) = self.press(user, custom_id).await;
        let refusal = check_press(&press, &self.core.tokens, &self.approvals, now_ms).unwrap_err();
        let discord = self.discord.as_ref();
        self.core
            .deliverer
            .answer(discord, &press.interaction, refusal.text())
            .await
            .unwrap();
        refusal
    }

    /// Has the core replace (or, with `cleanup`, delete) the card after a decision.
    async fn finish(&self, decision: ApprovalDecision, decided_by: &str, cleanup: bool) {
        let outcome = ResolveOutcome {
            decision,
            decided_by: decided_by.to_owned(),
        };
        let settlement = Settlement {
            card: render_receipt(&view(), &outcome, 1200),
            delete_on: if cleanup {
                ["discord".to_owned()].into()
            } else {
                Default::default()
            },
        };
        self.core.settle(&view().id, settlement);
        eventually(|| (self.journal.count("finished") == 1).then_some(())).await;
        assert_eq!(self.journal.count("finish-failed"), 0);
    }
}

/// Polls `probe` until it answers, for at most a few seconds.
async fn eventually<T>(mut probe: impl FnMut() -> Option<T>) -> T {
    for _ in 0..200 {
        if let Some(found) = probe() {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("timed out")
}

/// Injects an approver's slash command in the guild channel.
async fn slash_command(fake: &FakeHandle, name: &str, options: Value) -> Value {
    inject(
        fake,
        "INTERACTION_CREATE",
        json!({"type": 2, "channel_id": CHANNEL_ID.to_string(), "user": {"id": APPROVER.to_string()},
            "data": {"name": name, "type": 1, "options": options}}),
    )
    .await
}

/// What the chat core makes of a reported text, as the gateway will ask it.
fn core_reading(text: &InboundText) -> TextAction {
    let context = TextContext {
        sender: &text.sender,
        bot_username: None,
        replied_to_approval: None,
        conversation: Conversation::Shared,
    };
    interpret_text(&text.text, context, &approvals())
}

fn ephemeral_follow_ups(fake: &FakeHandle) -> Vec<Value> {
    fake.calls_of("executeWebhook")
        .into_iter()
        .map(|call| json!({"content": call.body["content"], "flags": call.body["flags"]}))
        .collect()
}

#[tokio::test]
async fn acknowledges_a_press_in_time_and_reports_it_with_its_card() {
    let mut approval = delivered_approval().await;
    let token = approval.token("Deny");
    let (press, injected_at) = approval.press(APPROVER, &token).await;

    assert_eq!(press.token, token);
    assert_eq!(
        press.message, approval.card,
        "the press names the delivered card"
    );
    assert_eq!(press.sender.id, APPROVER.to_string());
    let ack = &wait_for_calls(&approval.fake, "createInteractionResponse", 1).await[0];
    assert_eq!(
        ack.body,
        json!({"type": 6, "data": null}),
        "deferred update: the card stays as it is"
    );
    assert!(ack.at_ms - injected_at < ACK_DEADLINE_MS);
    assert!(ack.path.starts_with("/interactions/"));
}

#[tokio::test]
async fn resolves_an_approvers_press_and_edits_the_card_without_buttons() {
    let mut approval = delivered_approval().await;
    let (press, _) = approval.press(APPROVER, &approval.token("Deny")).await;
    let claim = check_press(&press, &approval.core.tokens, &approval.approvals, now_ms()).unwrap();
    assert_eq!(claim.decision, ApprovalDecision::Deny);

    let decided_by = press.sender.username.clone().unwrap();
    approval.finish(claim.decision, &decided_by, false).await;
    let edit = &wait_for_calls(&approval.fake, "editMessage", 1).await[0];
    assert_eq!(edit.body["components"], json!([]));
    assert_eq!(
        edit.body["embeds"][0]["title"],
        format!("Denied by {decided_by}")
    );
}

#[tokio::test]
async fn deletes_the_card_on_resolve_with_cleanup() {
    let approval = delivered_approval().await;
    approval
        .finish(ApprovalDecision::AllowOnce, "alice", true)
        .await;
    let delete = &wait_for_calls(&approval.fake, "deleteMessage", 1).await[0];
    assert_eq!(
        delete.path,
        format!(
            "/channels/{}/messages/{}",
            approval.card.chat_id, approval.card.message_id
        )
    );
    assert!(approval.fake.calls_of("editMessage").is_empty());
}

#[tokio::test]
async fn registers_commands_and_turns_approve_into_the_text_path() {
    let fake = fake().await;
    let (discord, mut events) = running(&fake).await;
    let registered = &wait_for_calls(&fake, "bulkOverwriteGuildCommands", 1).await[0];
    assert_eq!(
        registered.path,
        format!("/applications/{APP_ID}/guilds/{GUILD_ID}/commands")
    );
    let names: Vec<&Value> = registered
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["name"])
        .collect();
    assert_eq!(
        names,
        [
            &json!("approve"),
            &json!("elevated"),
            &json!("start"),
            &json!("help")
        ]
    );

    let injected_at = now_ms();
    let options = json!([
        {"name": "id", "type": 3, "value": "0f3c9a1e"},
        {"name": "decision", "type": 3, "value": "allow-once"}]);
    let injected = slash_command(&fake, "approve", options).await;
    let Inbound::Text(text) = next(&mut events).await else {
        panic!("expected text")
    };
    assert_eq!(text.text, "/approve 0f3c9a1e allow-once");
    assert!(!text.is_direct);
    assert_eq!(text.message.chat_id, CHANNEL_ID.to_string());
    let ack = &wait_for_calls(&fake, "createInteractionResponse", 1).await[0];
    assert_eq!(
        ack.body,
        json!({"type": 5, "data": {"flags": 64, "attachments": []}}),
        "deferred, ephemeral"
    );
    assert!(ack.at_ms - injected_at < ACK_DEADLINE_MS);

    assert_eq!(
        core_reading(&text),
        TextAction::Resolve {
            target: "0f3c9a1e".into(),
            decision: ApprovalDecision::AllowOnce
        }
    );
    discord
        .answer(text.interaction.as_ref().unwrap(), "Allowed once 0f3c9a1e.")
        .await
        .unwrap();
    let reply = &wait_for_calls(&fake, "editWebhookMessage", 1).await[0];
    let token = injected["d"]["token"].as_str().unwrap();
    assert_eq!(
        reply.path,
        format!("/webhooks/{APP_ID}/{token}/messages/@original")
    );
    assert_eq!(reply.body["content"], "Allowed once 0f3c9a1e.");
}

#[tokio::test]
async fn reads_a_text_approve_that_mentions_the_bot_without_the_content_intent() {
    let fake = fake().await;
    let (_discord, mut events) = running(&fake).await;
    inject(
        &fake,
        "MESSAGE_CREATE",
        json!({"channel_id": CHANNEL_ID.to_string(), "author": {"id": STRANGER.to_string()},
            "content": format!("<@{BOT_ID}> /approve 0f3c9a1e deny")}),
    )
    .await;
    let Inbound::Text(text) = next(&mut events).await else {
        panic!("expected text")
    };
    assert_eq!(text.text, "/approve 0f3c9a1e deny");
    assert_eq!(text.interaction, None);
    assert_eq!(
        core_reading(&text),
        TextAction::Reply("You are not an approver for exec approvals on this channel.".into())
    );
}

#[tokio::test]
async fn answers_a_command_it_does_not_handle_itself() {
    let fake = fake().await;
    let (_discord, mut events) = running(&fake).await;
    slash_command(&fake, "ban", json!([])).await;
    let reply = &wait_for_calls(&fake, "createInteractionResponse", 1).await[0];
    assert_eq!(reply.body["type"], 4);
    assert_eq!(reply.body["data"]["flags"], 64);
    assert_eq!(
        reply.body["data"]["content"],
        "Gatehouse does not handle this command."
    );
    let nothing = tokio::time::timeout(std::time::Duration::from_millis(300), events.recv()).await;
    assert!(nothing.is_err(), "reported: {nothing:?}");
}

#[tokio::test]
async fn answers_a_non_approver_privately_and_keeps_the_buttons() {
    let mut approval = delivered_approval().await;
    let token = approval.token("Allow once");
    let refusal = approval.refused_press(STRANGER, &token, now_ms()).await;

    assert_eq!(refusal, PressRefusal::NotApprover);
    assert_eq!(
        ephemeral_follow_ups(&approval.fake),
        vec![json!({"content": "Only approvers can decide.", "flags": 64})]
    );
    let follow_up = &approval.fake.calls_of("executeWebhook")[0];
    assert!(follow_up.path.starts_with(&format!("/webhooks/{APP_ID}/")));
    assert_eq!(follow_up.body["allowed_mentions"]["parse"], json!([]));
    assert!(approval.fake.calls_of("editMessage").is_empty());
}

#[tokio::test]
async fn answers_a_forged_button_privately_as_not_valid() {
    let mut approval = delivered_approval().await;
    let forged = "g1.AAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA";
    let refusal = approval.refused_press(APPROVER, forged, now_ms()).await;

    assert_eq!(refusal, PressRefusal::Token(ChatError::TokenUnknown));
    assert_eq!(
        ephemeral_follow_ups(&approval.fake),
        vec![json!({"content": "This button is not valid here.", "flags": 64})]
    );
}

#[tokio::test]
async fn answers_a_stale_button_privately_as_no_longer_pending() {
    let mut approval = delivered_approval().await;
    let token = approval.token("Allow once");
    let after_expiry = now_ms() + 400_000;
    let refusal = approval.refused_press(APPROVER, &token, after_expiry).await;

    assert!(matches!(
        refusal,
        PressRefusal::Token(ChatError::TokenExpired { .. })
    ));
    let expected = "This approval has expired and is no longer pending.";
    assert_eq!(
        ephemeral_follow_ups(&approval.fake),
        vec![json!({"content": expected, "flags": 64})]
    );
}

#[tokio::test]
async fn turns_elevated_into_the_text_path_with_a_private_reply() {
    let fake = fake().await;
    let (discord, mut events) = running(&fake).await;
    let options = json!([{"name": "level", "type": 3, "value": "ask"}]);
    slash_command(&fake, "elevated", options).await;
    let Inbound::Text(text) = next(&mut events).await else {
        panic!("expected text")
    };
    assert_eq!(text.text, "/elevated ask");
    assert_eq!(
        core_reading(&text),
        TextAction::Elevated(ElevatedRequest::Set(ElevatedLevel::Ask))
    );
    let interaction = text.interaction.as_ref().unwrap();
    discord
        .answer(interaction, "Elevated mode is now ask.")
        .await
        .unwrap();
    let reply = &wait_for_calls(&fake, "editWebhookMessage", 1).await[0];
    assert_eq!(reply.body["content"], "Elevated mode is now ask.");
}
