use std::collections::BTreeSet;

use gatehouse_chat::grammar::approve::{ApproveParse, parse_approve};
use gatehouse_chat::grammar::elevated::{ElevatedParse, parse_elevated};
use gatehouse_chat::{Channel, Route, SendKey};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{control, next_press, pending_card, socket_mode};

const MANIFEST: &str = include_str!("../../../../deploy/slack-app-manifest.json");

/// The bot scope each Web API method needs (`None`: no scope, or an app-level token's
/// `connections:write`, which Slack grants when the token is generated, not in the manifest).
fn scope_of(method: &str) -> Option<&'static str> {
    match method {
        "chat.postMessage" | "chat.update" | "chat.delete" | "chat.postEphemeral" => {
            Some("chat:write")
        }
        "conversations.open" => Some("im:write"),
        "auth.test" | "apps.connections.open" => None,
        other => panic!("the adapter calls {other}: add its scope here and to the manifest"),
    }
}

fn strings(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn manifest() -> Value {
    serde_json::from_str(MANIFEST).unwrap()
}

/// Every Web API method the adapter calls in a full approval round, as the fake saw them.
async fn methods_called() -> BTreeSet<String> {
    let (fake, slack, mut rx, _task) = socket_mode(|_| {}).await;
    let card = slack
        .send(
            &Route::dm("slack", None, "U0ALICE"),
            &pending_card(),
            &SendKey::random(),
        )
        .await
        .unwrap();
    control(
        &fake,
        "/_fake/inject",
        json!({"type": "interactive", "payload": {
        "type": "block_actions", "user": {"id": "U0BOB"},
        "container": {"type": "message", "message_ts": card.message_id, "channel_id": card.chat_id},
        "actions": [{"type": "button", "action_id": "deny", "value": "g1.tok-deny"}]}}),
    )
    .await;
    let press = next_press(&mut rx).await;
    slack
        .answer(&press.interaction, "Only approvers can decide.")
        .await
        .unwrap();
    slack.update(&card, &pending_card()).await.unwrap();
    slack.delete(&card).await.unwrap();
    fake.calls()
        .into_iter()
        .filter(|call| call.path.starts_with("/api/"))
        .map(|call| call.method)
        .collect()
}

#[tokio::test]
async fn lists_exactly_the_bot_scopes_the_adapter_needs() {
    let methods = methods_called().await;
    assert_eq!(
        methods,
        set(&[
            "apps.connections.open",
            "auth.test",
            "chat.delete",
            "chat.postEphemeral",
            "chat.postMessage",
            "chat.update",
            "conversations.open"
        ])
    );
    let mut needed: BTreeSet<String> = methods
        .iter()
        .filter_map(|method| scope_of(method))
        .map(str::to_owned)
        .collect();
    // Slash commands need `commands`; reading typed commands needs each message event's scope.
    needed.insert("commands".to_owned());
    needed.extend(set(&["channels:history", "groups:history", "im:history"]));
    assert_eq!(
        strings(&manifest()["oauth_config"]["scopes"]["bot"]),
        needed
    );
}

#[tokio::test]
async fn subscribes_to_messages_where_commands_are_typed() {
    let manifest = manifest();
    assert_eq!(
        strings(&manifest["settings"]["event_subscriptions"]["bot_events"]),
        set(&["message.channels", "message.groups", "message.im"])
    );
    assert_eq!(manifest["settings"]["interactivity"]["is_enabled"], true);
    assert_eq!(manifest["settings"]["socket_mode_enabled"], true);
    assert_eq!(
        manifest["features"]["app_home"]["messages_tab_read_only_enabled"], false,
        "approvers must be able to type in the bot's DM"
    );
}

#[test]
fn registers_the_slash_commands_the_core_grammar_reads() {
    let commands: Vec<String> = manifest()["features"]["slash_commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|command| command["command"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(commands, ["/approve", "/elevated", "/elev"]);
    assert!(matches!(
        parse_approve("/approve 0f3c9a1e deny", None),
        ApproveParse::Command(_)
    ));
    assert_eq!(parse_elevated("/elevated", None), ElevatedParse::Query);
    assert_eq!(parse_elevated("/elev", None), ElevatedParse::Query);
}
