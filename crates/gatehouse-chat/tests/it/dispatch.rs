use std::sync::Arc;

use gatehouse_chat::Platforms;
use gatehouse_chat::channel::Channel;
use gatehouse_chat::config::{ChatApprovalSettings, NativeClientSettings, NativeTarget};
use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::dispatch::{Channels, Dispatcher};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::plan::{MessageKind, RequestMeta, plan_delivery};
use gatehouse_chat::render::{ApprovalView, CardState, ResolveOutcome, render_receipt};
use gatehouse_chat::route::{Route, TurnSource};
use gatehouse_chat::token::{MemoryTokenStore, TokenClaim, TokenRegistry};
use gatehouse_policy::ApprovalDecision;
use pretty_assertions::assert_eq;

use crate::platform::ScriptedPlatform;

fn view() -> ApprovalView {
    ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "systemctl restart nginx".into(),
        cwd: Some("/".into()),
        agent_id: Some("main".into()),
        host: None,
        resolved_path: None,
        env_keys: vec![],
        expires_at_ms: 600_000,
        allow_always_offered: true,
        chain: None,
        tool: None,
    }
}

fn origin() -> TurnSource {
    TurnSource {
        channel: "discord".into(),
        account_id: None,
        to: "G1".into(),
        thread_id: None,
        dm_user_id: None,
    }
}

fn dispatcher(platform: Arc<ScriptedPlatform>) -> Dispatcher<MemoryTokenStore> {
    let channel: Arc<dyn Channel> = platform;
    let channels: Channels = [("discord".to_owned(), channel)].into();
    Dispatcher {
        channels,
        deliverer: Deliverer::new(RetryPolicy::default()),
        tokens: TokenRegistry::in_memory(),
        max_command_chars: 200,
    }
}

fn dm_config() -> gatehouse_chat::config::ChatApprovals {
    ChatApprovalSettings {
        native: vec![NativeClientSettings {
            channel: "discord".into(),
            approvers: vec!["1".into(), "2".into()],
            target: NativeTarget::Dm,
            ..NativeClientSettings::default()
        }],
        ..ChatApprovalSettings::default()
    }
    .validate(&Platforms::default())
    .unwrap()
}

fn meta(source: &TurnSource) -> RequestMeta<'_> {
    RequestMeta {
        agent_id: Some("main"),
        session_key: None,
        turn_source: Some(source),
    }
}

#[tokio::test(start_paused = true)]
async fn cards_carry_tokens_bound_to_the_delivered_message() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let dispatcher = dispatcher(platform.clone());
    let source = origin();
    let plan = plan_delivery(meta(&source), &dm_config());
    let outcome = dispatcher.deliver(&plan, &view(), 0).await;
    let kinds: Vec<MessageKind> = outcome.delivered.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        vec![
            MessageKind::Card,
            MessageKind::Card,
            MessageKind::OriginNotice
        ]
    );
    assert!(outcome.failed.is_empty());
    let cards = platform.cards();
    assert_eq!(cards[0].1.buttons.len(), 3);
    assert!(cards[2].1.buttons.is_empty(), "the notice has no buttons");
    let first = &outcome.delivered[0].locator;
    let token = &cards[0].1.buttons[2].token;
    assert_eq!(
        dispatcher.tokens.verify(token, first, 1),
        Ok(TokenClaim {
            approval_id: view().id,
            decision: ApprovalDecision::Deny
        })
    );
    let second = &outcome.delivered[1].locator;
    assert_eq!(
        dispatcher.tokens.verify(token, second, 1),
        Err(ChatError::TokenWrongChat {
            approval_id: view().id
        }),
        "a token from approver 1's DM is refused in approver 2's DM"
    );
}

#[tokio::test(start_paused = true)]
async fn undeliverable_cards_leave_the_exact_approve_command_in_the_origin() {
    let platform = Arc::new(
        ScriptedPlatform::failing_with("discord", vec![])
            .refusing(Route::dm("discord", None, "1"))
            .refusing(Route::dm("discord", None, "2")),
    );
    let dispatcher = dispatcher(platform.clone());
    let source = origin();
    let plan = plan_delivery(meta(&source), &dm_config());
    let outcome = dispatcher.deliver(&plan, &view(), 0).await;
    assert_eq!(outcome.failed.len(), 2);
    let origin_texts: Vec<String> = platform
        .cards()
        .into_iter()
        .filter(|(call, _)| call == "send discord:chat:G1")
        .map(|(_, card)| card.plain_text())
        .collect();
    assert_eq!(origin_texts.len(), 2, "notice, then fallback");
    assert!(origin_texts[1].contains("/approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab allow-once"));
    assert_eq!(dispatcher.deliverer.failures().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn finish_updates_or_deletes_every_copy() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let dispatcher = dispatcher(platform.clone());
    let source = origin();
    let plan = plan_delivery(meta(&source), &dm_config());
    let outcome = dispatcher.deliver(&plan, &view(), 0).await;
    let copies: Vec<_> = outcome
        .delivered
        .iter()
        .map(|d| d.locator.clone())
        .collect();
    let receipt = render_receipt(
        &view(),
        &ResolveOutcome {
            decision: ApprovalDecision::AllowOnce,
            decided_by: "alice".into(),
        },
        200,
    );
    assert!(
        dispatcher
            .finish(&copies, &receipt, |_| false)
            .await
            .is_empty()
    );
    let updates: Vec<_> = platform
        .cards()
        .into_iter()
        .filter(|(call, _)| call.starts_with("update"))
        .collect();
    assert_eq!(updates.len(), 3);
    assert!(
        updates.iter().all(
            |(_, card)| card.buttons.is_empty() && matches!(card.state, CardState::Resolved(_))
        )
    );
    assert!(
        dispatcher
            .finish(&copies, &receipt, |_| true)
            .await
            .is_empty()
    );
    let deletes = platform
        .calls()
        .into_iter()
        .filter(|(call, _)| call.starts_with("delete"))
        .count();
    assert_eq!(deletes, 3);
    let mut stray = copies[0].clone();
    stray.channel = "slack".into();
    let failures = dispatcher.finish(&[stray], &receipt, |_| false).await;
    assert!(matches!(failures[0].1, ChatError::Permanent { .. }));
}
