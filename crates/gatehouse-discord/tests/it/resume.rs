use std::time::Duration;

use gatehouse_chat::render::{ApprovalView, render_prompt};
use gatehouse_chat::{Channel, Inbound, Route};
use serde_json::json;

use crate::support::{
    APPROVER, CHANNEL_ID, calls_of, control, fake, inject, next, running, wait_for_calls,
};

#[tokio::test]
async fn resumes_after_a_drop_and_delivers_a_missed_press_once() {
    let fake = fake().await;
    let (discord, mut events) = running(&fake).await;
    let view = ApprovalView {
        id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
        command: "ls".into(),
        cwd: None,
        agent_id: None,
        host: None,
        resolved_path: None,
        env_keys: Vec::new(),
        expires_at_ms: 1_795_243_000_000,
        allow_always_offered: false,
    };
    let origin = Route::from_target("t", "discord", &CHANNEL_ID.to_string(), None, None).unwrap();
    let card = discord
        .send(&origin, &render_prompt(&view, 0, 1200))
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
        calls_of(&fake, "gateway.IDENTIFY").len(),
        1,
        "resumed, not re-identified"
    );
    assert_eq!(calls_of(&fake, "createInteractionResponse").len(), 1);

    let again = tokio::time::timeout(Duration::from_secs(1), events.recv()).await;
    assert!(again.is_err(), "the press was delivered twice: {again:?}");
}
