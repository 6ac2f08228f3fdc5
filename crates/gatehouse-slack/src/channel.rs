//! [`SlackChannel`]: the chat core's [`Channel`] on the Slack Web API, plus the HTTP router for
//! HTTP mode.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use axum::Router;
use gatehouse_chat::render::Card;
use gatehouse_chat::throttle::{Pacing, Window};
use gatehouse_chat::{
    Channel, ChatError, Destination, Inbound, InteractionRef, MessageLocator, ReplayMemory, Route,
    SendKey,
};
use slack_morphism::errors::SlackClientError;
use slack_morphism::prelude::*;
use tokio::sync::mpsc;
use url::Url;

use crate::classify::{CHANNEL, classify, per_method};
use crate::config::{SlackConfig, SlackMode};
use crate::encode::{answer_content, encode_card};
use crate::error::SlackError;
use crate::handle::Handle;
use crate::intake::{Intake, Me, Scope};
use crate::signature::RequestVerifier;
use crate::{http, socket};

/// The metadata event type of every message Gatehouse posts, and the payload field holding its
/// send key.
const SENT_EVENT: &str = "gatehouse_message";
const SENT_KEY: &str = "key";

/// How many of a conversation's latest messages a lookup reads: an earlier attempt of a message
/// is among the last few, since each conversation's messages go out one at a time.
const LOOKBACK: u16 = 50;

/// A connected Slack workspace. Build it with [`SlackChannel::new`], mount
/// [`SlackChannel::http_router`] in HTTP mode, and let the core call [`Channel::run`].
pub struct SlackChannel {
    config: SlackConfig,
    client: Arc<SlackHyperClient>,
    bot_token: SlackApiToken,
    intake: Arc<Intake>,
    /// DM conversation ids by user id: `conversations.open` is tier 3, and a DM id never changes.
    dms: Mutex<HashMap<String, String>>,
}

impl SlackChannel {
    /// Validates `config` and builds the Web API client. Nothing is sent until a call is made.
    pub fn new(config: SlackConfig) -> Result<Self, SlackError> {
        config.validate()?;
        // slack-morphism's own connector is https-only; this one also speaks http:// so a local
        // fake (or an operator's proxy) can stand in for slack.com.
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_native_roots()
            .map_err(|error| SlackError::Tls {
                reason: error.to_string(),
            })?
            .https_or_http()
            .enable_http1()
            .build();
        let connector =
            SlackClientHyperConnector::with_connector(https).with_slack_api_url(&config.api_base());
        let bot_token = SlackApiToken::new(config.bot_token.expose().into());
        Ok(Self {
            client: Arc::new(SlackClient::new(connector)),
            bot_token,
            intake: Arc::new(Intake::new(
                config.account_id.clone(),
                config.command_reply_wait,
            )),
            dms: Mutex::new(HashMap::new()),
            config,
        })
    }

    /// [`new`](Self::new), then `auth.test`, and in Socket Mode `apps.connections.open` with
    /// the app token: a wrong token or an unreachable API stops the start here, as it does for
    /// the other channels, instead of leaving a channel that never answers. (Socket Mode's own
    /// listener retries a refused app token for ever.) The connection URL the check gets is
    /// never used; each one is good for a single connection and expires.
    pub async fn connect(config: SlackConfig) -> Result<Self, SlackError> {
        let channel = Self::new(config)?;
        channel
            .identify()
            .await
            .map_err(|source| SlackError::Connect { source })?;
        if let (SlackMode::Socket, Some(app_token)) =
            (channel.config.mode, &channel.config.app_token)
        {
            let app_token = SlackApiToken::new(app_token.expose().into());
            channel
                .client
                .open_session(&app_token)
                .apps_connections_open(&SlackApiAppsConnectionOpenRequest::new())
                .await
                .map_err(|error| SlackError::AppToken {
                    reason: error.to_string(),
                })?;
        }
        Ok(channel)
    }

    /// The HTTP-mode endpoint ([`http::EVENTS_PATH`]) for the gateway to mount; it accepts
    /// everything once [`Channel::run`] is running, and button presses alone while
    /// [`Channel::listen`] is.
    pub fn http_router(&self) -> Result<Router, SlackError> {
        let secret = self
            .config
            .signing_secret
            .clone()
            .ok_or(SlackError::InvalidConfig {
                field: "signingSecret",
                reason: "HTTP mode needs the app's signing secret".to_owned(),
            })?;
        Ok(http::router(
            Arc::clone(&self.intake),
            RequestVerifier::new(secret),
        ))
    }

    fn session(&self) -> SlackClientSession<'_, SlackClientHyperHttpsConnector> {
        self.client.open_session(&self.bot_token)
    }

    /// The conversation id `route` names (a user's DM opened first).
    async fn conversation(&self, route: &Route) -> Result<String, ChatError> {
        match &route.destination {
            Destination::Dm(user) => self.dm_channel(user).await,
            Destination::Chat(id) => Ok(id.clone()),
        }
    }

    async fn dm_channel(&self, user: &str) -> Result<String, ChatError> {
        let known = self
            .dms
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(user)
            .cloned();
        if let Some(id) = known {
            return Ok(id);
        }
        let request = SlackApiConversationsOpenRequest::new().with_users(vec![user.into()]);
        let opened = self
            .session()
            .conversations_open(&request)
            .await
            .map_err(|error| classify(&error))?;
        let id = opened.channel.id.0;
        self.dms
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(user.to_owned(), id.clone());
        Ok(id)
    }

    /// Checks the bot token and learns the bot's user id, so its own messages are ignored.
    async fn identify(&self) -> Result<(), ChatError> {
        let me = self
            .session()
            .auth_test()
            .await
            .map_err(|error| classify(&error))?;
        self.intake.set_me(Me {
            bot_user_id: me.user_id.0,
            workspace: me.team_id.0,
        });
        Ok(())
    }

    async fn answer_command(
        &self,
        key: &str,
        response_url: &str,
        text: &str,
    ) -> Result<(), ChatError> {
        let Err(text) = self.intake.replies.fulfil(key, text) else {
            return Ok(());
        };
        let url = Url::parse(response_url).map_err(|error| ChatError::Permanent {
            channel: CHANNEL.to_owned(),
            reason: format!("slash command response_url is not a URL: {error}"),
        })?;
        let request = SlackApiPostWebhookMessageRequest::new(answer_content(&text));
        self.client
            .respond_to_event(&SlackResponseUrl(url), &request)
            .await
            .map_err(|error| classify(&error))?;
        Ok(())
    }
}

#[async_trait]
impl Channel for SlackChannel {
    fn name(&self) -> &str {
        CHANNEL
    }

    /// Slack's published limits: `chat.postMessage` about one message a second per channel;
    /// `chat.update` and `chat.delete` tier 3 (50 a minute) across the workspace.
    /// (`conversations.open`, also tier 3, runs once per approver: its answer is kept.)
    fn pacing(&self) -> Pacing {
        Pacing {
            chat: Some(Window::per_second(1)),
            group: None,
            bot: None,
            edits: Some(Window::per_minute(50)),
            max_in_flight: self.config.max_connections,
        }
    }

    /// Slack keeps the message metadata [`Channel::send`] writes, so a message an earlier
    /// attempt left is found in the conversation's recent history.
    fn finds_sent(&self) -> bool {
        true
    }

    /// Slack has no idempotency key for `chat.postMessage`: the key goes into the message's
    /// metadata instead, where [`Channel::find_sent`] looks for it.
    async fn send(
        &self,
        route: &Route,
        card: &Card,
        key: &SendKey,
    ) -> Result<MessageLocator, ChatError> {
        let conversation = self.conversation(route).await?;
        let content = encode_card(card).with_metadata(SlackMessageMetadata {
            event_type: SENT_EVENT.to_owned(),
            event_payload: Some([(SENT_KEY.to_owned(), key.as_str().to_owned())].into()),
        });
        let mut request = SlackApiChatPostMessageRequest::new(conversation.into(), content);
        if let Some(thread) = &route.thread_id {
            request = request.with_thread_ts(thread.clone().into());
        }
        let posted = self
            .session()
            .chat_post_message(&request)
            .await
            .map_err(|error| classify(&error))?;
        Ok(MessageLocator {
            channel: CHANNEL.to_owned(),
            account_id: self.config.account_id.clone(),
            chat_id: posted.channel.0,
            message_id: posted.ts.0,
            thread_id: route.thread_id.clone(),
        })
    }

    /// Looks through the conversation's latest [`LOOKBACK`] messages for the one whose
    /// metadata carries `key`. Needs the `*:history` scopes the manifest asks for anyway (to
    /// read typed `/approve`). Messages in threads are not looked for: `conversations.replies`
    /// returns metadata only with `include_all_metadata`, which slack-morphism 2.31 cannot
    /// send, so a threaded message is sent again (the documented lost-answer duplicate).
    async fn find_sent(
        &self,
        route: &Route,
        key: &SendKey,
    ) -> Result<Option<MessageLocator>, ChatError> {
        if route.thread_id.is_some() {
            return Ok(None);
        }
        let conversation = self.conversation(route).await?;
        let request = SlackApiConversationsHistoryRequest::new()
            .with_channel(conversation.clone().into())
            .with_include_all_metadata(true)
            .with_limit(LOOKBACK);
        let messages = self
            .session()
            .conversations_history(&request)
            .await
            .map_err(|error| classify(&error))?
            .messages;
        let found = messages.into_iter().find(|message| {
            message.content.metadata.as_ref().is_some_and(|metadata| {
                metadata.event_type == SENT_EVENT
                    && metadata
                        .event_payload
                        .as_ref()
                        .and_then(|payload| payload.get(SENT_KEY))
                        .is_some_and(|sent| sent == key.as_str())
            })
        });
        Ok(found.map(|message| MessageLocator {
            channel: CHANNEL.to_owned(),
            account_id: self.config.account_id.clone(),
            chat_id: conversation,
            message_id: message.origin.ts.0,
            thread_id: None,
        }))
    }

    async fn update(&self, message: &MessageLocator, card: &Card) -> Result<(), ChatError> {
        let request = SlackApiChatUpdateRequest::new(
            message.chat_id.clone().into(),
            encode_card(card),
            message.message_id.clone().into(),
        );
        match self.session().chat_update(&request).await {
            Ok(_) => Ok(()),
            // Deleted (by a person): nothing is left to show buttons.
            Err(SlackClientError::ApiError(api)) if api.code == "message_not_found" => Ok(()),
            Err(error) => Err(per_method(&error)),
        }
    }

    async fn delete(&self, message: &MessageLocator) -> Result<(), ChatError> {
        let request = SlackApiChatDeleteRequest::new(
            message.chat_id.clone().into(),
            message.message_id.clone().into(),
        );
        self.session()
            .chat_delete(&request)
            .await
            .map_err(|error| per_method(&error))?;
        Ok(())
    }

    async fn answer(&self, interaction: &InteractionRef, text: &str) -> Result<(), ChatError> {
        match Handle::decode(&interaction.handle) {
            Some(Handle::Command { key, response_url }) => {
                self.answer_command(&key, &response_url, text).await
            }
            Some(Handle::Press {
                channel,
                user,
                thread_ts,
            }) => {
                let content = answer_content(text);
                let mut request =
                    SlackApiChatPostEphemeralRequest::new(channel.into(), user.into(), content);
                if let Some(thread) = thread_ts {
                    request = request.with_thread_ts(thread.into());
                }
                self.session()
                    .chat_post_ephemeral(&request)
                    .await
                    .map_err(|error| per_method(&error))?;
                Ok(())
            }
            None => Err(ChatError::Permanent {
                channel: CHANNEL.to_owned(),
                reason: "interaction handle was not issued by the slack adapter".to_owned(),
            }),
        }
    }

    /// Events and slash commands are then checked against replays in `memory` at every
    /// gateway, the holder included, so a replica without the lease may take them.
    fn share_replay_memory(&self, memory: Arc<dyn ReplayMemory>) {
        self.intake.share_replays(memory);
    }

    async fn run(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        self.identify().await?;
        self.intake
            .attach(Some((inbound.clone(), Scope::Everything)));
        let outcome = match (self.config.mode, &self.config.app_token) {
            (SlackMode::Socket, Some(app_token)) => {
                let app_token = SlackApiToken::new(app_token.expose().into());
                socket::listen(
                    Arc::clone(&self.client),
                    &app_token,
                    Arc::clone(&self.intake),
                    self.config.socket_connections,
                    &inbound,
                )
                .await
            }
            (SlackMode::Socket, None) => Err(ChatError::Permanent {
                channel: CHANNEL.to_owned(),
                reason: "socket mode needs channels.slack.appToken".to_owned(),
            }),
            (SlackMode::Http, _) => {
                inbound.closed().await;
                Ok(())
            }
        };
        self.intake.attach(None);
        outcome
    }

    /// In HTTP mode, once `auth.test` has said which workspace is home: button presses (see
    /// [`Scope::Presses`]), and events and slash commands too when the gateways share their
    /// replay memory ([`Channel::share_replay_memory`]). Nothing before, and nothing in
    /// Socket Mode, whose connection only the holder opens.
    async fn listen(&self, inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        if self.config.mode == SlackMode::Http {
            // Stopped at once when the lease comes (the holder's `run` then takes over), even
            // while `auth.test` is under way.
            loop {
                let identified = tokio::select! {
                    () = inbound.closed() => return Ok(()),
                    identified = self.identify() => identified,
                };
                let Err(error) = identified else { break };
                tracing::warn!(channel = CHANNEL, %error, "Cannot check the bot token; presses here wait for it.");
                tokio::select! {
                    () = inbound.closed() => return Ok(()),
                    () = tokio::time::sleep(IDENTIFY_RETRY) => {}
                }
            }
            self.intake
                .attach(Some((inbound.clone(), self.intake.listener_scope())));
        }
        inbound.closed().await;
        self.intake.attach(None);
        Ok(())
    }
}

/// How often a gateway not holding the chat connections checks the bot token again after a
/// failure, before it takes presses.
const IDENTIFY_RETRY: std::time::Duration = std::time::Duration::from_secs(5);
