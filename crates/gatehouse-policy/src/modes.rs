//! The three knobs every exec decision turns on, in OpenClaw's vocabulary.
//!
//! Both enums derive `Ord` so that composing two settings is a `min`/`max`: the order of the
//! variants *is* the policy ("deny is stricter than allowlist", "always asks more than on-miss").

use std::fmt;
use std::str::FromStr;

/// How much the host lets an agent run; also the type of `askFallback`, which names the security
/// level that applies when nobody answers an approval.
///
/// Ordered from most to least restrictive, so `min` picks the stricter of two settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Security {
    /// Nothing runs.
    Deny,
    /// Only commands whose every segment is allowlisted (or a safe bin) run without asking.
    Allowlist,
    /// Everything runs, subject only to `ask`.
    Full,
}

/// When a person is asked before a command runs.
///
/// Ordered from least to most asking, so `max` picks the more cautious of two settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ask {
    /// Never ask; what the allowlist does not cover is denied.
    Off,
    /// Ask only when the allowlist does not cover the command.
    OnMiss,
    /// Ask for every command.
    Always,
}

/// A person's answer to a pending approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalDecision {
    /// Run this exact command once.
    AllowOnce,
    /// Run it now and persist allowlist patterns so it runs without asking next time.
    AllowAlways,
    /// Do not run it.
    Deny,
}

/// A mode string that is not one of the documented values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} value {value:?} (expected one of: {expected})")]
pub struct ParseModeError {
    /// Which setting was being parsed (`security`, `ask`, `decision`).
    pub kind: &'static str,
    /// The rejected input, verbatim.
    pub value: String,
    /// The accepted spellings, for the message.
    pub expected: &'static str,
}

impl Security {
    /// The wire and config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Security::Deny => "deny",
            Security::Allowlist => "allowlist",
            Security::Full => "full",
        }
    }

    /// The stricter of two settings: config and approvals file compose this way.
    pub fn min_security(self, other: Security) -> Security {
        self.min(other)
    }
}

impl Ask {
    /// The wire and config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Ask::Off => "off",
            Ask::OnMiss => "on-miss",
            Ask::Always => "always",
        }
    }

    /// The more cautious of two settings: config and approvals file compose this way.
    pub fn max_ask(self, other: Ask) -> Ask {
        self.max(other)
    }
}

impl ApprovalDecision {
    /// The wire spelling used by the RPC protocol and chat receipts.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowOnce => "allow-once",
            ApprovalDecision::AllowAlways => "allow-always",
            ApprovalDecision::Deny => "deny",
        }
    }
}

impl FromStr for Security {
    type Err = ParseModeError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "deny" => Ok(Security::Deny),
            "allowlist" => Ok(Security::Allowlist),
            "full" => Ok(Security::Full),
            _ => Err(ParseModeError {
                kind: "security",
                value: value.to_owned(),
                expected: "deny, allowlist, full",
            }),
        }
    }
}

impl FromStr for Ask {
    type Err = ParseModeError;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "off" => Ok(Ask::Off),
            "on-miss" => Ok(Ask::OnMiss),
            "always" => Ok(Ask::Always),
            _ => Err(ParseModeError {
                kind: "ask",
                value: value.to_owned(),
                expected: "off, on-miss, always",
            }),
        }
    }
}

impl FromStr for ApprovalDecision {
    type Err = ParseModeError;

    /// Accepts exactly the wire spellings; chat aliases are parsed by the chat grammar.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "allow-once" => Ok(ApprovalDecision::AllowOnce),
            "allow-always" => Ok(ApprovalDecision::AllowAlways),
            "deny" => Ok(ApprovalDecision::Deny),
            _ => Err(ParseModeError {
                kind: "decision",
                value: value.to_owned(),
                expected: "allow-once, allow-always, deny",
            }),
        }
    }
}

impl fmt::Display for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Ask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ApprovalDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stricter_security_wins() {
        assert_eq!(
            Security::Full.min_security(Security::Allowlist),
            Security::Allowlist
        );
        assert_eq!(Security::Deny.min_security(Security::Full), Security::Deny);
    }

    #[test]
    fn more_cautious_ask_wins() {
        assert_eq!(Ask::Off.max_ask(Ask::OnMiss), Ask::OnMiss);
        assert_eq!(Ask::Always.max_ask(Ask::Off), Ask::Always);
    }

    #[test]
    fn spellings_round_trip() {
        for s in [Security::Deny, Security::Allowlist, Security::Full] {
            assert_eq!(s.as_str().parse::<Security>(), Ok(s));
        }
        for a in [Ask::Off, Ask::OnMiss, Ask::Always] {
            assert_eq!(a.as_str().parse::<Ask>(), Ok(a));
        }
        for d in [
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowAlways,
            ApprovalDecision::Deny,
        ] {
            assert_eq!(d.as_str().parse::<ApprovalDecision>(), Ok(d));
        }
    }

    #[test]
    fn denies_unknown_spellings() {
        let err = "Full".parse::<Security>().unwrap_err();
        assert_eq!(err.value, "Full");
        assert!("onmiss".parse::<Ask>().is_err());
        assert!("allow".parse::<ApprovalDecision>().is_err());
    }
}
