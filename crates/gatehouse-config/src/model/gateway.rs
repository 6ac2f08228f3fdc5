//! `gateway`: where the server listens and which bearer tokens it accepts.

use std::path::PathBuf;

use serde::Deserialize;

use crate::secret::{self, Secret, SecretSource};

/// The `gateway` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayConfig {
    /// Socket address to listen on, e.g. `127.0.0.1:18789`.
    pub listen: Option<String>,
    /// Authentication settings.
    pub auth: Option<GatewayAuthConfig>,
}

/// `gateway.auth`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct GatewayAuthConfig {
    /// Accepted bearer tokens.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
}

/// One entry of `gateway.auth.tokens`: a named token and the scopes it grants.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenConfig {
    /// A label for logs and the audit trail (never the token itself).
    pub name: String,
    /// The token, inline.
    pub token: Option<Secret>,
    /// A file holding the token (should be mode 0600).
    pub token_file: Option<PathBuf>,
    /// An environment variable holding the token.
    pub token_env: Option<String>,
    /// Granted scopes: `operator.admin`, `operator.approvals`, `agent`.
    pub scopes: Vec<Scope>,
}

impl TokenConfig {
    /// Where the token comes from (`token | tokenFile | tokenEnv`); the loader guarantees
    /// exactly one is set.
    pub fn source(&self) -> Option<SecretSource> {
        secret::first(
            self.token.as_ref(),
            self.token_file.as_ref(),
            self.token_env.as_ref(),
        )
    }
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
pub enum Scope {
    /// Everything.
    #[serde(rename = "operator.admin")]
    OperatorAdmin,
    /// List, get and resolve approvals; read the approvals file.
    #[serde(rename = "operator.approvals")]
    OperatorApprovals,
    /// Check, request and wait on its own approvals; `system.run`.
    #[serde(rename = "agent")]
    Agent,
}
