use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use gatehouse_chat::Platforms;
use gatehouse_chat::channel::Channel;
use gatehouse_chat::config::{ChatApprovalSettings, NativeClientSettings, NativeTarget};
use gatehouse_chat::delivery::{Deliverer, DeliverySettings, RetryPolicy};
use gatehouse_chat::dispatch::{
    Channels, Dispatcher, GRACE, Resumed, ResumedApproval, ResumedPhase, Settlement,
};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::journal::{
    EntryKind, Journal, JournalEntry, JournalError, Recorded, Transition,
};
use gatehouse_chat::plan::{RequestMeta, plan_delivery};
use gatehouse_chat::render::{ApprovalView, CardState, ResolveOutcome, render_receipt};
use gatehouse_chat::route::{MessageLocator, Route, SendKey, TurnSource};
use gatehouse_chat::throttle::{Pacing, Window};
use gatehouse_chat::token::{MemoryTokenStore, TokenClaim, TokenRegistry};
use gatehouse_policy::ApprovalDecision;
use pretty_assertions::assert_eq;

use crate::platform::ScriptedPlatform;

fn view_with(id: &str) -> ApprovalView {
    ApprovalView {
        id: id.into(),
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

fn view() -> ApprovalView {
    view_with("0f3c9a1e-7b2d-4c1a-9e55-1234567890ab")
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

/// One journalled step: the message's key, what happened, and the delivered locator.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Step {
    key: SendKey,
    what: String,
    locator: Option<MessageLocator>,
}

/// A journal that keeps every step in memory, in order, with the calls of `platform` made so
/// far, so a test sees what was recorded before and after each call.
#[derive(Default)]
struct RecordingJournal {
    planned: Mutex<Vec<JournalEntry>>,
    steps: Mutex<Vec<Step>>,
    platform: Mutex<Option<Arc<ScriptedPlatform>>>,
}

impl RecordingJournal {
    fn watching(platform: &Arc<ScriptedPlatform>) -> Arc<Self> {
        let journal = Arc::new(Self::default());
        *journal.platform.lock().unwrap() = Some(Arc::clone(platform));
        journal
    }

    fn steps(&self) -> Vec<Step> {
        self.steps.lock().unwrap().clone()
    }

    fn planned(&self) -> Vec<JournalEntry> {
        self.planned.lock().unwrap().clone()
    }

    fn entry(&self, key: &SendKey) -> JournalEntry {
        self.planned()
            .into_iter()
            .find(|entry| entry.key == *key)
            .unwrap()
    }

    fn delivered(&self) -> Vec<(JournalEntry, MessageLocator)> {
        self.steps()
            .into_iter()
            .filter_map(|step| step.locator.map(|locator| (self.entry(&step.key), locator)))
            .collect()
    }

    fn count(&self, what: &str) -> usize {
        self.steps()
            .iter()
            .filter(|s| s.what.starts_with(what))
            .count()
    }

    fn calls_so_far(&self) -> usize {
        self.platform
            .lock()
            .unwrap()
            .as_ref()
            .map_or(0, |p| p.calls().len())
    }
}

#[async_trait]
impl Journal for RecordingJournal {
    async fn plan(&self, entries: &[JournalEntry]) -> Result<(), JournalError> {
        self.planned.lock().unwrap().extend(entries.iter().cloned());
        Ok(())
    }

    async fn record(
        &self,
        key: &SendKey,
        transition: Transition<'_>,
        _at_ms: u64,
    ) -> Result<Recorded, JournalError> {
        let (what, locator) = match transition {
            Transition::Sending { attempt } => (
                format!("sending {attempt} after {}", self.calls_so_far()),
                None,
            ),
            Transition::Delivered { locator, .. } => ("delivered".into(), Some(locator.clone())),
            Transition::SendFailed { error, .. } => (format!("failed {error}"), None),
            Transition::Skipped => ("skipped".into(), None),
            Transition::Lost { reason } => (format!("lost {reason}"), None),
            Transition::Finished => ("finished".into(), None),
            Transition::FinishFailed { error, .. } => (format!("finish failed {error}"), None),
        };
        self.steps.lock().unwrap().push(Step {
            key: key.clone(),
            what,
            locator,
        });
        Ok(Recorded::Applied)
    }
}

fn retry() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_secs(2),
        jitter: 0.0,
        max_retry_after: Duration::from_secs(60),
    }
}

fn settings(pacing: Pacing, digest_after: usize) -> DeliverySettings {
    DeliverySettings {
        pacing,
        retry: retry(),
        digest_after,
    }
}

fn dispatcher_with(
    platform: &Arc<ScriptedPlatform>,
    journal: Arc<RecordingJournal>,
    settings: DeliverySettings,
) -> Arc<Dispatcher<MemoryTokenStore>> {
    let channel: Arc<dyn Channel> = platform.clone();
    let channels: Channels = [("discord".to_owned(), channel)].into();
    let dispatcher = Arc::new(Dispatcher::new(
        channels,
        Deliverer::new(retry()).with_settings("discord", settings),
        TokenRegistry::in_memory(),
        journal,
        Arc::new(|| 1_000),
    ));
    dispatcher.start();
    dispatcher
}

fn start(
    platform: &Arc<ScriptedPlatform>,
) -> (Arc<Dispatcher<MemoryTokenStore>>, Arc<RecordingJournal>) {
    let journal = RecordingJournal::watching(platform);
    let dispatcher = dispatcher_with(
        platform,
        Arc::clone(&journal),
        settings(Pacing::default(), 100),
    );
    (dispatcher, journal)
}

fn dm_config(approvers: &[&str]) -> gatehouse_chat::config::ChatApprovals {
    ChatApprovalSettings {
        native: vec![NativeClientSettings {
            channel: "discord".into(),
            approvers: approvers.iter().map(|a| (*a).to_owned()).collect(),
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

fn receipt(view: &ApprovalView) -> Settlement {
    Settlement {
        card: render_receipt(
            view,
            &ResolveOutcome {
                decision: ApprovalDecision::AllowOnce,
                decided_by: "alice".into(),
            },
            200,
        ),
        delete_on: HashSet::new(),
    }
}

/// Lets every worker run until nothing is due for a while (time is paused: this is instant).
async fn settle_down() {
    tokio::time::sleep(Duration::from_secs(30)).await;
}

#[tokio::test(start_paused = true)]
async fn cards_carry_tokens_bound_to_the_delivered_message() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let (dispatcher, journal) = start(&platform);
    let source = origin();
    let plan = plan_delivery(meta(&source), &dm_config(&["1", "2"]));
    dispatcher.request(view(), &plan);
    settle_down().await;
    let delivered = journal.delivered();
    let kinds: Vec<EntryKind> = delivered.iter().map(|(entry, _)| entry.kind).collect();
    assert_eq!(
        kinds,
        vec![EntryKind::Card, EntryKind::Card, EntryKind::OriginNotice]
    );
    let cards = platform.cards();
    assert_eq!(cards[0].1.buttons.len(), 3);
    assert!(cards[2].1.buttons.is_empty(), "the notice has no buttons");
    let first = &delivered[0].1;
    let token = &cards[0].1.buttons[2].token;
    assert_eq!(
        dispatcher.tokens.verify(token, first, 1),
        Ok(TokenClaim {
            approval_id: view().id,
            decision: ApprovalDecision::Deny
        })
    );
    let second = &delivered[1].1;
    assert_eq!(
        dispatcher.tokens.verify(token, second, 1),
        Err(ChatError::TokenWrongChat {
            approval_id: view().id
        }),
        "a token from approver 1's DM is refused in approver 2's DM"
    );
    assert_eq!(dispatcher.card_approval(first), Some(view().id));
}

#[tokio::test(start_paused = true)]
async fn records_each_intent_before_its_call_and_each_outcome_after() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let (dispatcher, journal) = start(&platform);
    let plan = plan_delivery(meta(&origin()), &dm_config(&["1"]));
    dispatcher.request(view(), &plan);
    settle_down().await;
    assert_eq!(journal.planned().len(), 2, "the card and the origin notice");
    let steps: Vec<String> = journal.steps().into_iter().map(|s| s.what).collect();
    // Each "sending" is recorded before its call: the platform had seen 0, then 1 call.
    assert_eq!(
        steps,
        vec![
            "sending 1 after 0",
            "delivered",
            "sending 1 after 1",
            "delivered"
        ]
    );
    dispatcher.settle(&view().id, receipt(&view()));
    settle_down().await;
    assert_eq!(journal.count("finished"), 2);
}

#[tokio::test(start_paused = true)]
async fn undeliverable_cards_leave_the_exact_approve_command_in_the_origin() {
    let platform = Arc::new(
        ScriptedPlatform::failing_with("discord", vec![])
            .refusing(Route::dm("discord", None, "1"))
            .refusing(Route::dm("discord", None, "2")),
    );
    let (dispatcher, journal) = start(&platform);
    let source = origin();
    let plan = plan_delivery(meta(&source), &dm_config(&["1", "2"]));
    dispatcher.request(view(), &plan);
    settle_down().await;
    let origin_texts: Vec<String> = platform
        .cards()
        .into_iter()
        .filter(|(call, _)| call == "send discord:chat:G1")
        .map(|(_, card)| card.plain_text())
        .collect();
    assert_eq!(origin_texts.len(), 2, "notice, then fallback");
    assert!(origin_texts[1].contains("/approve 0f3c9a1e-7b2d-4c1a-9e55-1234567890ab allow-once"));
    assert!(journal.count("failed discord refused the call") >= 2);
    // The refused cards are still tried while the approval lives, at the longest delay.
    let tries = platform
        .calls()
        .iter()
        .filter(|(call, _)| call == "send discord:user:1")
        .count();
    assert!(tries >= 10, "{tries} tries in 30 s at 2 s apart");
}

#[tokio::test(start_paused = true)]
async fn finish_updates_or_deletes_every_copy() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let (dispatcher, journal) = start(&platform);
    let plan = plan_delivery(meta(&origin()), &dm_config(&["1", "2"]));
    dispatcher.request(view(), &plan);
    settle_down().await;
    dispatcher.settle(&view().id, receipt(&view()));
    settle_down().await;
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
    assert_eq!(journal.count("finished"), 3);

    let second = view_with("1f3c9a1e-7b2d-4c1a-9e55-1234567890ab");
    dispatcher.request(second.clone(), &plan);
    settle_down().await;
    dispatcher.settle(
        &second.id,
        Settlement {
            delete_on: ["discord".to_owned()].into(),
            ..receipt(&second)
        },
    );
    settle_down().await;
    let deletes = platform
        .calls()
        .into_iter()
        .filter(|(call, _)| call.starts_with("delete"))
        .count();
    assert_eq!(deletes, 3);
    assert_eq!(dispatcher.in_memory(), (0, 0), "nothing left to do");
}

#[tokio::test(start_paused = true)]
async fn retries_until_delivered_and_never_sends_once_settled() {
    let transient = ChatError::Transient {
        channel: "discord".into(),
        reason: "502".into(),
    };
    let platform = Arc::new(ScriptedPlatform::failing_with(
        "discord",
        vec![transient.clone(); 6],
    ));
    let (dispatcher, journal) = start(&platform);
    let plan = plan_delivery(RequestMeta::default(), &dm_config(&["1"]));
    dispatcher.request(view(), &plan);
    settle_down().await;
    // Six failures (0.1, 0.2, 0.4, 0.8, 1.6 then 2 s apart), then delivered: more tries
    // than any reply would get.
    assert_eq!(journal.count("failed"), 6);
    assert_eq!(journal.count("delivered"), 1);

    let platform = Arc::new(ScriptedPlatform::failing_with(
        "discord",
        vec![transient; 2],
    ));
    let (dispatcher, journal) = start(&platform);
    dispatcher.request(view(), &plan);
    tokio::time::sleep(Duration::from_millis(150)).await;
    dispatcher.settle(&view().id, receipt(&view()));
    // Dropped at once, not at its next try (then 0.2 s away): until it is, the status would
    // still list it as undelivered.
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(journal.count("skipped"), 1);
    settle_down().await;
    assert_eq!(
        platform.calls().len(),
        2,
        "no send after the approval settled"
    );
    assert_eq!(journal.count("skipped"), 1);
}

#[tokio::test(start_paused = true)]
async fn a_send_whose_answer_was_lost_is_repeated_under_its_key() {
    let plan = plan_delivery(RequestMeta::default(), &dm_config(&["1"]));
    let sends = |platform: &ScriptedPlatform| {
        platform
            .cards()
            .into_iter()
            .filter(|(call, _)| call.starts_with("send"))
            .count()
    };
    // Discord keeps the key: the retry finds the message the lost answer was about.
    let platform = Arc::new(
        ScriptedPlatform::failing_with("discord", vec![])
            .idempotent()
            .losing_answers(1),
    );
    let (dispatcher, journal) = start(&platform);
    dispatcher.request(view(), &plan);
    settle_down().await;
    assert_eq!(sends(&platform), 1, "one message");
    assert_eq!(journal.delivered()[0].1.message_id, "1");
    // Elsewhere the retry posts a second copy: the documented lost-answer duplicate, whose
    // buttons carry the same tokens but are bound to the copy that answered.
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]).losing_answers(1));
    let (dispatcher, journal) = start(&platform);
    dispatcher.request(view(), &plan);
    settle_down().await;
    assert_eq!(sends(&platform), 2);
    let cards = platform.cards();
    assert_eq!(cards[0].1.buttons, cards[1].1.buttons);
    let delivered = &journal.delivered()[0].1;
    assert_eq!(delivered.message_id, "2");
    let token = &cards[0].1.buttons[0].token;
    let mut orphan = delivered.clone();
    orphan.message_id = "1".into();
    assert!(dispatcher.tokens.verify(token, delivered, 1).is_ok());
    assert!(dispatcher.tokens.verify(token, &orphan, 1).is_err());
}

#[tokio::test(start_paused = true)]
async fn a_lost_answer_is_looked_up_under_its_key_and_edited_even_when_the_approval_settles_first()
{
    let plan = plan_delivery(RequestMeta::default(), &dm_config(&["1"]));
    let platform = Arc::new(
        ScriptedPlatform::failing_with("discord", vec![])
            .idempotent()
            .losing_answers(1),
    );
    let (dispatcher, journal) = start(&platform);
    let view = view();
    dispatcher.request(view.clone(), &plan);
    // Decided before the retry: the message the lost answer was about exists, so the retry
    // under its key finds it, and it is edited rather than left with live buttons.
    tokio::time::sleep(Duration::from_millis(10)).await;
    dispatcher.settle(&view.id, receipt(&view));
    settle_down().await;
    let calls: Vec<String> = platform.calls().into_iter().map(|(call, _)| call).collect();
    assert_eq!(
        calls,
        [
            "send discord:user:1",
            "send discord:user:1 (same key)",
            "update 1"
        ],
        "the lost send, its lookup under the same key, the final edit"
    );
    let cards = platform.cards();
    assert_eq!(journal.delivered()[0].1.message_id, "1", "one message");
    let last = cards.last().unwrap();
    assert!(last.1.buttons.is_empty(), "no live buttons left: {cards:?}");
    assert_eq!(journal.count("skipped"), 0);
    assert_eq!(journal.count("finished"), 1);
}

#[tokio::test(start_paused = true)]
async fn edits_of_settled_cards_go_ahead_of_cards_still_waiting() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let journal = RecordingJournal::watching(&platform);
    let pacing = Pacing {
        chat: Some(Window::per_second(1)),
        ..Pacing::default()
    };
    let dispatcher = dispatcher_with(&platform, Arc::clone(&journal), settings(pacing, 100));
    let plan = plan_delivery(RequestMeta::default(), &dm_config(&["1"]));
    let views: Vec<ApprovalView> = (0..4)
        .map(|i| view_with(&format!("{i}f3c9a1e-7b2d-4c1a-9e55-1234567890ab")))
        .collect();
    for view in &views {
        dispatcher.request(view.clone(), &plan);
    }
    // The first card goes at once; settle it while three more wait a second apart.
    tokio::time::sleep(Duration::from_millis(500)).await;
    dispatcher.settle(&views[0].id, receipt(&views[0]));
    settle_down().await;
    let calls: Vec<String> = platform.calls().into_iter().map(|(c, _)| c).collect();
    assert_eq!(calls[0], "send discord:user:1");
    assert_eq!(calls[1], "update 1", "{calls:?}");
    let times: Vec<Duration> = platform.calls().into_iter().map(|(_, t)| t).collect();
    for pair in times.windows(2) {
        assert!(pair[1] - pair[0] >= Duration::from_secs(1), "{times:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_burst_in_one_chat_becomes_one_digest_kept_current_until_it_drains() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let journal = RecordingJournal::watching(&platform);
    let pacing = Pacing {
        chat: Some(Window::per_second(1)),
        ..Pacing::default()
    };
    let dispatcher = dispatcher_with(&platform, Arc::clone(&journal), settings(pacing, 4));
    let plan = plan_delivery(RequestMeta::default(), &dm_config(&["1"]));
    let views: Vec<ApprovalView> = (0..12)
        .map(|i| view_with(&format!("{i:x}f3c9a1e-7b2d-4c1a-9e55-1234567890ab")))
        .collect();
    dispatcher.request(views[0].clone(), &plan);
    tokio::time::sleep(Duration::from_millis(100)).await;
    for view in &views[1..] {
        dispatcher.request(view.clone(), &plan);
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let sent: Vec<String> = platform
        .cards()
        .into_iter()
        .filter(|(call, _)| call.starts_with("send"))
        .map(|(_, card)| card.title)
        .collect();
    assert_eq!(sent.len(), 2, "one card, then the digest: {sent:?}");
    assert_eq!(sent[1], "11 approvals waiting");
    assert!(dispatcher.queues()[0].digest);
    // Decide all but two in the Control UI: the digest follows, then closes, and the last
    // two go out as cards; no card of a decided approval is ever sent.
    for view in &views[..10] {
        dispatcher.settle(&view.id, receipt(view));
    }
    settle_down().await;
    let cards = platform.cards();
    let digest_edits: Vec<&str> = cards
        .iter()
        .filter(|(call, card)| call == "update 2" && card.buttons.is_empty())
        .map(|(_, card)| card.title.as_str())
        .collect();
    assert!(
        digest_edits.last().unwrap().starts_with("Caught up"),
        "{digest_edits:?}"
    );
    let card_ids: Vec<String> = cards
        .iter()
        .filter(|(call, card)| call.starts_with("send") && !card.buttons.is_empty())
        .map(|(_, card)| card.plain_text())
        .collect();
    assert_eq!(card_ids.len(), 3, "the first card and the last two");
    assert!(card_ids[1].contains(&views[10].id) && card_ids[2].contains(&views[11].id));
    assert_eq!(journal.count("skipped"), 9);
}

#[tokio::test(start_paused = true)]
async fn resumes_after_a_restart_editing_copies_and_finding_or_reporting_sends_in_flight() {
    let delivered = MessageLocator {
        channel: "discord".into(),
        account_id: None,
        chat_id: "dm-1".into(),
        message_id: "77".into(),
        thread_id: None,
    };
    let settled = ResumedApproval::Settled(receipt(&view()));
    let entry = |user: &str, kind| JournalEntry {
        key: SendKey::random(),
        approval_id: Some(view().id),
        kind,
        route: Route::dm("discord", None, user),
    };
    let open = vec![
        Resumed {
            entry: entry("1", EntryKind::Card),
            attempts: 1,
            phase: ResumedPhase::Delivered(delivered),
            approval: Some(settled.clone()),
        },
        Resumed {
            entry: entry("2", EntryKind::Card),
            attempts: 1,
            phase: ResumedPhase::InFlight,
            approval: Some(settled.clone()),
        },
        Resumed {
            entry: entry("3", EntryKind::Card),
            attempts: 0,
            phase: ResumedPhase::Queued,
            approval: Some(settled.clone()),
        },
        // Tried and failed before the restart: the failure may have been a lost answer.
        Resumed {
            entry: entry("4", EntryKind::Card),
            attempts: 2,
            phase: ResumedPhase::Queued,
            approval: Some(settled),
        },
    ];

    // Discord keeps send keys: the one in flight and the one whose answer may have been lost
    // are sent again under their keys and edited; the one never tried is dropped.
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]).idempotent());
    let (dispatcher, journal) = start(&platform);
    dispatcher.resume(open.clone());
    settle_down().await;
    let mut calls: Vec<String> = platform.calls().into_iter().map(|(c, _)| c).collect();
    calls.sort();
    assert_eq!(
        calls,
        vec![
            "send discord:user:2",
            "send discord:user:4",
            "update 1",
            "update 2",
            "update 77"
        ]
    );
    assert_eq!(journal.count("finished"), 3);
    assert_eq!(journal.count("skipped"), 1);

    // Elsewhere it is reported lost instead of being sent twice.
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let (dispatcher, journal) = start(&platform);
    dispatcher.resume(open);
    settle_down().await;
    let calls: Vec<String> = platform.calls().into_iter().map(|(c, _)| c).collect();
    assert_eq!(calls, vec!["update 77"]);
    assert_eq!(journal.count("lost"), 1);
    assert_eq!(journal.count("skipped"), 2);
}

#[tokio::test(start_paused = true)]
async fn forgets_tokens_and_card_index_a_grace_after_settling() {
    let platform = Arc::new(ScriptedPlatform::failing_with("discord", vec![]));
    let (dispatcher, journal) = start(&platform);
    let plan = plan_delivery(RequestMeta::default(), &dm_config(&["1"]));
    dispatcher.request(view(), &plan);
    settle_down().await;
    let locator = journal.delivered()[0].1.clone();
    let token = platform.cards()[0].1.buttons[0].token.clone();
    dispatcher.settle(&view().id, receipt(&view()));
    settle_down().await;
    assert!(
        dispatcher.tokens.verify(&token, &locator, 1).is_ok(),
        "within the grace"
    );
    tokio::time::sleep(GRACE).await;
    assert_eq!(
        dispatcher.tokens.verify(&token, &locator, 1),
        Err(ChatError::TokenUnknown)
    );
    assert_eq!(dispatcher.card_approval(&locator), None);
    assert_eq!(dispatcher.in_memory(), (0, 0));
}
