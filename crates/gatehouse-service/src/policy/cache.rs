//! Each agent's exec policy, built once per version of `exec-approvals.json`.
//!
//! Building a policy layers the config's scopes, resolves the safe-bin profiles and copies the
//! agent's allowlist out of the file: work that only changes when the file does, yet every
//! request needs its result. The config is fixed for the gateway's life, so the file version
//! (the [`Snapshot`] the cache handed out, compared by identity) is the whole key. A version
//! still inside its settle time is re-read on every request and so never matches: edits apply
//! exactly as promptly as without this cache.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use gatehouse_config::Config;
use gatehouse_policy::Security;
use gatehouse_policy::exec::ExecPolicy;
use gatehouse_store::approvals_file::Snapshot;

use super::compose::{ask_fallback, exec_policy};

/// Most agents remembered for one file version; agent ids come from requests, so the map is
/// emptied rather than let grow when a token may act for any agent.
const MAX_AGENTS: usize = 256;

/// What an agent's exec requests run under, until the approvals file changes.
#[derive(Debug, Clone)]
pub(crate) struct AgentPolicy {
    /// Shared by every request of the agent; one that changes it (an elevated level) copies it.
    pub(crate) policy: Arc<ExecPolicy>,
    /// The agent's `askFallback`.
    pub(crate) ask_fallback: Security,
}

/// The policies built from one file version.
#[derive(Debug, Default)]
pub(crate) struct PolicyCache {
    built: Mutex<Built>,
}

#[derive(Debug, Default)]
struct Built {
    /// Held so its address cannot be reused by a later version while the entries are kept.
    from: Option<Arc<Snapshot>>,
    by_agent: HashMap<String, AgentPolicy>,
}

impl Built {
    /// Whether the entries were built from `snapshot` (the same version, not equal content).
    fn is_from(&self, snapshot: &Arc<Snapshot>) -> bool {
        self.from
            .as_ref()
            .is_some_and(|from| Arc::ptr_eq(from, snapshot))
    }
}

impl PolicyCache {
    /// `agent`'s policy under `config` and `snapshot`, built only if this version has not
    /// built it yet.
    pub(crate) fn get(
        &self,
        config: &Config,
        snapshot: &Arc<Snapshot>,
        agent: &str,
    ) -> AgentPolicy {
        {
            let built = self.lock();
            if built.is_from(snapshot)
                && let Some(found) = built.by_agent.get(agent)
            {
                return found.clone();
            }
        }
        let made = AgentPolicy {
            policy: Arc::new(exec_policy(config, Some(&snapshot.file), agent)),
            ask_fallback: ask_fallback(config, &snapshot.file, agent),
        };
        let mut built = self.lock();
        if !built.is_from(snapshot) {
            built.from = Some(Arc::clone(snapshot));
            built.by_agent.clear();
        }
        if built.by_agent.len() >= MAX_AGENTS {
            built.by_agent.clear();
        }
        built.by_agent.insert(agent.to_owned(), made.clone());
        made
    }

    /// A panic while the lock was held leaves at worst a missing entry, rebuilt on demand.
    fn lock(&self) -> std::sync::MutexGuard<'_, Built> {
        self.built.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_store::approvals_file::ExecApprovalsStore;

    use super::*;

    fn snapshot(dir: &std::path::Path, body: &str) -> Arc<Snapshot> {
        let path = dir.join("exec-approvals.json");
        std::fs::write(&path, body).unwrap();
        Arc::new(ExecApprovalsStore::new(&path).read().unwrap())
    }

    #[test]
    fn reuses_a_policy_for_the_same_version_and_rebuilds_for_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::default();
        let cache = PolicyCache::default();
        let first = snapshot(
            dir.path(),
            r#"{"version":1,"defaults":{"security":"full"}}"#,
        );
        let a = cache.get(&config, &first, "main");
        let b = cache.get(&config, &first, "main");
        assert!(Arc::ptr_eq(&a.policy, &b.policy));

        // A new version (here with other content): rebuilt, and equal to a fresh build.
        let again = snapshot(
            dir.path(),
            r#"{"version":1,"defaults":{"security":"deny"}}"#,
        );
        let c = cache.get(&config, &again, "main");
        assert!(!Arc::ptr_eq(&a.policy, &c.policy));
        assert_eq!(*c.policy, exec_policy(&config, Some(&again.file), "main"));
        assert_eq!(c.policy.security, Security::Deny);
    }

    #[test]
    fn keeps_agents_apart_and_bounds_how_many_it_remembers() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config::default();
        let cache = PolicyCache::default();
        let file = snapshot(
            dir.path(),
            r#"{"version":1,"agents":{"ops":{"security":"deny"}}}"#,
        );
        assert_eq!(
            cache.get(&config, &file, "ops").policy.security,
            Security::Deny
        );
        assert_ne!(
            cache.get(&config, &file, "main").policy.security,
            Security::Deny
        );
        for n in 0..MAX_AGENTS * 2 {
            cache.get(&config, &file, &format!("agent-{n}"));
        }
        assert!(cache.lock().by_agent.len() <= MAX_AGENTS);
        assert_eq!(
            cache.get(&config, &file, "ops").policy.security,
            Security::Deny
        );
    }
}
