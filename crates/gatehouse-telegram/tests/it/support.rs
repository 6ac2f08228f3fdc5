use std::sync::Arc;
use std::time::Duration;

use gatehouse_chat::channel::{Channel, Inbound};
use gatehouse_chat::config::{
    ChatApprovalSettings, ChatApprovals, NativeClientSettings, NativeTarget,
};
use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::dispatch::{Channels, Dispatcher};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::journal::{JournalEntry, MemoryJournal};
use gatehouse_chat::plan::DeliveryPlan;
use gatehouse_chat::render::ApprovalView;
use gatehouse_chat::route::{MessageLocator, TurnSource};
use gatehouse_chat::token::{MemoryTokenStore, TokenRegistry};
use gatehouse_chat::{Platform, Platforms};
use gatehouse_fakes::{Call, FakeHandle};
use gatehouse_telegram::{Secret, TelegramChannel, TelegramConfig};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// An approver's user id (and so their private chat's id).
pub(crate) const APPROVER: i64 = 4242;
/// A forum supergroup.
pub(crate) const FORUM: i64 = -1_001_234_567_890;
/// The username the fake gives its bot.
pub(crate) const BOT: &str = "gatehouse_fake_bot";
/// "Now" for every card, so expiry text is fixed.
pub(crate) const NOW_MS: u64 = 0;

pub(crate) async fn fake() -> FakeHandle {
    gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// Long polling against `fake`, with short timeouts so failures surface quickly.
pub(crate) fn config(fake: &FakeHandle) -> TelegramConfig {
    let mut config = TelegramConfig::new(Secret::new("123:TEST-token")).unwrap();
    config.api_url = fake.base_url.parse().unwrap();
    config.poll_timeout = Duration::from_secs(1);
    config.call_timeout = Duration::from_secs(1);
    config
}

pub(crate) async fn connect(fake: &FakeHandle) -> Arc<TelegramChannel> {
    Arc::new(TelegramChannel::connect(config(fake)).await.unwrap())
}

/// POSTs JSON to a control endpoint of the fake and returns its answer.
pub(crate) async fn control(fake: &FakeHandle, path: &str, body: Value) -> Value {
    fake.control(path, &body).await.unwrap()
}

/// Every call of `method` the fake received so far.
pub(crate) fn calls(fake: &FakeHandle, method: &str) -> Vec<Call> {
    fake.calls()
        .into_iter()
        .filter(|call| call.method == method)
        .collect()
}

/// A request raised in topic 42 of the forum.
pub(crate) fn forum_origin() -> TurnSource {
    TurnSource {
        channel: "telegram".into(),
        account_id: None,
        to: FORUM.to_string(),
        thread_id: Some("42".into()),
        dm_user_id: None,
    }
}

pub(crate) fn view() -> ApprovalView {
    ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "systemctl restart nginx".into(),
        cwd: Some("/srv".into()),
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

/// Retries as in production, with short backoff.
pub(crate) fn fast_policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 5,
        base_delay: Duration::from_millis(50),
        max_delay: Duration::from_millis(200),
        jitter: 0.0,
        max_retry_after: Duration::from_secs(10),
    }
}

/// Telegram's native approval client with one approver.
pub(crate) fn approvals(target: NativeTarget) -> ChatApprovals {
    ChatApprovalSettings {
        native: vec![NativeClientSettings {
            channel: "telegram".into(),
            approvers: vec![APPROVER.to_string()],
            target,
            ..NativeClientSettings::default()
        }],
        ..ChatApprovalSettings::default()
    }
    .validate(&Platforms::new([
        &gatehouse_telegram::Telegram as &dyn Platform
    ]))
    .unwrap()
}

/// The core's dispatcher with the Telegram channel as its only channel, and its journal.
pub(crate) struct Core {
    pub(crate) dispatcher: Arc<Dispatcher<MemoryTokenStore>>,
    pub(crate) journal: Arc<MemoryJournal>,
}

pub(crate) fn dispatcher(channel: Arc<TelegramChannel>) -> Core {
    let channel: Arc<dyn Channel> = channel;
    let channels: Channels = [("telegram".to_owned(), channel)].into();
    let journal = Arc::new(MemoryJournal::default());
    let dispatcher = Arc::new(Dispatcher::new(
        channels,
        Deliverer::new(fast_policy()),
        TokenRegistry::in_memory(),
        journal.clone(),
        Arc::new(|| NOW_MS),
    ));
    dispatcher.start();
    Core {
        dispatcher,
        journal,
    }
}

impl Core {
    /// Requests `view` with `plan` and waits until every planned message was delivered or
    /// refused once; what was delivered, in order.
    pub(crate) async fn deliver(
        &self,
        plan: &DeliveryPlan,
        view: &ApprovalView,
    ) -> Vec<(JournalEntry, MessageLocator)> {
        self.dispatcher.request(view.clone(), plan);
        let planned = plan.messages.len();
        self.wait(|journal| {
            let tried = journal.count("delivered") + journal.failures().len();
            tried >= planned
        })
        .await;
        self.journal.delivered()
    }

    /// Waits up to 10 s until `done` holds of the journal.
    pub(crate) async fn wait(&self, done: impl Fn(&MemoryJournal) -> bool) {
        for _ in 0..400 {
            if done(&self.journal) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("journal: {:?}", self.journal.steps());
    }
}

/// A channel's `run` in the background, with the receiving end of its events.
pub(crate) struct Running {
    pub(crate) events: mpsc::Receiver<Inbound>,
    task: JoinHandle<Result<(), ChatError>>,
}

impl Running {
    pub(crate) fn start(channel: Arc<TelegramChannel>) -> Self {
        Self::with_capacity(channel, 16)
    }

    /// `run` pushing into a channel of `capacity` events, to exercise backpressure.
    pub(crate) fn with_capacity(channel: Arc<TelegramChannel>, capacity: usize) -> Self {
        let (tx, events) = mpsc::channel(capacity);
        let task = tokio::spawn(async move { channel.run(tx).await });
        Self { events, task }
    }

    /// The next event, failing the test after 15 s.
    pub(crate) async fn next(&mut self) -> Inbound {
        tokio::time::timeout(Duration::from_secs(15), self.events.recv())
            .await
            .expect("no event within 15 s")
            .expect("run ended")
    }

    /// Asserts nothing more arrives for `quiet`.
    pub(crate) async fn expect_nothing(&mut self, quiet: Duration) {
        if let Ok(event) = tokio::time::timeout(quiet, self.events.recv()).await {
            panic!("unexpected event {event:?}");
        }
    }

    /// Closes the receiver as a gateway would at shutdown and waits for `run` to return;
    /// fails the test if events were still queued.
    pub(crate) async fn stop(self) -> Result<(), ChatError> {
        let (result, drained) = self.stop_draining().await;
        assert_eq!(drained, vec![], "events left unread at shutdown");
        result
    }

    /// Closes the receiver, drains what was queued (as a gateway must) and waits for `run`.
    pub(crate) async fn stop_draining(mut self) -> (Result<(), ChatError>, Vec<Inbound>) {
        self.events.close();
        let mut drained = Vec::new();
        while let Some(event) = self.events.recv().await {
            drained.push(event);
        }
        let result = tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("run did not stop within 10 s")
            .unwrap();
        (result, drained)
    }
}
