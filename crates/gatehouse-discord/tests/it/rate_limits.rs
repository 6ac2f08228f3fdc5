use std::time::Duration;

use gatehouse_chat::delivery::{Deliverer, RetryPolicy};
use gatehouse_chat::{Channel, ChatError, RateScope, SendKey};
use serde_json::json;

use crate::support::{CHANNEL_ID, channel, control, fake, origin, plain_card};

#[tokio::test]
async fn reports_discords_retry_after_with_the_limiter_off() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "retry_after": 1.5}),
    )
    .await;
    let error = discord
        .send(&origin(), &plain_card(), &SendKey::random())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ChatError::RateLimited {
            channel: "discord".into(),
            retry_after: Duration::from_millis(1500),
            scope: RateScope::Route,
        }
    );
}

#[tokio::test]
async fn delivers_once_after_waiting_out_a_429_through_the_deliverer() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "retry_after": 0.6}),
    )
    .await;
    let deliverer = Deliverer::new(RetryPolicy::default());
    let delivered = deliverer
        .send(discord.as_ref(), &origin(), &plain_card())
        .await
        .unwrap();

    let attempts = fake.calls_of("createMessage");
    assert_eq!(attempts.len(), 2, "one 429, one delivery");
    assert!(
        attempts[1].at_ms - attempts[0].at_ms >= 600,
        "retried after {} ms",
        attempts[1].at_ms - attempts[0].at_ms
    );
    assert_eq!(delivered.chat_id, CHANNEL_ID.to_string());
    assert_eq!(deliverer.failures(), vec![]);
}

#[tokio::test]
async fn retries_a_server_error_and_gives_up_on_a_refusal() {
    let fake = fake().await;
    let discord = channel(&fake).await;
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "status": 502}),
    )
    .await;
    let error = discord
        .send(&origin(), &plain_card(), &SendKey::random())
        .await
        .unwrap_err();
    assert!(error.is_retryable(), "{error:?}");
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "status": 403}),
    )
    .await;
    let error = discord
        .send(&origin(), &plain_card(), &SendKey::random())
        .await
        .unwrap_err();
    assert!(!error.is_retryable(), "{error:?}");
}
