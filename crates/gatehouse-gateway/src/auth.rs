//! Token authentication in constant time.
//!
//! Secrets are stored only as SHA-256 digests, and a presented token is compared with every
//! configured digest without stopping at the first match, so neither the position of a match nor
//! the length of a secret shows in the timing.

use std::collections::HashSet;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use subtle::{ConditionallySelectable, ConstantTimeEq};

use crate::error::Error;
use crate::scope::{Access, Scope};
use crate::settings::{MIN_TOKEN_CHARS, TokenSpec};

/// The authenticated identity behind a connection or an HTTP request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    name: String,
    scopes: Vec<Scope>,
    agents: Option<Vec<String>>,
}

impl Principal {
    /// The token's configured name; safe to log, used as the rate-limit key.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The scopes granted, in configuration order.
    pub fn scopes(&self) -> &[Scope] {
        &self.scopes
    }

    /// Whether this principal passes `access`.
    pub fn allows(&self, access: Access) -> bool {
        access.allows(&self.scopes)
    }

    /// Whether requests with this token may name `agent_id`: the agent's policy is chosen by
    /// that id, so a token restricted to some agents cannot borrow another's.
    pub fn may_act_for(&self, agent_id: &str) -> bool {
        self.agents
            .as_ref()
            .is_none_or(|agents| agents.iter().any(|agent| agent == agent_id))
    }
}

/// A bearer token is who calls the service's use cases.
impl gatehouse_service::Caller for Principal {
    fn name(&self) -> &str {
        &self.name
    }

    fn sees_every_approval(&self) -> bool {
        self.allows(Access::Scope(Scope::Approvals))
    }

    fn may_act_for(&self, agent_id: &str) -> bool {
        Principal::may_act_for(self, agent_id)
    }
}

/// The configured tokens, validated once at start.
#[derive(Debug)]
pub(crate) struct Authenticator {
    entries: Vec<([u8; 32], Arc<Principal>)>,
}

impl Authenticator {
    /// Refuses settings that would make authentication ambiguous or weak.
    pub(crate) fn new(tokens: &[TokenSpec]) -> Result<Self, Error> {
        let invalid = |reason: String| Error::InvalidSettings { reason };
        if tokens.is_empty() {
            return Err(invalid("no tokens configured; nobody could connect".into()));
        }
        let mut names = HashSet::new();
        let mut digests = HashSet::new();
        let mut entries = Vec::with_capacity(tokens.len());
        for spec in tokens {
            if spec.name.trim().is_empty() {
                return Err(invalid("a token has an empty name".into()));
            }
            if !names.insert(spec.name.as_str()) {
                return Err(invalid(format!("token name `{}` is used twice", spec.name)));
            }
            if spec.secret.expose().chars().count() < MIN_TOKEN_CHARS {
                return Err(invalid(format!(
                    "token `{}` is shorter than {} characters",
                    spec.name, MIN_TOKEN_CHARS
                )));
            }
            if spec.scopes.is_empty() {
                return Err(invalid(format!("token `{}` has no scopes", spec.name)));
            }
            let digest = digest(spec.secret.expose());
            if !digests.insert(digest) {
                return Err(invalid(format!(
                    "token `{}` has the same secret as another token",
                    spec.name
                )));
            }
            let principal = Principal {
                name: spec.name.clone(),
                scopes: spec.scopes.clone(),
                agents: spec.agents.clone(),
            };
            entries.push((digest, Arc::new(principal)));
        }
        Ok(Self { entries })
    }

    /// The principal whose secret equals `presented`, or `Unauthorized`.
    pub(crate) fn authenticate(&self, presented: &str) -> Result<Arc<Principal>, Error> {
        let presented = digest(presented);
        let mut found = u32::MAX;
        for (index, (known, _)) in self.entries.iter().enumerate() {
            let index = u32::try_from(index).unwrap_or(u32::MAX);
            found.conditional_assign(&index, known.ct_eq(&presented));
        }
        usize::try_from(found)
            .ok()
            .and_then(|index| self.entries.get(index))
            .map(|(_, principal)| Arc::clone(principal))
            .ok_or(Error::Unauthorized)
    }

    /// Every principal, for the admin listing; secrets are not kept.
    pub(crate) fn principals(&self) -> impl Iterator<Item = &Principal> {
        self.entries.iter().map(|(_, principal)| principal.as_ref())
    }
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Secret;

    fn spec(name: &str, secret: &str, scopes: &[Scope]) -> TokenSpec {
        TokenSpec {
            name: name.into(),
            secret: Secret::new(secret),
            scopes: scopes.to_vec(),
            agents: None,
        }
    }

    fn two_tokens() -> Authenticator {
        Authenticator::new(&[
            spec("admin", "admin-secret-0123456789", &[Scope::Admin]),
            spec("agent", "agent-secret-0123456789", &[Scope::Agent]),
        ])
        .unwrap()
    }

    #[test]
    fn authenticates_each_configured_token_as_its_own_principal() {
        let auth = two_tokens();
        assert_eq!(
            auth.authenticate("admin-secret-0123456789").unwrap().name(),
            "admin"
        );
        assert_eq!(
            auth.authenticate("agent-secret-0123456789").unwrap().name(),
            "agent"
        );
    }

    #[test]
    fn denies_unknown_empty_and_prefix_tokens() {
        let auth = two_tokens();
        for presented in [
            "",
            "admin-secret",
            "admin-secret-0123456789 ",
            "x".repeat(4096).as_str(),
        ] {
            assert_eq!(
                auth.authenticate(presented).unwrap_err().code(),
                "unauthorized"
            );
        }
    }

    #[test]
    fn refuses_weak_duplicate_or_scopeless_tokens() {
        let cases = [
            vec![],
            vec![spec("a", "short", &[Scope::Admin])],
            vec![spec("a", "0123456789abcdef", &[])],
            vec![spec("", "0123456789abcdef", &[Scope::Admin])],
            vec![
                spec("a", "0123456789abcdef", &[Scope::Admin]),
                spec("a", "fedcba9876543210", &[Scope::Agent]),
            ],
            vec![
                spec("a", "0123456789abcdef", &[Scope::Admin]),
                spec("b", "0123456789abcdef", &[Scope::Agent]),
            ],
        ];
        for tokens in cases {
            assert_eq!(
                Authenticator::new(&tokens).unwrap_err().code(),
                "invalid_settings"
            );
        }
    }

    #[test]
    fn never_prints_a_secret_in_debug_output() {
        let shown = format!("{:?}", spec("a", "0123456789abcdef", &[Scope::Admin]));
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
    }
}
