use std::collections::HashMap;
use std::sync::Arc;

use gatehouse_chat::TurnSource;
use gatehouse_chat::commands::{
    PressRefusal, TextAction, TextContext, check_press, interpret_text,
};
use gatehouse_chat::config::{
    ChatApprovalSettings, ChatApprovals, NativeClientSettings, NativeTarget,
};
use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::dispatch::{Dispatcher, Settlement};
use gatehouse_chat::grammar::start::Conversation;
use gatehouse_chat::journal::MemoryJournal;
use gatehouse_chat::plan::{RequestMeta, plan_delivery};
use gatehouse_chat::render::{ResolveOutcome, render_receipt};
use gatehouse_chat::token::{MemoryTokenStore, TokenClaim, TokenRegistry};
use gatehouse_chat::{Channel, MessageLocator};
use gatehouse_chat::{Platform, Platforms};
use gatehouse_fakes::FakeHandle;
use gatehouse_policy::ApprovalDecision;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{control, next_press, next_text, socket_mode, view};

const THREAD: &str = "1795243000.000100";

fn approvals() -> ChatApprovals {
    ChatApprovalSettings {
        native: vec![NativeClientSettings {
            channel: "slack".into(),
            approvers: vec!["U0ALICE".into()],
            target: NativeTarget::Both,
            ..NativeClientSettings::default()
        }],
        ..ChatApprovalSettings::default()
    }
    .validate(&Platforms::new([&gatehouse_slack::Slack as &dyn Platform]))
    .unwrap()
}

/// The token on the button for `decision` in the card posted to `chat`.
fn token_in(fake: &FakeHandle, chat: &str, decision: &str) -> String {
    let post = fake
        .calls_of("chat.postMessage")
        .into_iter()
        .find(|call| {
            call.body["channel"]
                .as_str()
                .is_some_and(|c| c.starts_with(chat))
        })
        .unwrap();
    let actions = post.body["blocks"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    actions["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|button| button["action_id"] == decision)
        .map(|button| button["value"].as_str().unwrap().to_owned())
        .unwrap()
}

fn press(user: &str, chat: &str, ts: &str, token: &str) -> Value {
    json!({"type": "interactive", "payload": {"type": "block_actions", "user": {"id": user},
        "container": {"type": "message", "message_ts": ts, "channel_id": chat},
        "actions": [{"type": "button", "action_id": "allow-once", "value": token}]}})
}

#[tokio::test]
async fn decides_a_card_delivered_to_a_dm_and_the_origin_thread() {
    let (fake, slack, mut rx, _task) = socket_mode(|_| {}).await;
    let channel: Arc<dyn Channel> = slack.clone();
    let journal = Arc::new(MemoryJournal::default());
    let now = view(true).expires_at_ms - 60_000;
    let dispatcher = Arc::new(Dispatcher::new(
        HashMap::from([("slack".to_owned(), channel)]),
        Deliverer::new(RetryPolicy::default()),
        TokenRegistry::new(MemoryTokenStore::default()),
        journal.clone(),
        Arc::new(move || now),
    ));
    dispatcher.start();
    let approvals = approvals();
    let origin = TurnSource {
        channel: "slack".into(),
        account_id: None,
        to: "C0OPS".into(),
        thread_id: Some(THREAD.into()),
        dm_user_id: None,
    };
    let meta = RequestMeta {
        agent_id: Some("main"),
        session_key: None,
        turn_source: Some(&origin),
    };
    let plan = plan_delivery(meta, &approvals);
    dispatcher.request(view(true), &plan);
    let delivered = wait_until(|| {
        let delivered = journal.delivered();
        (delivered.len() == plan.messages.len()).then_some(delivered)
    })
    .await;
    assert_eq!(journal.count("send-failed"), 0);
    let locators: Vec<MessageLocator> = delivered.into_iter().map(|(_, l)| l).collect();
    let dm = locators
        .iter()
        .find(|locator| locator.chat_id.starts_with('D'))
        .unwrap();
    let thread = locators
        .iter()
        .find(|locator| locator.chat_id == "C0OPS")
        .unwrap();
    assert_eq!(thread.thread_id.as_deref(), Some(THREAD));
    let thread_post = fake
        .calls_of("chat.postMessage")
        .into_iter()
        .find(|call| call.body["channel"] == "C0OPS")
        .unwrap();
    assert_eq!(thread_post.body["thread_ts"], THREAD);

    // A non-approver's press is refused privately; the card keeps its buttons.
    let once_in_dm = token_in(&fake, "D", "allow-once");
    control(
        &fake,
        "/_fake/inject",
        press("U0BOB", &dm.chat_id, &dm.message_id, &once_in_dm),
    )
    .await;
    let bob = next_press(&mut rx).await;
    let refusal = check_press(&bob, &dispatcher.tokens, &approvals, now).unwrap_err();
    assert_eq!(refusal, PressRefusal::NotApprover);
    slack
        .answer(&bob.interaction, refusal.text())
        .await
        .unwrap();
    assert_eq!(fake.calls_of("chat.postEphemeral")[0].body["user"], "U0BOB");

    // The DM's token pressed on the thread's card is not valid there.
    control(
        &fake,
        "/_fake/inject",
        press("U0ALICE", "C0OPS", &thread.message_id, &once_in_dm),
    )
    .await;
    let misplaced = next_press(&mut rx).await;
    assert!(matches!(
        check_press(&misplaced, &dispatcher.tokens, &approvals, now),
        Err(PressRefusal::Token(_))
    ));

    // The approver's press in the DM resolves; every copy becomes a receipt.
    control(
        &fake,
        "/_fake/inject",
        press("U0ALICE", &dm.chat_id, &dm.message_id, &once_in_dm),
    )
    .await;
    let alice = next_press(&mut rx).await;
    assert_eq!(
        check_press(&alice, &dispatcher.tokens, &approvals, now),
        Ok(TokenClaim {
            approval_id: view(true).id,
            decision: ApprovalDecision::AllowOnce
        })
    );
    let receipt = render_receipt(
        &view(true),
        &ResolveOutcome {
            decision: ApprovalDecision::AllowOnce,
            decided_by: "alice".into(),
        },
        1200,
    );
    dispatcher.settle(
        &view(true).id,
        Settlement {
            card: receipt,
            delete_on: Default::default(),
        },
    );
    wait_until(|| (journal.count("finished") == locators.len()).then_some(())).await;
    assert_eq!(journal.count("finish-failed"), 0);
    let updates = fake.calls_of("chat.update");
    assert_eq!(updates.len(), locators.len());
    for update in updates {
        let blocks = update.body["blocks"].as_array().unwrap();
        assert!(blocks.iter().all(|block| block["type"] != "actions"));
    }
}

/// Polls `probe` until it answers, for at most a few seconds.
async fn wait_until<T>(mut probe: impl FnMut() -> Option<T>) -> T {
    for _ in 0..200 {
        if let Some(found) = probe() {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("timed out")
}

#[tokio::test]
async fn turns_typed_and_slash_approve_into_the_same_decision() {
    let (fake, _slack, mut rx, _task) = socket_mode(|_| {}).await;
    let approvals = approvals();
    control(
        &fake,
        "/_fake/inject",
        json!({"type": "events_api", "payload": {"event": {
        "type": "message", "channel": "C0OPS", "channel_type": "channel", "user": "U0ALICE",
        "text": "approve 0f3c9a1e deny"}}}),
    )
    .await;
    control(&fake, "/_fake/inject", json!({"type": "slash_commands", "payload": {
        "command": "/approve", "text": "0f3c9a1e deny", "user_id": "U0ALICE", "channel_id": "C0OPS"}}))
    .await;
    let expected = TextAction::Resolve {
        target: "0f3c9a1e".into(),
        decision: ApprovalDecision::Deny,
    };
    for _ in 0..2 {
        let text = next_text(&mut rx).await;
        let ctx = TextContext {
            sender: &text.sender,
            bot_username: None,
            replied_to_approval: None,
            conversation: Conversation::Shared,
        };
        assert_eq!(
            interpret_text(&text.text, ctx, &approvals),
            expected,
            "{}",
            text.text
        );
    }
}
