//! Which approval a delivered chat message shows, so a reply to a card names its approval.
//!
//! The dispatcher keeps the index with the approval's other chat state and forgets it a short
//! grace after the approval settles, so memory follows the approvals that still need it; this
//! is the view of it the inbound side asks.

use std::sync::Arc;

use gatehouse_chat::dispatch::Dispatcher;
use gatehouse_chat::route::MessageLocator;

use super::shared::SharedTokens;

/// Delivered cards, by message.
#[derive(Debug)]
pub(super) struct CardIndex {
    dispatcher: Arc<Dispatcher<SharedTokens>>,
}

impl CardIndex {
    pub(super) fn new(dispatcher: Arc<Dispatcher<SharedTokens>>) -> Self {
        CardIndex { dispatcher }
    }

    /// The approval a delivered message shows, while it is pending or within its grace.
    pub(super) fn approval(&self, message: &MessageLocator) -> Option<String> {
        self.dispatcher.card_approval(message)
    }
}
