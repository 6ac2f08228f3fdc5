//! `agentFilter` and `sessionFilter`: which requests a forwarding rule or native client handles.
//!
//! Session filters match as substrings, or as regexes when written `re:<pattern>`. Regexes come
//! from config, so they are bounded twice: the pattern length is capped and the compiled program
//! must fit a size limit, so a config file cannot make matching slow or memory-hungry.

use std::collections::BTreeSet;

use regex::{Regex, RegexBuilder};

use crate::error::ChatError;

/// The longest `re:` pattern accepted, in characters.
pub const MAX_PATTERN_CHARS: usize = 256;

/// The compiled-size limit for one `re:` pattern, in bytes.
const REGEX_SIZE_LIMIT: usize = 1 << 16;

/// An exact-match list of agent ids; unset or empty admits every agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentFilter {
    agents: Option<BTreeSet<String>>,
}

impl AgentFilter {
    /// Builds the filter from config; an empty list means "no filter".
    pub fn new(agents: Option<&[String]>) -> Self {
        let agents = agents
            .filter(|list| !list.is_empty())
            .map(|list| list.iter().map(|a| a.trim().to_owned()).collect());
        Self { agents }
    }

    /// Whether a request from `agent_id` passes; with a filter set, a request without an agent
    /// id does not.
    pub fn admits(&self, agent_id: Option<&str>) -> bool {
        match &self.agents {
            None => true,
            Some(agents) => agent_id.is_some_and(|id| agents.contains(id)),
        }
    }
}

#[derive(Debug, Clone)]
enum SessionMatcher {
    Substring(String),
    Regex(Regex),
}

/// A list of session-key matchers; unset or empty admits every session.
#[derive(Debug, Clone, Default)]
pub struct SessionFilter {
    matchers: Option<Vec<SessionMatcher>>,
}

impl SessionFilter {
    /// Compiles the filter; an invalid, empty or oversized entry is a config error.
    pub fn new(entries: Option<&[String]>) -> Result<Self, ChatError> {
        let Some(entries) = entries.filter(|list| !list.is_empty()) else {
            return Ok(Self::default());
        };
        let matchers = entries
            .iter()
            .map(|entry| compile(entry))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            matchers: Some(matchers),
        })
    }

    /// A filter no session passes: what stands in for one that was refused.
    pub(crate) fn nothing() -> Self {
        Self {
            matchers: Some(Vec::new()),
        }
    }

    /// Whether a request in `session_key` passes; with a filter set, a request without a session
    /// key does not.
    pub fn admits(&self, session_key: Option<&str>) -> bool {
        let Some(matchers) = &self.matchers else {
            return true;
        };
        let Some(key) = session_key else {
            return false;
        };
        matchers.iter().any(|matcher| match matcher {
            SessionMatcher::Substring(needle) => key.contains(needle.as_str()),
            SessionMatcher::Regex(regex) => regex.is_match(key),
        })
    }
}

fn compile(entry: &str) -> Result<SessionMatcher, ChatError> {
    let Some(pattern) = entry.strip_prefix("re:") else {
        if entry.is_empty() {
            return Err(ChatError::EmptyFilter);
        }
        return Ok(SessionMatcher::Substring(entry.to_owned()));
    };
    let len = pattern.chars().count();
    if len == 0 {
        return Err(ChatError::EmptyFilter);
    }
    if len > MAX_PATTERN_CHARS {
        return Err(ChatError::FilterTooLong {
            len,
            max: MAX_PATTERN_CHARS,
        });
    }
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map(SessionMatcher::Regex)
        .map_err(|error| ChatError::InvalidFilterRegex {
            pattern: pattern.to_owned(),
            reason: error.to_string(),
        })
}
