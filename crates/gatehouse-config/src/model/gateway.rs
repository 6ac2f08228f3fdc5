//! `gateway`: where the server listens, which bearer tokens it accepts, and its limits.

use std::path::PathBuf;

use serde::Deserialize;

use crate::secret::{self, Secret, SecretSource};

/// The `gateway` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayConfig {
    /// Socket address to listen on, e.g. `127.0.0.1:18790`.
    pub listen: Option<String>,
    /// Authentication settings.
    pub auth: Option<GatewayAuthConfig>,
    /// Limits that keep one client from exhausting the gateway; unset keys keep their defaults.
    pub limits: Option<GatewayLimitsConfig>,
    /// How host names in tool calls' URLs are resolved.
    pub dns: Option<DnsConfig>,
}

/// `gateway.dns`: the resolver URL checks use. Without it the system's (`/etc/resolv.conf`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DnsConfig {
    /// Name servers to ask instead of the system's, as `ip` or `ip:port` (`127.0.0.1:5353`).
    pub nameservers: Option<Vec<String>>,
    /// How long one resolution may take, ms (default 2,000); a lookup that takes longer
    /// refuses the call.
    pub timeout_ms: Option<u64>,
}

impl DnsConfig {
    /// `timeoutMs` when unset.
    pub const DEFAULT_TIMEOUT_MS: u64 = 2_000;

    /// The name servers, each as a socket address (port 53 when none is written); `Err`
    /// names the entry that is neither.
    pub fn nameserver_addrs(&self) -> Result<Vec<std::net::SocketAddr>, String> {
        self.nameservers
            .iter()
            .flatten()
            .map(|entry| {
                let text = entry.trim();
                text.parse::<std::net::SocketAddr>()
                    .or_else(|_| {
                        text.parse::<std::net::IpAddr>()
                            .map(|ip| std::net::SocketAddr::new(ip, 53))
                    })
                    .map_err(|_| format!("{entry:?} is not an IP address or IP:port"))
            })
            .collect()
    }
}

/// `gateway.limits`. Every key is optional; zero is refused, because a zero limit would lock
/// every client out rather than protect the gateway.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayLimitsConfig {
    /// Largest WebSocket text frame, in bytes.
    pub max_frame_bytes: Option<u64>,
    /// Largest `POST /rpc` body, in bytes.
    pub max_body_bytes: Option<u64>,
    /// Per-token request budget.
    pub rate_limit: Option<RateLimitConfig>,
    /// Pending approvals one agent may hold at once.
    pub max_pending_per_agent: Option<u64>,
    /// Pending approvals one token may hold at once across every agent id it names, since
    /// agent ids are the requester's word and a token without `agents` may name any.
    pub max_pending_per_token: Option<u64>,
    /// Bytes kept of each of a run's stdout and stderr.
    pub max_output_bytes: Option<u64>,
    /// Run timeout when `system.run` names none, ms.
    pub run_timeout_ms: Option<u64>,
    /// Longest run timeout a request may ask for, ms.
    pub max_run_timeout_ms: Option<u64>,
    /// A run still going after this long is announced with `exec.running`, ms.
    pub running_event_after_ms: Option<u64>,
    /// Days a settled approval stays in the approvals database; the audit log keeps its
    /// records regardless.
    pub history_days: Option<u64>,
}

impl GatewayLimitsConfig {
    /// `runTimeoutMs` when unset. Kept here rather than in the gateway so the load can compare
    /// the two run timeouts as the gateway will apply them, defaults included.
    pub const DEFAULT_RUN_TIMEOUT_MS: u64 = 60_000;
    /// `maxRunTimeoutMs` when unset.
    pub const DEFAULT_MAX_RUN_TIMEOUT_MS: u64 = 60 * 60 * 1000;

    /// The run timeout a request naming none gets.
    pub fn effective_run_timeout_ms(&self) -> u64 {
        self.run_timeout_ms.unwrap_or(Self::DEFAULT_RUN_TIMEOUT_MS)
    }

    /// The longest run timeout a request may ask for.
    pub fn effective_max_run_timeout_ms(&self) -> u64 {
        self.max_run_timeout_ms
            .unwrap_or(Self::DEFAULT_MAX_RUN_TIMEOUT_MS)
    }
}

/// `gateway.limits.rateLimit`: a token bucket per token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitConfig {
    /// `false` switches rate limiting off.
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// Requests allowed back to back.
    pub burst: Option<u32>,
    /// Refill, in requests per second.
    pub per_second: Option<u32>,
}

fn enabled() -> bool {
    true
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
    /// The agent ids this token may name in `agentId` (policy checks, approval requests,
    /// `system.run`, `tools.effective`); absent, any. An agent host given one agent's token
    /// cannot then borrow a more trusted agent's policy.
    #[serde(default)]
    pub agents: Option<Vec<String>>,
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
