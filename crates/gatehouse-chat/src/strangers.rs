//! How often the bot answers people who may not decide anything on a channel (not an approver
//! there, not admitted by `tools.elevated.allowFrom`): answer once, then stay quiet for a while.
//!
//! Replies share the platform with the approval cards: every call counts against the same rate
//! limits, a 429 pauses the whole channel, and a reply in a chat waits its turn ahead of a card
//! for that chat. Without a limit, a stranger typing a hundred commands held a card back past its
//! approval's timeout. So a stranger gets at most one reply per sender window, a shared chat at
//! most one reply to strangers per chat window, and a channel a fixed number a minute in all;
//! what is over the limit is dropped (and logged), never queued. People who may decide are
//! never limited here.
//!
//! Pure bookkeeping with the time passed in; bounded: entries past their window are dropped,
//! and past [`MAX_TRACKED`] senders or chats nothing more is answered until old ones expire.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// `channels.<name>.execApprovals.strangerReplies`, with the defaults operators get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrangerReplySettings {
    /// `senderQuietSeconds`: after a reply, that sender gets no other for this long.
    pub sender_quiet_secs: u64,
    /// `chatQuietSeconds`: after a reply in a shared chat, no other reply to a stranger goes
    /// into that chat for this long.
    pub chat_quiet_secs: u64,
    /// `perMinute`: replies to strangers on the channel in any minute, private ones included
    /// (0: none at all).
    pub per_minute: u32,
}

impl Default for StrangerReplySettings {
    fn default() -> Self {
        Self {
            sender_quiet_secs: 600,
            chat_quiet_secs: 60,
            per_minute: 20,
        }
    }
}

/// How a reply would reach its stranger, which decides the limits it is held to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyReach {
    /// Into a chat others read: every limit.
    Public,
    /// To the sender alone without an interaction (a DM, an ephemeral message): the sender's
    /// window and the channel's minute.
    Private,
    /// The answer an interaction (a slash command, a button press) waits for, private by
    /// nature: the channel's minute only.
    Interaction,
}

/// Senders and chats tracked at most per kind; past this, strangers get no reply until
/// entries expire, so a flood of new names cannot grow memory without bound.
pub const MAX_TRACKED: usize = 16_384;

const MINUTE_MS: u64 = 60_000;

/// The limits of every channel, and what each has answered lately.
#[derive(Debug, Default)]
pub struct StrangerReplies {
    settings: HashMap<String, StrangerReplySettings>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// (channel, sender) → when they were last answered.
    senders: HashMap<(String, String), u64>,
    /// (channel, chat) → when a stranger was last answered publicly there.
    chats: HashMap<(String, String), u64>,
    /// channel → when each reply of the last minute went.
    recent: HashMap<String, VecDeque<u64>>,
}

impl StrangerReplies {
    /// Limits per channel; a channel not listed gets the defaults.
    pub fn new(settings: impl IntoIterator<Item = (String, StrangerReplySettings)>) -> Self {
        Self {
            settings: settings.into_iter().collect(),
            state: Mutex::new(State::default()),
        }
    }

    /// The limits of `channel`.
    pub fn settings(&self, channel: &str) -> StrangerReplySettings {
        self.settings.get(channel).copied().unwrap_or_default()
    }

    /// Whether a reply to stranger `sender` in `chat` on `channel` may go now; a `true` counts
    /// as sent.
    pub fn allow(
        &self,
        channel: &str,
        chat: &str,
        sender: &str,
        reach: ReplyReach,
        now_ms: u64,
    ) -> bool {
        let limits = self.settings(channel);
        let sender_quiet = limits.sender_quiet_secs.saturating_mul(1000);
        let chat_quiet = limits.chat_quiet_secs.saturating_mul(1000);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let sender_key = (channel.to_owned(), sender.to_owned());
        let chat_key = (channel.to_owned(), chat.to_owned());
        let recent_at = |map: &HashMap<(String, String), u64>, key, window: u64| {
            map.get(key)
                .is_some_and(|at| now_ms.saturating_sub(*at) < window)
        };
        if reach != ReplyReach::Interaction && recent_at(&state.senders, &sender_key, sender_quiet)
        {
            return false;
        }
        if reach == ReplyReach::Public && recent_at(&state.chats, &chat_key, chat_quiet) {
            return false;
        }
        let recent = state.recent.entry(channel.to_owned()).or_default();
        while recent
            .front()
            .is_some_and(|at| now_ms.saturating_sub(*at) >= MINUTE_MS)
        {
            recent.pop_front();
        }
        if recent.len() >= limits.per_minute as usize {
            return false;
        }
        if reach != ReplyReach::Interaction
            && !remember(&mut state.senders, sender_key, now_ms, sender_quiet)
        {
            return false;
        }
        if reach == ReplyReach::Public && !remember(&mut state.chats, chat_key, now_ms, chat_quiet)
        {
            return false;
        }
        state
            .recent
            .entry(channel.to_owned())
            .or_default()
            .push_back(now_ms);
        true
    }
}

/// Records `key` at `now_ms`, first dropping entries older than `window` when the map is full;
/// `false` (nothing recorded) when it is still full.
fn remember(
    map: &mut HashMap<(String, String), u64>,
    key: (String, String),
    now_ms: u64,
    window: u64,
) -> bool {
    if map.len() >= MAX_TRACKED && !map.contains_key(&key) {
        map.retain(|_, at| now_ms.saturating_sub(*at) < window);
        if map.len() >= MAX_TRACKED {
            return false;
        }
    }
    map.insert(key, now_ms);
    true
}
