use std::time::Duration;

use gatehouse_chat::channel::InteractionRef;
use gatehouse_chat::delivery::{
    Deliverer, DeliverySettings, Operation, RetryPolicy, TargetFailure,
};
use gatehouse_chat::error::{ChatError, RateScope};
use gatehouse_chat::render::{ApprovalView, Card, render_prompt};
use gatehouse_chat::route::{MessageLocator, Route};
use gatehouse_chat::throttle::{Pacing, Window};
use pretty_assertions::assert_eq;
use tokio::time::Instant;

use crate::platform::ScriptedPlatform;

fn card() -> Card {
    let view = ApprovalView {
        id: "0f3c9a1e-7b2d".into(),
        command: "ls".into(),
        cwd: None,
        agent_id: None,
        host: None,
        resolved_path: None,
        env_keys: vec![],
        expires_at_ms: 60_000,
        allow_always_offered: false,
        chain: None,
        tool: None,
    };
    render_prompt(&view, 0, 100)
}

fn route(user: &str) -> Route {
    Route::dm("scripted", None, user)
}

fn rate_limited(secs: u64) -> ChatError {
    ChatError::RateLimited {
        channel: "scripted".into(),
        retry_after: Duration::from_secs(secs),
        scope: RateScope::Bot,
    }
}

fn transient() -> ChatError {
    ChatError::Transient {
        channel: "scripted".into(),
        reason: "502 bad gateway".into(),
    }
}

fn permanent() -> ChatError {
    ChatError::Permanent {
        channel: "scripted".into(),
        reason: "bot was blocked by the user".into(),
    }
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 4,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(250),
        jitter: 0.0,
        max_retry_after: Duration::from_secs(60),
    }
}

/// Every call of the bot spaced `interval` apart, counted from the end of the one before.
fn spaced(interval: Duration) -> DeliverySettings {
    DeliverySettings {
        pacing: Pacing {
            bot: Some(Window {
                calls: 1,
                per: interval,
            }),
            ..Pacing::default()
        },
        retry: policy(),
        ..DeliverySettings::default()
    }
}

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[tokio::test(start_paused = true)]
async fn honours_retry_after_then_delivers() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![rate_limited(7)]);
    let deliverer = Deliverer::new(policy());
    let sent = deliverer
        .send(&platform, &route("1"), &card())
        .await
        .unwrap();
    assert_eq!(sent.message_id, "1");
    assert_eq!(
        platform.calls(),
        vec![
            ("send scripted:user:1".into(), secs(0.0)),
            ("send scripted:user:1".into(), secs(7.0)),
        ]
    );
    assert!(deliverer.failures().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_429_pauses_the_whole_channel() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![rate_limited(5)]);
    let deliverer = Deliverer::new(policy());
    let card = card();
    let (one, two) = (route("1"), route("2"));
    let (first, second) = tokio::join!(deliverer.send(&platform, &one, &card), async {
        tokio::time::sleep(secs(1.0)).await;
        deliverer.send(&platform, &two, &card).await
    });
    first.unwrap();
    second.unwrap();
    let calls = platform.calls();
    assert_eq!(calls[0], ("send scripted:user:1".into(), secs(0.0)));
    assert!(
        calls[1..].iter().all(|(_, at)| *at >= secs(5.0)),
        "no call during the pause: {calls:?}"
    );
}

/// Issue 30: a send that already had its turn booked when the 429 came back went out inside the
/// pause (`pause` only moved the next free turn). Now the calls already waiting are held too, in
/// their order and spacing, and the refused call's retry queues behind them.
#[tokio::test(start_paused = true)]
async fn a_429_holds_the_calls_already_waiting_for_their_turn() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![rate_limited(5)])
        .answering_after(secs(0.5));
    let deliverer = Deliverer::new(policy()).with_settings("scripted", spaced(secs(1.0)));
    let card = card();
    let (one, two, three) = (route("1"), route("2"), route("3"));
    let (first, second, third) = tokio::join!(
        deliverer.send(&platform, &one, &card),
        deliverer.send(&platform, &two, &card),
        deliverer.send(&platform, &three, &card),
    );
    first.unwrap();
    second.unwrap();
    third.unwrap();
    // The 429 arrives at 0.5 s, while the second and third sends wait for the first call to
    // end; the pause lasts until 5.5 s, then each call waits for the one before to end (each
    // takes 0.5 s) plus the second of spacing, and the refused call's retry queues last.
    assert_eq!(
        platform.calls(),
        vec![
            ("send scripted:user:1".into(), secs(0.0)),
            ("send scripted:user:2".into(), secs(5.5)),
            ("send scripted:user:3".into(), secs(7.0)),
            ("send scripted:user:1".into(), secs(8.5)),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn retries_transient_errors_with_bounded_exponential_backoff() {
    let platform =
        ScriptedPlatform::failing_with("scripted", vec![transient(), transient(), transient()]);
    let deliverer = Deliverer::new(policy());
    deliverer
        .send(&platform, &route("1"), &card())
        .await
        .unwrap();
    let times: Vec<Duration> = platform.calls().into_iter().map(|(_, at)| at).collect();
    // Delays 100ms, 200ms, then capped at 250ms.
    assert_eq!(times, vec![secs(0.0), secs(0.1), secs(0.3), secs(0.55)]);
}

#[tokio::test(start_paused = true)]
async fn gives_up_after_max_attempts_and_records_the_target() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![transient(); 10]);
    let deliverer = Deliverer::new(policy());
    let error = deliverer
        .send(&platform, &route("1"), &card())
        .await
        .unwrap_err();
    assert_eq!(error, transient());
    assert_eq!(platform.calls().len(), 4);
    assert_eq!(
        deliverer.failures(),
        vec![TargetFailure {
            channel: "scripted".into(),
            target: "scripted:user:1".into(),
            operation: Operation::Send,
            error: transient(),
            attempts: 4,
        }]
    );
}

#[tokio::test(start_paused = true)]
async fn never_retries_permanent_errors() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![permanent()]);
    let deliverer = Deliverer::new(policy());
    let error = deliverer
        .send(&platform, &route("9"), &card())
        .await
        .unwrap_err();
    assert_eq!(error, permanent());
    assert_eq!(platform.calls().len(), 1);
    assert_eq!(deliverer.failures()[0].attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn endless_rate_limiting_is_bounded_too() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![rate_limited(1); 10]);
    let deliverer = Deliverer::new(policy());
    let error = deliverer
        .send(&platform, &route("1"), &card())
        .await
        .unwrap_err();
    assert_eq!(error, rate_limited(1));
    assert_eq!(platform.calls().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn refuses_to_stall_on_an_excessive_retry_after() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![rate_limited(3600)]);
    let deliverer = Deliverer::new(policy());
    let started = Instant::now();
    let error = deliverer
        .send(&platform, &route("1"), &card())
        .await
        .unwrap_err();
    assert_eq!(error, rate_limited(3600));
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(deliverer.failures().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn spaces_calls_per_channel() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![]);
    let deliverer = Deliverer::new(policy()).with_settings("scripted", spaced(secs(1.0)));
    let card = card();
    for user in ["1", "2", "3"] {
        deliverer
            .send(&platform, &route(user), &card)
            .await
            .unwrap();
    }
    let times: Vec<Duration> = platform.calls().into_iter().map(|(_, at)| at).collect();
    assert_eq!(times, vec![secs(0.0), secs(1.0), secs(2.0)]);
}

#[tokio::test(start_paused = true)]
async fn a_later_success_clears_the_recorded_failure() {
    let platform = ScriptedPlatform::failing_with("scripted", vec![permanent()]);
    let deliverer = Deliverer::new(policy());
    let message = MessageLocator {
        channel: "scripted".into(),
        account_id: None,
        chat_id: "c1".into(),
        message_id: "5".into(),
        thread_id: None,
    };
    assert!(
        deliverer
            .update(&platform, &message, &card())
            .await
            .is_err()
    );
    assert_eq!(deliverer.failures()[0].operation, Operation::Update);
    deliverer
        .update(&platform, &message, &card())
        .await
        .unwrap();
    assert!(deliverer.failures().is_empty());
    deliverer.delete(&platform, &message).await.unwrap();
    let interaction = InteractionRef {
        channel: "scripted".into(),
        handle: "secret-handle".into(),
    };
    deliverer
        .answer(&platform, &interaction, "only approvers can decide")
        .await
        .unwrap();
    assert!(!format!("{interaction:?}").contains("secret-handle"));
    let names: Vec<String> = platform.calls().into_iter().map(|(call, _)| call).collect();
    assert_eq!(
        names,
        vec![
            "update 5",
            "update 5",
            "delete 5",
            "answer only approvers can decide"
        ]
    );
}
