//! What the tool-call use cases keep between calls: the resolver, each agent's compiled rules,
//! and the recent decisions `tools.call.finished` ties results to.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use gatehouse_config::Config;
use gatehouse_policy::files::ProtectedPath;

use crate::dns::Resolver;
use crate::policy::tool_call::AgentRules;

/// At most this many agents' rules are kept compiled: agent ids are the requester's word, so
/// the cache must not grow with whatever a caller names.
const MAX_CACHED_AGENTS: usize = 256;

/// How long a call's decision is kept for `tools.call.finished`, and how many at most.
const CALL_KEPT: Duration = Duration::from_secs(24 * 60 * 60);
const MAX_CALLS: usize = 100_000;

/// The tool-call gate's shared state.
pub(crate) struct ToolState {
    pub(crate) resolver: Resolver,
    rules: Mutex<HashMap<String, Arc<AgentRules>>>,
    home: Option<PathBuf>,
    protected: Vec<ProtectedPath>,
    calls: Mutex<Calls>,
}

/// What a call was decided, as `tools.call.finished` reports it.
#[derive(Debug, Clone)]
pub(crate) struct CallEntry {
    pub(crate) agent_id: String,
    pub(crate) tool: String,
    pub(crate) decision: &'static str,
    pub(crate) approval_id: Option<String>,
}

#[derive(Default)]
struct Calls {
    /// By (token name, call id): another token's call id never matches.
    entries: HashMap<(String, String), CallEntry>,
    order: VecDeque<(Instant, (String, String))>,
}

impl ToolState {
    /// `protected` are the gateway's own files; the home directory expands `~/`.
    pub(crate) fn new(resolver: Resolver, protected: Vec<ProtectedPath>) -> Self {
        ToolState {
            resolver,
            rules: Mutex::default(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            protected,
            calls: Mutex::default(),
        }
    }

    /// `agent_id`'s rules, compiled once. Rules whose files could not be built (a workspace
    /// not created yet) are built again on the next call instead of being kept.
    pub(crate) fn rules(&self, config: &Config, agent_id: &str) -> Arc<AgentRules> {
        if let Some(rules) = lock(&self.rules).get(agent_id) {
            return Arc::clone(rules);
        }
        let rules = Arc::new(AgentRules::build(
            config,
            agent_id,
            self.home.as_deref(),
            &self.protected,
        ));
        let mut cache = lock(&self.rules);
        if rules.files.is_ok() && cache.len() < MAX_CACHED_AGENTS {
            cache.insert(agent_id.to_owned(), Arc::clone(&rules));
        }
        rules
    }

    /// Remembers what `owner`'s call `call_id` was decided.
    pub(crate) fn remember(&self, owner: &str, call_id: &str, entry: CallEntry) {
        let mut calls = lock(&self.calls);
        let now = Instant::now();
        forget_old(&mut calls, now);
        let key = (owner.to_owned(), call_id.to_owned());
        if calls.entries.insert(key.clone(), entry).is_none() {
            calls.order.push_back((now, key));
        }
    }

    /// What `owner`'s call `call_id` was decided, if it was checked here recently.
    pub(crate) fn recalled(&self, owner: &str, call_id: &str) -> Option<CallEntry> {
        let calls = lock(&self.calls);
        calls
            .entries
            .get(&(owner.to_owned(), call_id.to_owned()))
            .cloned()
    }
}

fn forget_old(calls: &mut Calls, now: Instant) {
    while let Some((at, key)) = calls.order.front() {
        let expired = now.duration_since(*at) > CALL_KEPT;
        if !expired && calls.order.len() < MAX_CALLS {
            break;
        }
        calls.entries.remove(key);
        calls.order.pop_front();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
