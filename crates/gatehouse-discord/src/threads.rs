//! Which guild channels are threads, and of which parent: a message typed in a thread carries
//! only the thread's own channel id, and `/elevated` there must also find a session bound to
//! the parent channel (and an `off` must reach it). Learned once per channel with
//! `GET /channels/{id}` and kept, in a bounded map.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde::Deserialize;
use serenity::all::{ChannelId, ChannelType};
use serenity::http::{LightMethod, Route};

use crate::rest::Rest;

/// Channels remembered at most; the map starts over past this, so a guild with endless
/// threads cannot grow it without bound.
const MAX_CHANNELS: usize = 4096;

/// The part of a channel object this needs.
#[derive(Deserialize)]
struct ChannelObject {
    #[serde(rename = "type")]
    kind: ChannelType,
    parent_id: Option<ChannelId>,
}

/// Each channel seen: `Some(parent)` for a thread, `None` for anything else.
#[derive(Debug, Default)]
pub(crate) struct Threads {
    known: Mutex<HashMap<ChannelId, Option<ChannelId>>>,
}

impl Threads {
    /// The parent of `channel` when it is a thread. A lookup that fails is not remembered and
    /// reads as "not a thread": the message then reaches a binding of the thread itself only.
    pub(crate) async fn parent_of(&self, rest: &Rest, channel: ChannelId) -> Option<ChannelId> {
        if let Some(known) = self.lock().get(&channel) {
            return *known;
        }
        let route = Route::Channel {
            channel_id: channel,
        };
        let object: ChannelObject = match rest.json(route, LightMethod::Get, None::<&()>).await {
            Ok(object) => object,
            Err(error) => {
                tracing::warn!(channel = crate::classify::CHANNEL, channel_id = %channel, error = %error, "Cannot tell whether a channel is a thread.");
                return None;
            }
        };
        let parent = is_thread(object.kind).then_some(object.parent_id).flatten();
        let mut known = self.lock();
        if known.len() >= MAX_CHANNELS {
            known.clear();
        }
        known.insert(channel, parent);
        parent
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ChannelId, Option<ChannelId>>> {
        self.known.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether a channel of `kind` is a thread.
pub(crate) fn is_thread(kind: ChannelType) -> bool {
    matches!(
        kind,
        ChannelType::PublicThread | ChannelType::PrivateThread | ChannelType::NewsThread
    )
}
