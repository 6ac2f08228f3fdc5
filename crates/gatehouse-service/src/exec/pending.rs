//! Who asked for which approval, and how many each token has pending for each agent.
//!
//! The cap counts per token and agent: the agent id is the requester's word, so counting by it
//! alone let one token fill another's cap by naming its agent. For the same reason a second cap
//! counts per token over every agent id it names: without it, a token whose `agents` is unset
//! could hold any number of pending approvals by naming a new agent id for each.
//!
//! The cap is reserved before the approval is created, so concurrent requests cannot overshoot
//! it. Ownership outlives the decision for [`OWNERSHIP_KEPT`], long enough for the requester to
//! read the outcome, and is then forgotten so memory stays bounded. The decisions offered are
//! kept beside the owner, so `get` and `list` can tell operators which ones they may give.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use gatehouse_approvals::Offered;
use uuid::Uuid;

use crate::error::{PendingHolder, ServiceError};

/// What an approval whose offer is not known may be answered with: never allow-always.
pub(crate) const ONCE_OR_DENY: Offered = Offered {
    allow_always: false,
};

/// How long an agent may still read a settled approval it created.
const OWNERSHIP_KEPT: Duration = Duration::from_secs(15 * 60);

/// How many approvals may be pending at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PendingLimits {
    /// For one agent id, counted per token.
    pub(crate) per_agent: usize,
    /// For one token, over every agent id it names.
    pub(crate) per_token: usize,
}

/// The pending caps and the owner index.
#[derive(Debug)]
pub(crate) struct Pending {
    limits: PendingLimits,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Pending approvals by (token name, agent id).
    per_agent: HashMap<(String, String), usize>,
    /// Pending approvals by token name, over all its agents.
    per_token: HashMap<String, usize>,
    approvals: HashMap<Uuid, Owned>,
    /// Settled approvals, oldest first, so forgetting them never scans the whole index.
    settled_order: VecDeque<(Instant, Uuid)>,
}

#[derive(Debug)]
struct Owned {
    owner: String,
    agent: String,
    offered: Offered,
    /// When it settled; `None` while pending.
    settled: Option<Instant>,
}

/// A reserved place under an agent's cap; released unless committed to an approval id.
pub(crate) struct Slot<'a> {
    pending: &'a Pending,
    agent: String,
    owner: String,
    committed: bool,
}

impl Pending {
    pub(crate) fn new(limits: PendingLimits) -> Self {
        Self {
            limits,
            state: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes one place under `agent`'s cap and `owner`'s, or refuses with `pending_limit`.
    pub(crate) fn reserve(&self, agent: &str, owner: &str) -> Result<Slot<'_>, ServiceError> {
        let mut state = self.lock();
        let token_count = state.per_token.get(owner).copied().unwrap_or(0);
        let agent_key = (owner.to_owned(), agent.to_owned());
        let agent_count = state.per_agent.get(&agent_key).copied().unwrap_or(0);
        if agent_count >= self.limits.per_agent {
            return Err(ServiceError::PendingLimit {
                holder: PendingHolder::Agent(agent.to_owned()),
                limit: self.limits.per_agent,
            });
        }
        if token_count >= self.limits.per_token {
            return Err(ServiceError::PendingLimit {
                holder: PendingHolder::Token(owner.to_owned()),
                limit: self.limits.per_token,
            });
        }
        *state.per_agent.entry(agent_key).or_default() += 1;
        *state.per_token.entry(owner.to_owned()).or_default() += 1;
        Ok(Slot {
            pending: self,
            agent: agent.to_owned(),
            owner: owner.to_owned(),
            committed: false,
        })
    }

    /// Frees the agent's place once approval `id` is settled; keeps its owner for a while.
    pub(crate) fn settled(&self, id: Uuid) {
        let mut state = self.lock();
        let now = Instant::now();
        forget_expired(&mut state, now);
        let Some(owned) = state.approvals.get_mut(&id) else {
            // The event outran `commit`: leave a mark so `commit` frees the place itself.
            state.approvals.insert(
                id,
                Owned {
                    owner: String::new(),
                    agent: String::new(),
                    offered: ONCE_OR_DENY,
                    settled: Some(now),
                },
            );
            state.settled_order.push_back((now, id));
            return;
        };
        if owned.settled.is_some() {
            return;
        }
        owned.settled = Some(now);
        let key = (owned.owner.clone(), owned.agent.clone());
        state.settled_order.push_back((now, id));
        decrement(&mut state, key);
    }

    /// How many approvals are pending (or being created) now, over every token and agent.
    pub(crate) fn total(&self) -> usize {
        self.lock().per_token.values().sum()
    }

    /// The decisions offered for approval `id`, while it is remembered.
    pub(crate) fn offered(&self, id: Uuid) -> Option<Offered> {
        self.lock().approvals.get(&id).map(|owned| owned.offered)
    }

    /// The token name that created approval `id`, while it is remembered.
    pub(crate) fn owner_of(&self, id: Uuid) -> Option<String> {
        self.lock()
            .approvals
            .get(&id)
            .map(|owned| owned.owner.clone())
    }
}

/// Drops owners settled longer than [`OWNERSHIP_KEPT`] ago, in settle order: the work per call
/// is the number forgotten, not the size of the index.
fn forget_expired(state: &mut State, now: Instant) {
    while let Some(&(at, id)) = state.settled_order.front() {
        if now - at < OWNERSHIP_KEPT {
            break;
        }
        state.settled_order.pop_front();
        if state
            .approvals
            .get(&id)
            .is_some_and(|owned| owned.settled == Some(at))
        {
            state.approvals.remove(&id);
        }
    }
}

fn decrement(state: &mut State, key: (String, String)) {
    if let Some(count) = state.per_token.get_mut(&key.0) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            state.per_token.remove(&key.0);
        }
    }
    if let Some(count) = state.per_agent.get_mut(&key) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            state.per_agent.remove(&key);
        }
    }
}

impl Slot<'_> {
    /// Binds the place to the created approval; it is freed when the approval settles.
    pub(crate) fn commit(mut self, id: Uuid, offered: Offered) {
        self.committed = true;
        let mut state = self.pending.lock();
        let key = (
            std::mem::take(&mut self.owner),
            std::mem::take(&mut self.agent),
        );
        let owned = Owned {
            owner: key.0.clone(),
            agent: key.1.clone(),
            offered,
            settled: None,
        };
        match state.approvals.get_mut(&id) {
            Some(early) if early.settled.is_some() => {
                early.owner = owned.owner;
                early.agent = owned.agent;
                early.offered = owned.offered;
                decrement(&mut state, key);
            }
            _ => {
                state.approvals.insert(id, owned);
            }
        }
    }

    /// Gives the place back (creation failed).
    pub(crate) fn release(self) {}
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.committed {
            let key = (self.owner.clone(), self.agent.clone());
            decrement(&mut self.pending.lock(), key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Limits with only the per-agent cap in play.
    fn per_agent(per_agent: usize) -> PendingLimits {
        PendingLimits {
            per_agent,
            per_token: usize::MAX,
        }
    }

    /// Security review: a token without `agents` named a fresh agent id for each request and
    /// held any number of pending approvals.
    #[test]
    fn refuses_a_token_beyond_its_cap_whatever_agent_ids_it_names() {
        let pending = Pending::new(PendingLimits {
            per_agent: 1,
            per_token: 2,
        });
        let first = Uuid::new_v4();
        pending
            .reserve("a1", "t")
            .unwrap()
            .commit(first, ONCE_OR_DENY);
        pending
            .reserve("a2", "t")
            .unwrap()
            .commit(Uuid::new_v4(), ONCE_OR_DENY);
        let error = pending.reserve("a3", "t").err().unwrap();
        assert!(
            matches!(&error, ServiceError::PendingLimit { holder: PendingHolder::Token(token), limit: 2 } if token == "t"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "token `t` already has 2 pending approvals across its agents; wait for one to settle"
        );
        // Another token is counted apart; a refused or released place is given back.
        assert!(pending.reserve("a3", "u").is_ok());
        pending.settled(first);
        pending.reserve("a3", "t").unwrap().release();
        assert!(pending.reserve("a3", "t").is_ok());
    }

    #[test]
    fn refuses_beyond_the_cap_and_frees_a_place_when_an_approval_settles() {
        let pending = Pending::new(per_agent(2));
        let first = Uuid::new_v4();
        pending
            .reserve("a", "t")
            .unwrap()
            .commit(first, ONCE_OR_DENY);
        pending
            .reserve("a", "t")
            .unwrap()
            .commit(Uuid::new_v4(), ONCE_OR_DENY);
        let error = pending.reserve("a", "t").err().unwrap();
        assert!(
            matches!(error, ServiceError::PendingLimit { .. }),
            "{error:?}"
        );
        pending
            .reserve("b", "t")
            .unwrap()
            .commit(Uuid::new_v4(), ONCE_OR_DENY);
        pending.settled(first);
        pending.settled(first);
        pending
            .reserve("a", "t")
            .unwrap()
            .commit(Uuid::new_v4(), ONCE_OR_DENY);
        assert!(pending.reserve("a", "t").is_err());
        assert_eq!(pending.owner_of(first).as_deref(), Some("t"));
    }

    /// Security review: one token filled another's cap by naming its agent.
    #[test]
    fn counts_each_token_apart_under_the_same_agent() {
        let pending = Pending::new(per_agent(1));
        pending
            .reserve("main", "agent-b")
            .unwrap()
            .commit(Uuid::new_v4(), ONCE_OR_DENY);
        assert!(pending.reserve("main", "agent-b").is_err());
        assert!(pending.reserve("main", "agent-a").is_ok());
    }

    #[test]
    fn frees_the_place_when_the_settle_outruns_the_commit() {
        let pending = Pending::new(per_agent(1));
        let id = Uuid::new_v4();
        let slot = pending.reserve("a", "t").unwrap();
        pending.settled(id);
        slot.commit(id, ONCE_OR_DENY);
        assert_eq!(pending.owner_of(id).as_deref(), Some("t"));
        assert!(pending.reserve("a", "t").is_ok());
    }

    #[test]
    fn gives_back_a_place_that_was_never_committed() {
        let pending = Pending::new(per_agent(1));
        pending.reserve("a", "t").unwrap().release();
        drop(pending.reserve("a", "t").unwrap());
        assert!(pending.reserve("a", "t").is_ok());
    }

    #[test]
    fn remembers_the_decisions_offered_for_a_committed_approval() {
        let pending = Pending::new(per_agent(4));
        let id = Uuid::new_v4();
        let offered = Offered { allow_always: true };
        pending.reserve("a", "t").unwrap().commit(id, offered);
        assert_eq!(pending.offered(id), Some(offered));
        assert_eq!(pending.offered(Uuid::new_v4()), None);
    }

    #[test]
    fn forgets_owners_settled_longer_ago_than_the_ownership_window() {
        let pending = Pending::new(per_agent(4));
        let (old, recent) = (Uuid::new_v4(), Uuid::new_v4());
        pending.reserve("a", "t").unwrap().commit(old, ONCE_OR_DENY);
        pending.settled(old);
        let later = Instant::now() + OWNERSHIP_KEPT;
        pending
            .reserve("a", "t")
            .unwrap()
            .commit(recent, ONCE_OR_DENY);
        forget_expired(&mut pending.lock(), later);
        assert_eq!(pending.owner_of(old), None);
        assert_eq!(pending.owner_of(recent).as_deref(), Some("t"));
    }
}
