//! Gateway sessions: sequence numbers, the dispatch log kept for RESUME, intents filtering.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;

use super::BOT_ID;
use crate::ws::Outbound;

/// Intent bits that decide whether MESSAGE_CREATE reaches the bot, and with what content.
const GUILD_MESSAGES: u64 = 1 << 9;
const DIRECT_MESSAGES: u64 = 1 << 12;
const MESSAGE_CONTENT: u64 = 1 << 15;

/// The connection a session is attached to.
type Live = (u64, UnboundedSender<Outbound>);

#[derive(Debug)]
struct Session {
    seq: u64,
    intents: u64,
    sent: Vec<Value>,
    live: Option<Live>,
}

/// All sessions; the most recently identified one receives injected dispatches.
#[derive(Debug)]
pub(crate) struct Sessions {
    sessions: HashMap<String, Session>,
    current: Option<String>,
    next_session: u64,
    next_conn: u64,
    /// HELLO's `heartbeat_interval`.
    pub(crate) heartbeat_interval_ms: u64,
}

impl Default for Sessions {
    fn default() -> Self {
        Self {
            sessions: HashMap::new(),
            current: None,
            next_session: 0,
            next_conn: 0,
            heartbeat_interval_ms: 41_250,
        }
    }
}

/// Where an injected dispatch went.
#[derive(Debug, PartialEq)]
pub(crate) enum Dispatched {
    /// Sent on a live connection with this sequence number.
    Live(u64),
    /// Logged with this sequence number for replay on RESUME: no connection is attached.
    AwaitingResume(u64),
    /// Discord would not send it under the session's intents.
    Filtered(&'static str),
}

impl Sessions {
    /// A fresh connection number.
    pub(crate) fn connection(&mut self) -> u64 {
        self.next_conn += 1;
        self.next_conn
    }

    /// Whether a connection already identified or resumed.
    pub(crate) fn is_attached(&self, conn: u64) -> bool {
        self.sessions
            .values()
            .any(|s| s.live.as_ref().is_some_and(|(c, _)| *c == conn))
    }

    /// IDENTIFY: a new session, READY sent on the connection.
    pub(crate) fn identify(&mut self, live: Live, intents: u64, gateway_url: &str) {
        self.next_session += 1;
        let id = format!("fake-session-{}", self.next_session);
        self.sessions.insert(
            id.clone(),
            Session {
                seq: 0,
                intents,
                sent: Vec::new(),
                live: Some(live),
            },
        );
        self.current = Some(id.clone());
        let ready = json!({
            "v": 10, "user": super::messages::bot_user(), "guilds": [], "session_id": id,
            "resume_gateway_url": gateway_url, "shard": [0, 1],
            "application": {"id": super::APP_ID.to_string(), "flags": 0},
        });
        self.send(&id, "READY", ready);
    }

    /// RESUME: replays what the client missed, then RESUMED; `false` means the session is unknown.
    pub(crate) fn resume(&mut self, live: Live, session_id: &str, seq: u64) -> bool {
        let Some(session) = self.sessions.get_mut(session_id) else {
            return false;
        };
        for frame in session
            .sent
            .iter()
            .filter(|f| f.get("s").and_then(Value::as_u64) > Some(seq))
        {
            let _ = live.1.send(Outbound::Frame(frame.clone()));
        }
        session.live = Some(live);
        self.current = Some(session_id.to_owned());
        self.send(session_id, "RESUMED", json!({}));
        true
    }

    /// The connection ended: its session waits for a RESUME.
    pub(crate) fn detach(&mut self, conn: u64) {
        for session in self.sessions.values_mut() {
            if session.live.as_ref().is_some_and(|(c, _)| *c == conn) {
                session.live = None;
            }
        }
    }

    /// Closes every live connection; `invalidate` also forgets the sessions (RESUME then fails).
    pub(crate) fn disconnect(&mut self, how: impl Fn() -> Outbound, invalidate: bool) -> usize {
        let mut closed = 0;
        for session in self.sessions.values_mut() {
            if let Some((_, tx)) = session.live.take() {
                closed += usize::from(tx.send(how()).is_ok());
            }
        }
        if invalidate {
            self.sessions.clear();
            self.current = None;
        }
        closed
    }

    /// Sends an injected event to the current session, as Discord would under its intents.
    pub(crate) fn dispatch(&mut self, event: &str, mut data: Value) -> Option<Dispatched> {
        let id = self.current.clone()?;
        let session = self.sessions.get(&id)?;
        if event == "MESSAGE_CREATE" {
            let in_guild = data.get("guild_id").is_some();
            let needed = if in_guild {
                GUILD_MESSAGES
            } else {
                DIRECT_MESSAGES
            };
            if session.intents & needed == 0 {
                return Some(Dispatched::Filtered(if in_guild {
                    "session lacks the GUILD_MESSAGES intent"
                } else {
                    "session lacks the DIRECT_MESSAGES intent"
                }));
            }
            let mentions_bot = data
                .get("mentions")
                .and_then(Value::as_array)
                .is_some_and(|m| {
                    m.iter()
                        .any(|u| u.get("id") == Some(&json!(BOT_ID.to_string())))
                });
            if in_guild && !mentions_bot && session.intents & MESSAGE_CONTENT == 0 {
                // Without MESSAGE_CONTENT Discord blanks these fields for guild messages.
                data["content"] = json!("");
                data["embeds"] = json!([]);
                data["attachments"] = json!([]);
                data["components"] = json!([]);
            }
        }
        let live = session.live.is_some();
        let seq = self.send(&id, event, data);
        Some(if live {
            Dispatched::Live(seq)
        } else {
            Dispatched::AwaitingResume(seq)
        })
    }

    fn send(&mut self, session_id: &str, event: &str, data: Value) -> u64 {
        let Some(session) = self.sessions.get_mut(session_id) else {
            return 0;
        };
        session.seq += 1;
        let frame = json!({"op": 0, "t": event, "s": session.seq, "d": data});
        if let Some((_, tx)) = &session.live {
            let _ = tx.send(Outbound::Frame(frame.clone()));
        }
        session.sent.push(frame);
        session.seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

    fn frames(rx: &mut UnboundedReceiver<Outbound>) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        while let Ok(Outbound::Frame(f)) = rx.try_recv() {
            out.push((
                f["t"].as_str().unwrap_or("").to_owned(),
                f["s"].as_u64().unwrap_or(0),
            ));
        }
        out
    }

    #[test]
    fn resume_replays_missed_dispatches_in_order() {
        let mut sessions = Sessions::default();
        let (tx, mut rx) = unbounded_channel();
        sessions.identify((1, tx), GUILD_MESSAGES | MESSAGE_CONTENT, "ws://x");
        assert_eq!(frames(&mut rx), [("READY".to_owned(), 1)]);
        sessions.detach(1);
        let message = json!({"guild_id": "1", "content": "hi"});
        assert_eq!(
            sessions.dispatch("MESSAGE_CREATE", message),
            Some(Dispatched::AwaitingResume(2))
        );
        let (tx, mut rx) = unbounded_channel();
        assert!(sessions.resume((2, tx), "fake-session-1", 1));
        assert_eq!(
            frames(&mut rx),
            [("MESSAGE_CREATE".to_owned(), 2), ("RESUMED".to_owned(), 3)]
        );
        assert!(!sessions.resume((3, unbounded_channel().0), "nope", 0));
    }

    #[test]
    fn blanks_guild_content_without_the_message_content_intent() {
        let mut sessions = Sessions::default();
        let (tx, mut rx) = unbounded_channel();
        sessions.identify((1, tx), GUILD_MESSAGES, "ws://x");
        let _ = frames(&mut rx);
        sessions.dispatch(
            "MESSAGE_CREATE",
            json!({"guild_id": "1", "content": "/approve x"}),
        );
        let Ok(Outbound::Frame(frame)) = rx.try_recv() else {
            panic!("no frame")
        };
        assert_eq!(frame["d"]["content"], "");
        let dm = sessions.dispatch("MESSAGE_CREATE", json!({"content": "hi"}));
        assert_eq!(
            dm,
            Some(Dispatched::Filtered(
                "session lacks the DIRECT_MESSAGES intent"
            ))
        );
    }
}
