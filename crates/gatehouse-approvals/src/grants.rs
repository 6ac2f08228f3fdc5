//! Allow-always grants of tool calls: what is kept per agent, and the book the manager holds in
//! memory so every tool call is judged against its agent's grants without a read.
//!
//! A grant is created by the store in the same transaction as the allow-always decision it
//! follows from, and takes that approval's id; the book learns of it before anyone waiting on
//! the approval is woken, so the requester's next call is already covered.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_policy::tool_call::Grant;

/// One stored grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredGrant {
    /// The id of the approval whose allow-always created it.
    pub id: String,
    /// The agent whose later calls it covers.
    pub agent_id: String,
    /// What it covers.
    pub grant: Grant,
    /// When it was granted, ms since the Unix epoch.
    pub created_at_ms: u64,
    /// Who answered allow-always.
    pub granted_by: Option<String>,
}

/// Every live grant, in creation order, with each agent's grants ready for the policy.
#[derive(Debug, Default)]
pub(crate) struct GrantBook {
    state: Mutex<BookState>,
}

#[derive(Debug, Default)]
struct BookState {
    stored: Vec<StoredGrant>,
    by_agent: HashMap<String, Arc<[Grant]>>,
}

impl BookState {
    fn reindex(&mut self, agent_id: &str) {
        let grants: Arc<[Grant]> = self
            .stored
            .iter()
            .filter(|stored| stored.agent_id == agent_id)
            .map(|stored| stored.grant.clone())
            .collect();
        if grants.is_empty() {
            self.by_agent.remove(agent_id);
        } else {
            self.by_agent.insert(agent_id.to_owned(), grants);
        }
    }
}

impl GrantBook {
    fn state(&self) -> std::sync::MutexGuard<'_, BookState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the book with what the store holds (at start).
    pub(crate) fn load(&self, stored: Vec<StoredGrant>) {
        let mut state = self.state();
        state.stored = stored;
        let agents: Vec<String> = state.stored.iter().map(|s| s.agent_id.clone()).collect();
        state.by_agent.clear();
        for agent in agents {
            state.reindex(&agent);
        }
    }

    /// Adds a grant the store has just made durable; one already known is not added twice.
    pub(crate) fn add(&self, grant: StoredGrant) {
        let mut state = self.state();
        if state.stored.iter().any(|stored| stored.id == grant.id) {
            return;
        }
        let agent = grant.agent_id.clone();
        state.stored.push(grant);
        state.reindex(&agent);
    }

    /// Forgets a grant the store has deleted.
    pub(crate) fn remove(&self, id: &str) {
        let mut state = self.state();
        let Some(at) = state.stored.iter().position(|stored| stored.id == id) else {
            return;
        };
        let removed = state.stored.remove(at);
        state.reindex(&removed.agent_id);
    }

    /// The grants covering `agent_id`'s calls.
    pub(crate) fn for_agent(&self, agent_id: &str) -> Arc<[Grant]> {
        self.state()
            .by_agent
            .get(agent_id)
            .cloned()
            .unwrap_or_else(|| Arc::from(Vec::new()))
    }

    /// The stored grants, oldest first, of one agent or of all.
    pub(crate) fn list(&self, agent_id: Option<&str>) -> Vec<StoredGrant> {
        self.state()
            .stored
            .iter()
            .filter(|stored| agent_id.is_none_or(|agent| stored.agent_id == agent))
            .cloned()
            .collect()
    }

    /// The ids starting with `key` (ASCII case ignored).
    pub(crate) fn matching(&self, key: &str) -> Vec<String> {
        let key = key.to_ascii_lowercase();
        self.state()
            .stored
            .iter()
            .filter(|stored| stored.id.to_ascii_lowercase().starts_with(&key))
            .map(|stored| stored.id.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_policy::tool_call::GrantScope;

    use super::*;

    fn stored(id: &str, agent: &str, tool: &str) -> StoredGrant {
        StoredGrant {
            id: id.to_owned(),
            agent_id: agent.to_owned(),
            grant: Grant {
                tool: tool.to_owned(),
                scope: GrantScope::Tool,
            },
            created_at_ms: 1,
            granted_by: None,
        }
    }

    #[test]
    fn keeps_each_agents_grants_apart_and_forgets_a_removed_one() {
        let book = GrantBook::default();
        book.load(vec![stored("a1", "main", "browser")]);
        book.add(stored("b2", "main", "mcp__github__create_issue"));
        book.add(stored("c3", "work", "browser"));
        book.add(stored("b2", "main", "mcp__github__create_issue"));
        assert_eq!(book.for_agent("main").len(), 2);
        assert_eq!(book.for_agent("work").len(), 1);
        assert!(book.for_agent("other").is_empty());
        assert_eq!(book.list(Some("main")).len(), 2);
        assert_eq!(book.matching("B"), ["b2"]);
        book.remove("b2");
        assert_eq!(book.for_agent("main").len(), 1);
        book.remove("c3");
        assert!(book.for_agent("work").is_empty());
        assert_eq!(book.list(None).len(), 1);
    }
}
