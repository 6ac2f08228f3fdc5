use std::time::Duration;

use gatehouse_chat::{Channel, Inbound, SendKey};
use serde_json::json;

use crate::support::{
    APPROVER, control, fake, inject, next, origin, plain_card, running, wait_for_calls,
};

#[tokio::test]
async fn resumes_after_a_drop_and_delivers_a_missed_press_once() {
    let fake = fake().await;
    let (discord, mut events) = running(&fake).await;
    let card = discord
        .send(&origin(), &plain_card(), &SendKey::random())
        .await
        .unwrap();

    // Reconnects are held back 500 ms, so the press is surely missed and must be replayed.
    let dropped = control(
        &fake,
        "/_fake/disconnect",
        json!({"code": 4000, "reconnect_delay_ms": 500}),
    )
    .await;
    assert_eq!(dropped["closed"], 1);
    let injected = inject(
        &fake,
        "INTERACTION_CREATE",
        json!({"type": 3, "channel_id": card.chat_id, "user": {"id": APPROVER.to_string()},
            "message": {"id": card.message_id}, "data": {"custom_id": "g1.pressed-in-the-gap"}}),
    )
    .await;
    assert_eq!(injected["delivery"], "awaiting-resume");

    let Inbound::Press(press) = next(&mut events).await else {
        panic!("expected the replayed press")
    };
    assert_eq!(press.token, "g1.pressed-in-the-gap");
    assert_eq!(press.message, card);
    let resume = &wait_for_calls(&fake, "gateway.RESUME", 1).await[0];
    assert_eq!(resume.body["d"]["session_id"], "fake-session-1");
    assert_eq!(
        fake.calls_of("gateway.IDENTIFY").len(),
        1,
        "resumed, not re-identified"
    );
    assert_eq!(fake.calls_of("createInteractionResponse").len(), 1);

    let again = tokio::time::timeout(Duration::from_secs(1), events.recv()).await;
    assert!(again.is_err(), "the press was delivered twice: {again:?}");
}

#[tokio::test]
async fn stops_the_gateway_when_the_inbound_queue_closes() {
    let fake = fake().await;
    let discord = crate::support::channel(&fake).await;
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let run = tokio::spawn(async move { discord.run(tx).await });
    wait_for_calls(&fake, "gateway.IDENTIFY", 1).await;
    drop(rx);
    let ended = tokio::time::timeout(Duration::from_secs(10), run).await;
    assert_eq!(ended.unwrap().unwrap(), Ok(()));
}
