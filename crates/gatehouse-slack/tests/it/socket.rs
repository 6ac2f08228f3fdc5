use std::time::Duration;

use gatehouse_chat::{Channel, Route, SendKey};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{control, next_press, next_text, pending_card, socket_mode, wait_for_calls};

const APPROVER: &str = "U0ALICE";

fn click(channel: &str, ts: &str, token: &str) -> Value {
    json!({"type": "interactive", "payload": {"type": "block_actions", "user": {"id": APPROVER},
        "container": {"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
        "actions": [{"type": "button", "action_id": "allow-once", "block_id": "gatehouse-decision",
                     "value": token, "action_ts": "1795243301.000200"}]}})
}

fn message(channel: &str, channel_type: &str, text: &str, thread_ts: Option<&str>) -> Value {
    let mut event = json!({"type": "message", "channel": channel, "channel_type": channel_type,
        "user": APPROVER, "text": text});
    if let Some(thread) = thread_ts {
        event["thread_ts"] = json!(thread);
    }
    json!({"type": "events_api", "payload": {"event": event}})
}

fn slash(command: &str, text: &str) -> Value {
    json!({"type": "slash_commands", "payload": {"command": command, "text": text,
        "user_id": APPROVER, "channel_id": "C0OPS"}})
}

#[tokio::test]
async fn acks_a_press_before_the_core_reads_it_and_pushes_it_as_press() {
    let (fake, slack, mut rx, _task) = socket_mode(|_| {}).await;
    let card = slack
        .send(
            &Route::dm("slack", None, APPROVER),
            &pending_card(),
            &SendKey::random(),
        )
        .await
        .unwrap();

    let injected = control(
        &fake,
        "/_fake/inject",
        click(&card.chat_id, &card.message_id, "g1.tok-once"),
    )
    .await;
    // The ack does not wait for the core: nothing has read the queue yet.
    let ack = &wait_for_calls(&fake, "socket.ack", 1).await[0];
    assert_eq!(ack.body["envelope_id"], injected["envelope_id"]);

    let press = next_press(&mut rx).await;
    assert_eq!(press.token, "g1.tok-once");
    assert_eq!(press.sender.id, APPROVER);
    assert_eq!(press.message, card);

    // A non-approver's press is answered privately beside the card.
    slack
        .answer(&press.interaction, "Only approvers can decide.")
        .await
        .unwrap();
    let ephemeral = &fake.calls_of("chat.postEphemeral")[0];
    assert_eq!(
        ephemeral.body,
        json!({"channel": card.chat_id, "user": APPROVER, "text": "Only approvers can decide.",
            "blocks": [{"type": "section",
                "text": {"type": "plain_text", "text": "Only approvers can decide."}}]})
    );
}

#[tokio::test]
async fn pushes_approve_text_from_channels_dms_and_threads() {
    let (fake, _slack, mut rx, _task) = socket_mode(|_| {}).await;

    control(
        &fake,
        "/_fake/inject",
        message("C0OPS", "channel", "/approve 0f3c9a1e deny", None),
    )
    .await;
    let in_channel = next_text(&mut rx).await;
    assert_eq!(in_channel.text, "/approve 0f3c9a1e deny");
    assert_eq!(in_channel.message.chat_id, "C0OPS");
    assert!(!in_channel.is_direct);
    assert_eq!(in_channel.interaction, None);

    control(
        &fake,
        "/_fake/inject",
        message("D0ALICE", "im", "approve 0f3c9a1e allow-once", None),
    )
    .await;
    let in_dm = next_text(&mut rx).await;
    assert_eq!(in_dm.text, "approve 0f3c9a1e allow-once");
    assert!(in_dm.is_direct);

    control(
        &fake,
        "/_fake/inject",
        message(
            "C0OPS",
            "channel",
            "<@U0FAKEBOT> approve 0f3c9a1e deny",
            Some("1795243000.000100"),
        ),
    )
    .await;
    let in_thread = next_text(&mut rx).await;
    assert_eq!(in_thread.text, "approve 0f3c9a1e deny");
    assert_eq!(
        in_thread.message.thread_id.as_deref(),
        Some("1795243000.000100")
    );
    assert_eq!(
        in_thread
            .reply_to
            .map(|parent| parent.message_id)
            .as_deref(),
        Some("1795243000.000100")
    );
}

#[tokio::test]
async fn answers_a_slash_command_in_its_ack() {
    let (fake, slack, mut rx, _task) = socket_mode(|_| {}).await;

    let injected = control(
        &fake,
        "/_fake/inject",
        slash("/approve", "0f3c9a1e allow-once"),
    )
    .await;
    let command = next_text(&mut rx).await;
    assert_eq!(command.text, "/approve 0f3c9a1e allow-once");
    assert_eq!(command.sender.id, APPROVER);
    let interaction = command
        .interaction
        .expect("slash commands answer privately");
    slack
        .answer(&interaction, "Allowed once 0f3c9a1e.")
        .await
        .unwrap();

    let ack = &wait_for_calls(&fake, "socket.ack", 1).await[0];
    assert_eq!(ack.body["envelope_id"], injected["envelope_id"]);
    assert_eq!(
        ack.body["payload"],
        json!({"text": "Allowed once 0f3c9a1e.", "response_type": "ephemeral",
            "blocks": [{"type": "section",
                "text": {"type": "plain_text", "text": "Allowed once 0f3c9a1e."}}]})
    );
    assert!(fake.calls_of("response_url").is_empty());
}

#[tokio::test]
async fn sends_a_late_slash_answer_to_the_response_url() {
    let (fake, slack, mut rx, _task) =
        socket_mode(|config| config.command_reply_wait = Duration::from_millis(50)).await;

    control(&fake, "/_fake/inject", slash("/elevated", "on")).await;
    let command = next_text(&mut rx).await;
    assert_eq!(command.text, "/elevated on");
    let ack = &wait_for_calls(&fake, "socket.ack", 1).await[0];
    assert_eq!(
        ack.body["payload"],
        json!({}),
        "no answer yet: an empty ack"
    );
    slack
        .answer(
            &command.interaction.unwrap(),
            "Elevated is now on for this session.",
        )
        .await
        .unwrap();
    let late = &wait_for_calls(&fake, "response_url", 1).await[0];
    assert_eq!(late.body["text"], "Elevated is now on for this session.");
}

#[tokio::test]
async fn keeps_an_interaction_across_a_socket_reconnect() {
    let (fake, slack, mut rx, _task) = socket_mode(|_| {}).await;
    let card = slack
        .send(
            &Route::dm("slack", None, APPROVER),
            &pending_card(),
            &SendKey::random(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let dropped = control(
        &fake,
        "/_fake/disconnect",
        json!({"reconnect_delay_ms": 500}),
    )
    .await;
    assert_eq!(dropped["closed"], 1);
    let injected = control(
        &fake,
        "/_fake/inject",
        click(&card.chat_id, &card.message_id, "g1.tok-deny"),
    )
    .await;
    assert_eq!(injected["delivered"], false, "queued while disconnected");

    let press = next_press(&mut rx).await;
    assert_eq!(press.token, "g1.tok-deny");
    assert!(fake.calls_of("apps.connections.open").len() >= 2);
    let ack = &wait_for_calls(&fake, "socket.ack", 1).await[0];
    assert_eq!(ack.body["envelope_id"], injected["envelope_id"]);
}

#[tokio::test]
async fn ignores_its_own_cards_and_stops_when_the_core_goes_away() {
    let (fake, _slack, mut rx, task) = socket_mode(|_| {}).await;
    let mut own = message("C0OPS", "channel", "/approve 0f3c9a1e deny", None);
    own["payload"]["event"]["user"] = json!("U0FAKEBOT");
    own["payload"]["event"]["bot_id"] = json!("B0FAKEBOT");
    control(&fake, "/_fake/inject", own).await;
    control(
        &fake,
        "/_fake/inject",
        message("C0OPS", "channel", "hello", None),
    )
    .await;
    let first = next_text(&mut rx).await;
    assert_eq!(first.text, "hello", "the bot's own message was pushed");

    drop(rx);
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("run did not return after the queue closed")
        .unwrap();
}
