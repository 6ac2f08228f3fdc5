//! Token scopes and what each method demands of its caller.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// A capability granted to a token; the names are OpenClaw's and appear on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `operator.admin`: every method, including configuration.
    Admin,
    /// `operator.approvals`: list, get and resolve approvals; read the approvals file.
    Approvals,
    /// `agent`: check, request and wait on its own approvals; `system.run`.
    Agent,
}

impl Scope {
    /// The wire name, as tokens list it in config and `connect` returns it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "operator.admin",
            Self::Approvals => "operator.approvals",
            Self::Agent => "agent",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scope {
    type Err = Error;

    /// Unknown names are refused rather than ignored, so a typo never grants or drops access silently.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "operator.admin" => Ok(Self::Admin),
            "operator.approvals" => Ok(Self::Approvals),
            "agent" => Ok(Self::Agent),
            other => Err(Error::InvalidSettings {
                reason: format!(
                    "unknown scope `{other}` (expected operator.admin, operator.approvals or agent)"
                ),
            }),
        }
    }
}

/// What a method or an event requires of the caller, declared once beside its registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Any authenticated token, whatever its scopes.
    AnyScope,
    /// A token holding this scope, or `operator.admin`.
    Scope(Scope),
}

impl Access {
    /// Whether a token with `scopes` passes; `operator.admin` passes everything.
    pub fn allows(self, scopes: &[Scope]) -> bool {
        match self {
            Self::AnyScope => !scopes.is_empty(),
            Self::Scope(needed) => scopes.iter().any(|s| *s == Scope::Admin || *s == needed),
        }
    }

    /// The scope name reported in a refusal.
    pub fn describe(self) -> &'static str {
        match self {
            Self::AnyScope => "any",
            Self::Scope(scope) => scope.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_allows_every_scope() {
        for scope in [Scope::Admin, Scope::Approvals, Scope::Agent] {
            assert!(Access::Scope(scope).allows(&[Scope::Admin]));
        }
    }

    #[test]
    fn denies_agent_token_an_operator_scope() {
        assert!(!Access::Scope(Scope::Approvals).allows(&[Scope::Agent]));
        assert!(!Access::Scope(Scope::Admin).allows(&[Scope::Approvals]));
    }

    #[test]
    fn denies_any_scope_to_a_token_without_scopes() {
        assert!(!Access::AnyScope.allows(&[]));
        assert!(Access::AnyScope.allows(&[Scope::Agent]));
    }

    #[test]
    fn parses_wire_names_and_refuses_unknown_ones() {
        for scope in [Scope::Admin, Scope::Approvals, Scope::Agent] {
            assert_eq!(scope.as_str().parse::<Scope>().unwrap(), scope);
        }
        assert_eq!(
            "operator.*".parse::<Scope>().unwrap_err().code(),
            "invalid_settings"
        );
    }
}
