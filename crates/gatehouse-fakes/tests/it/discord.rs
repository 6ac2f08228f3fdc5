use std::time::Duration;

use gatehouse_fakes::FakeHandle;
use gatehouse_fakes::discord::{APP_ID, GUILD_ID};
use serde_json::json;
use serenity::all::{
    ApplicationId, ButtonStyle, ChannelId, ClientBuilder, Context, CreateActionRow, CreateButton,
    CreateCommand, CreateInteractionResponse, CreateInteractionResponseFollowup,
    CreateInteractionResponseMessage, CreateMessage, EditMessage, EventHandler, GatewayIntents,
    GuildId, HttpBuilder, Interaction, Message, MessageId, Ready, UserId,
};
use serenity::http::{Http, HttpError};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use crate::support::{control, loopback, wait_for_calls};

const CHANNEL: u64 = 4000;
const APPROVER: u64 = 5000;

pub(crate) fn http_for(fake: &FakeHandle) -> Http {
    // serenity honours the proxy only with its rate limiter disabled.
    HttpBuilder::new("Bot fake-token")
        .proxy(fake.base_url.clone())
        .ratelimiter_disabled(true)
        .application_id(ApplicationId::new(APP_ID))
        .build()
}

#[derive(Debug)]
enum Event {
    Ready(MessageId),
    Clicked(String, Result<(), String>),
    Text(String),
}

struct Handler(UnboundedSender<Event>);

#[serenity::async_trait]
impl EventHandler for Handler {
    async fn ready(&self, ctx: Context, _ready: Ready) {
        let row = CreateActionRow::Buttons(vec![
            CreateButton::new("allow-once:1")
                .label("Allow once")
                .style(ButtonStyle::Success),
            CreateButton::new("deny:1")
                .label("Deny")
                .style(ButtonStyle::Danger),
        ]);
        let card = CreateMessage::new()
            .content("Approve `ls`?")
            .components(vec![row]);
        let sent = ChannelId::new(CHANNEL)
            .send_message(&ctx.http, card)
            .await
            .unwrap();
        self.0.send(Event::Ready(sent.id)).unwrap();
    }

    async fn interaction_create(&self, ctx: Context, interaction: Interaction) {
        let Interaction::Component(click) = interaction else {
            return;
        };
        let update = CreateInteractionResponse::UpdateMessage(
            CreateInteractionResponseMessage::new()
                .content(format!("Allowed once by <@{}>", click.user.id))
                .components(vec![]),
        );
        let mut result = click
            .create_response(&ctx.http, update)
            .await
            .map_err(|e| e.to_string());
        if result.is_ok() {
            let receipt = CreateInteractionResponseFollowup::new()
                .content("Recorded.")
                .ephemeral(true);
            result = click
                .create_followup(&ctx.http, receipt)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string());
        }
        self.0
            .send(Event::Clicked(click.data.custom_id.clone(), result))
            .unwrap();
    }

    async fn message(&self, _ctx: Context, message: Message) {
        self.0.send(Event::Text(message.content)).unwrap();
    }
}

/// A fake plus a running serenity client whose `ready` posted an approval card.
async fn connected() -> (FakeHandle, UnboundedReceiver<Event>, MessageId) {
    let fake = gatehouse_fakes::discord::spawn(loopback()).await.unwrap();
    // Fast heartbeats, so every test also exercises HEARTBEAT → HEARTBEAT_ACK.
    control(
        &fake,
        "/_fake/config",
        json!({"heartbeat_interval_ms": 200}),
    )
    .await;
    let (tx, mut events) = unbounded_channel();
    let intents = GatewayIntents::non_privileged() | GatewayIntents::MESSAGE_CONTENT;
    let mut client = ClientBuilder::new_with_http(http_for(&fake), intents)
        .event_handler(Handler(tx))
        .await
        .unwrap();
    tokio::spawn(async move { client.start().await });
    let Event::Ready(card) = next(&mut events).await else {
        panic!("expected ready")
    };
    (fake, events, card)
}

async fn next(events: &mut UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(20), events.recv())
        .await
        .unwrap()
        .unwrap()
}

fn click(card: MessageId) -> serde_json::Value {
    json!({"t": "INTERACTION_CREATE", "d": {"type": 3, "channel_id": CHANNEL.to_string(),
        "user": {"id": APPROVER.to_string()}, "message": {"id": card.to_string()},
        "data": {"custom_id": "allow-once:1"}}})
}

#[tokio::test]
async fn delivers_button_press_and_accepts_update_and_follow_up() {
    let (fake, mut events, card) = connected().await;
    let sent = &wait_for_calls(&fake, "createMessage", 1).await[0];
    assert_eq!(
        sent.body["components"][0]["components"][0]["custom_id"],
        "allow-once:1"
    );

    let injected = control(&fake, "/_fake/inject", click(card)).await;
    assert_eq!(injected["delivery"], "live");
    assert_eq!(injected["s"], 2, "READY was 1");
    let Event::Clicked(custom_id, result) = next(&mut events).await else {
        panic!()
    };
    assert_eq!(custom_id, "allow-once:1");
    result.unwrap();

    let callback = &wait_for_calls(&fake, "createInteractionResponse", 1).await[0];
    assert_eq!(callback.body["type"], 7);
    let follow_up = &wait_for_calls(&fake, "executeWebhook", 1).await[0];
    assert_eq!(follow_up.body["flags"], 64);

    // The card itself was updated by the UPDATE_MESSAGE response.
    let http = http_for(&fake);
    let stored = http
        .get_message(ChannelId::new(CHANNEL), card)
        .await
        .unwrap();
    assert_eq!(stored.content, format!("Allowed once by <@{APPROVER}>"));
    assert!(stored.components.is_empty());
    // A plain REST edit works on it too, and a second response is refused with 40060.
    ChannelId::new(CHANNEL)
        .edit_message(&http, card, EditMessage::new().content("done"))
        .await
        .unwrap();
    let token = injected["d"]["token"].as_str().unwrap();
    let id = injected["d"]["id"].as_str().unwrap();
    let again = reqwest::Client::new()
        .post(format!(
            "{}/api/v10/interactions/{id}/{token}/callback",
            fake.base_url
        ))
        .json(&json!({"type": 6}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 400);
    assert_eq!(
        again.json::<serde_json::Value>().await.unwrap()["code"],
        40060
    );

    // A text command in the channel reaches the bot with its content (MESSAGE_CONTENT intent).
    control(
        &fake,
        "/_fake/inject",
        json!({"t": "MESSAGE_CREATE", "d": {"channel_id": CHANNEL.to_string(),
        "author": {"id": APPROVER.to_string()}, "content": "/approve abcd allow-once"}}),
    )
    .await;
    let Event::Text(text) = next(&mut events).await else {
        panic!()
    };
    assert_eq!(text, "/approve abcd allow-once");
}

#[tokio::test]
async fn resumes_after_dropped_connection_and_replays_missed_interaction() {
    let (fake, mut events, card) = connected().await;
    // The fake holds reconnects back for 500 ms, so the click is surely missed, then replayed.
    let dropped = control(
        &fake,
        "/_fake/disconnect",
        json!({"code": 4000, "reconnect_delay_ms": 500}),
    )
    .await;
    assert_eq!(dropped["closed"], 1);
    // Injected while no connection is attached: kept for replay.
    let injected = control(&fake, "/_fake/inject", click(card)).await;
    assert_eq!(injected["delivery"], "awaiting-resume");

    let Event::Clicked(_, result) = next(&mut events).await else {
        panic!()
    };
    result.unwrap();
    let resume = &wait_for_calls(&fake, "gateway.RESUME", 1).await[0];
    assert_eq!(resume.body["d"]["session_id"], "fake-session-1");
    assert_eq!(resume.body["d"]["seq"], 1);
    assert_eq!(resume.body["d"]["token"], "<redacted>");
    // Heartbeats kept flowing (an unacknowledged one would make serenity reconnect).
    assert!(wait_for_calls(&fake, "gateway.HEARTBEAT", 2).await.len() >= 2);
    assert_eq!(
        wait_for_calls(&fake, "gateway.IDENTIFY", 1).await.len(),
        1,
        "resumed, not re-identified"
    );
}

fn api_error(error: serenity::Error) -> (u16, isize, String) {
    let serenity::Error::Http(HttpError::UnsuccessfulRequest(response)) = error else {
        panic!("expected an unsuccessful request, got {error:?}")
    };
    let paths = response
        .error
        .errors
        .iter()
        .map(|e| e.path.clone())
        .collect::<Vec<_>>()
        .join(",");
    (
        response.status_code.as_u16(),
        response.error.code,
        format!("{}|{paths}", response.error.message),
    )
}

#[tokio::test]
async fn answers_429_that_a_retried_call_gets_past() {
    let fake = gatehouse_fakes::discord::spawn(loopback()).await.unwrap();
    let http = http_for(&fake);
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "retry_after": 0.5}),
    )
    .await;
    let limited = ChannelId::new(CHANNEL).say(&http, "hi").await.unwrap_err();
    // Discord's 429 body has no `code`, so serenity reports a decode error with the status.
    assert_eq!(api_error(limited).0, 429);
    // serenity with its limiter off does not retry; the caller waits retry_after and retries.
    let raw = &wait_for_calls(&fake, "createMessage", 1).await[0];
    tokio::time::sleep(Duration::from_millis(500)).await;
    ChannelId::new(CHANNEL).say(&http, "hi").await.unwrap();
    let calls = wait_for_calls(&fake, "createMessage", 2).await;
    assert!(calls[1].at_ms - raw.at_ms >= 500);

    // The 429 itself carries Discord's body and headers.
    control(
        &fake,
        "/_fake/faults",
        json!({"method": "createMessage", "retry_after": 1.5}),
    )
    .await;
    let response = reqwest::Client::new()
        .post(format!(
            "{}/api/v10/channels/{CHANNEL}/messages",
            fake.base_url
        ))
        .header("authorization", "Bot x")
        .json(&json!({"content": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(response.headers()["x-ratelimit-remaining"], "0");
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({"message": "You are being rate limited.", "retry_after": 1.5, "global": false})
    );
}

#[tokio::test]
async fn denies_custom_id_over_100_chars() {
    let fake = gatehouse_fakes::discord::spawn(loopback()).await.unwrap();
    let http = http_for(&fake);
    let row = CreateActionRow::Buttons(vec![CreateButton::new("x".repeat(101)).label("Allow")]);
    let error = ChannelId::new(CHANNEL)
        .send_message(
            &http,
            CreateMessage::new().content("?").components(vec![row]),
        )
        .await
        .unwrap_err();
    let (status, code, message) = api_error(error);
    assert_eq!((status, code), (400, 50035));
    assert_eq!(
        message,
        "Invalid Form Body|components.0.components.0.custom_id"
    );
}

#[tokio::test]
async fn opens_dms_and_registers_guild_commands() {
    let fake = gatehouse_fakes::discord::spawn(loopback()).await.unwrap();
    let http = http_for(&fake);
    let dm = UserId::new(APPROVER)
        .create_dm_channel(&http)
        .await
        .unwrap();
    assert_eq!(
        UserId::new(APPROVER)
            .create_dm_channel(&http)
            .await
            .unwrap()
            .id,
        dm.id
    );
    dm.id.say(&http, "Approve?").await.unwrap();
    control(&fake, "/_fake/config", json!({"dm_closed": [APPROVER]})).await;
    let (status, code, _) = api_error(dm.id.say(&http, "Approve?").await.unwrap_err());
    assert_eq!((status, code), (403, 50007));

    let commands = GuildId::new(GUILD_ID)
        .set_commands(
            &http,
            vec![
                CreateCommand::new("approve").description("Decide a pending approval"),
                CreateCommand::new("elevated").description("Set the elevated level"),
            ],
        )
        .await
        .unwrap();
    assert_eq!(commands.len(), 2);
    let listed = GuildId::new(GUILD_ID).get_commands(&http).await.unwrap();
    assert_eq!(
        listed.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["approve", "elevated"]
    );
    let bad = GuildId::new(GUILD_ID)
        .set_commands(&http, vec![CreateCommand::new("Approve").description("x")])
        .await
        .unwrap_err();
    assert_eq!(api_error(bad).0, 400);
}
