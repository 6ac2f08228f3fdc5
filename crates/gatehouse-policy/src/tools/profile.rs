//! Built-in profiles: named starting sets an operator narrows further.

use std::str::FromStr;

/// A tool profile, as named in `tools.profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Only `session_status`.
    Minimal,
    /// Files, runtime, web, memory, sessions, `cron`, `image`, `image_generate`.
    Coding,
    /// `message` and the read/send sessions tools.
    Messaging,
    /// No restriction.
    Full,
}

/// Profile contents as list entries, so they read like the issue and the docs.
const MINIMAL: &[&str] = &["session_status"];

const CODING: &[&str] = &[
    "group:fs",
    "group:runtime",
    "group:web",
    "group:memory",
    "group:sessions",
    "cron",
    "image",
    "image_generate",
];

const MESSAGING: &[&str] = &[
    "message",
    "sessions_list",
    "sessions_history",
    "sessions_send",
    "session_status",
];

impl Profile {
    /// The list entries (tools and groups) the profile allows; `None` means it restricts
    /// nothing.
    pub fn entries(self) -> Option<&'static [&'static str]> {
        match self {
            Profile::Minimal => Some(MINIMAL),
            Profile::Coding => Some(CODING),
            Profile::Messaging => Some(MESSAGING),
            Profile::Full => None,
        }
    }
}

/// A profile name that is not one of the four built-in profiles.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool profile {0:?} (expected minimal, coding, messaging or full)")]
pub struct UnknownProfile(pub String);

impl FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_lowercase().as_str() {
            "minimal" => Ok(Profile::Minimal),
            "coding" => Ok(Profile::Coding),
            "messaging" => Ok(Profile::Messaging),
            "full" => Ok(Profile::Full),
            _ => Err(UnknownProfile(s.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::catalog::{core_group, is_core_tool};

    /// The profile's tools with groups expanded.
    fn tools(profile: Profile) -> Vec<&'static str> {
        let entries = profile.entries().unwrap();
        entries
            .iter()
            .flat_map(|e| match e.strip_prefix("group:") {
                Some(group) => core_group(group).unwrap(),
                None => vec![*e],
            })
            .collect()
    }

    #[test]
    fn parses_profile_names_case_insensitively() {
        assert_eq!(" Coding ".parse(), Ok(Profile::Coding));
        assert_eq!("FULL".parse(), Ok(Profile::Full));
        assert_eq!(
            "admin".parse::<Profile>(),
            Err(UnknownProfile("admin".into()))
        );
    }

    #[test]
    fn minimal_allows_only_session_status() {
        assert_eq!(tools(Profile::Minimal), vec!["session_status"]);
    }

    #[test]
    fn full_restricts_nothing() {
        assert_eq!(Profile::Full.entries(), None);
    }

    #[test]
    fn no_profile_contains_the_opt_in_tools() {
        for profile in [Profile::Minimal, Profile::Coding, Profile::Messaging] {
            let allowed = tools(profile);
            for tool in [
                "browser",
                "canvas",
                "gateway",
                "nodes",
                "agents_list",
                "tts",
            ] {
                assert!(!allowed.contains(&tool), "{profile:?} has {tool}");
            }
            assert!(allowed.iter().all(|t| is_core_tool(t)));
        }
    }

    #[test]
    fn coding_has_files_runtime_web_memory_sessions_cron_and_images() {
        assert_eq!(tools(Profile::Coding).len(), 20);
    }

    #[test]
    fn messaging_has_message_and_limited_sessions() {
        let allowed = tools(Profile::Messaging);
        assert!(allowed.contains(&"message"));
        assert!(!allowed.contains(&"sessions_spawn"));
        assert!(!allowed.contains(&"exec"));
    }
}
