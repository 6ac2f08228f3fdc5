//! `ScriptedPlatform`: a small in-process stand-in for an external chat platform (not for any
//! Gatehouse component). It records every call with its (paused) time and the cards it was given,
//! fails the next calls on command, and can refuse some routes for good (like a user who never
//! opened a DM with the bot).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use gatehouse_chat::channel::{Channel, Inbound, InteractionRef};
use gatehouse_chat::error::ChatError;
use gatehouse_chat::render::Card;
use std::collections::HashMap;

use gatehouse_chat::route::{Destination, MessageLocator, Route, SendKey};
use tokio::sync::mpsc;
use tokio::time::Instant;

pub(crate) struct ScriptedPlatform {
    name: String,
    start: Instant,
    calls: Mutex<Vec<(String, Duration)>>,
    cards: Mutex<Vec<(String, Card)>>,
    script: Mutex<VecDeque<ChatError>>,
    refused_routes: Mutex<Vec<Route>>,
    next_id: Mutex<u32>,
    /// How long each call takes to answer, as a platform across a network does.
    latency: Duration,
    /// Remembers each send's key and answers a repeat with the first message, as Discord's
    /// enforced nonce does.
    idempotent: Option<Mutex<HashMap<SendKey, MessageLocator>>>,
    /// Sends that deliver but whose answer is lost on the way back.
    lose_answers: Mutex<u32>,
}

impl ScriptedPlatform {
    pub(crate) fn failing_with(name: &str, errors: Vec<ChatError>) -> Self {
        Self {
            name: name.to_owned(),
            start: Instant::now(),
            calls: Mutex::default(),
            cards: Mutex::default(),
            script: Mutex::new(errors.into()),
            refused_routes: Mutex::default(),
            next_id: Mutex::default(),
            latency: Duration::ZERO,
            idempotent: None,
            lose_answers: Mutex::default(),
        }
    }

    /// The next `count` sends deliver, but their caller sees a dropped connection.
    pub(crate) fn losing_answers(self, count: u32) -> Self {
        *self.lose_answers.lock().unwrap() = count;
        self
    }

    /// Keeps each send's key, as Discord does with `enforce_nonce`.
    pub(crate) fn idempotent(mut self) -> Self {
        self.idempotent = Some(Mutex::default());
        self
    }

    /// Answers each call only `latency` after it was made.
    pub(crate) fn answering_after(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    pub(crate) fn refusing(self, route: Route) -> Self {
        self.refused_routes.lock().unwrap().push(route);
        self
    }

    async fn record(&self, call: String, card: Option<&Card>) -> Result<(), ChatError> {
        self.calls
            .lock()
            .unwrap()
            .push((call.clone(), self.start.elapsed()));
        if let Some(card) = card {
            self.cards.lock().unwrap().push((call, card.clone()));
        }
        let answer = self.script.lock().unwrap().pop_front();
        if !self.latency.is_zero() {
            tokio::time::sleep(self.latency).await;
        }
        match answer {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    pub(crate) fn calls(&self) -> Vec<(String, Duration)> {
        self.calls.lock().unwrap().clone()
    }

    pub(crate) fn cards(&self) -> Vec<(String, Card)> {
        self.cards.lock().unwrap().clone()
    }
}

#[async_trait]
impl Channel for ScriptedPlatform {
    fn name(&self) -> &str {
        &self.name
    }

    fn idempotent_sends(&self) -> bool {
        self.idempotent.is_some()
    }

    async fn send(
        &self,
        route: &Route,
        card: &Card,
        key: &SendKey,
    ) -> Result<MessageLocator, ChatError> {
        let earlier = self
            .idempotent
            .as_ref()
            .and_then(|sent| sent.lock().unwrap().get(key).cloned());
        if let Some(earlier) = earlier {
            self.record(format!("send {route} (same key)"), None)
                .await?;
            return Ok(earlier);
        }
        self.record(format!("send {route}"), Some(card)).await?;
        if self.refused_routes.lock().unwrap().contains(route) {
            return Err(ChatError::Permanent {
                channel: self.name.clone(),
                reason: "bot can't initiate conversation with a user".into(),
            });
        }
        let next = {
            let mut next = self.next_id.lock().unwrap();
            *next += 1;
            *next
        };
        let chat_id = match &route.destination {
            Destination::Dm(user) => format!("dm-{user}"),
            Destination::Chat(chat) => chat.clone(),
        };
        let locator = MessageLocator {
            channel: self.name.clone(),
            account_id: route.account_id.clone(),
            chat_id,
            message_id: next.to_string(),
            thread_id: route.thread_id.clone(),
        };
        if let Some(sent) = &self.idempotent {
            sent.lock().unwrap().insert(key.clone(), locator.clone());
        }
        let mut lose = self.lose_answers.lock().unwrap();
        if *lose > 0 {
            *lose -= 1;
            return Err(ChatError::Transient {
                channel: self.name.clone(),
                reason: "connection closed before message completed".into(),
            });
        }
        Ok(locator)
    }

    async fn update(&self, message: &MessageLocator, card: &Card) -> Result<(), ChatError> {
        self.record(format!("update {}", message.message_id), Some(card))
            .await
    }

    async fn delete(&self, message: &MessageLocator) -> Result<(), ChatError> {
        self.record(format!("delete {}", message.message_id), None)
            .await
    }

    async fn answer(&self, _interaction: &InteractionRef, text: &str) -> Result<(), ChatError> {
        self.record(format!("answer {text}"), None).await
    }

    async fn run(&self, _inbound: mpsc::Sender<Inbound>) -> Result<(), ChatError> {
        Ok(())
    }
}
