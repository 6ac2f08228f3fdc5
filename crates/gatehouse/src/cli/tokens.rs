//! The gateway's bearer tokens from `gateway.auth.tokens`, and the admin token `serve`
//! generates: secrets resolved, then held to the gateway's own rules. `serve` stops at the first
//! bad token; `doctor` reports every one. The one module `doctor` reaches the gateway crate
//! through: the token rules are the transport's, and `doctor` must report what `serve` refuses.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use anyhow::{Context as _, bail};
use gatehouse_config::Config;
use gatehouse_config::model::{Scope as ConfigScope, TokenConfig};
use gatehouse_gateway::{
    GatewaySettings, GatewayState, MIN_TOKEN_CHARS, Scope, Secret, TokenSpec, configured_limits,
};

/// The tokens of `gateway.auth.tokens`, secrets resolved; a token file others can read is
/// reported on stderr, as the config loader does for every secret. The gateway checks the
/// tokens themselves (length, names, scopes) when it starts.
pub(crate) fn configured_tokens(config: &Config) -> anyhow::Result<Vec<TokenSpec>> {
    configured(config)
        .enumerate()
        .map(|(index, token)| {
            let resolved = token_spec(index, token)?;
            if let Some(warning) = &resolved.warning {
                eprintln!("gatehouse: warning: {warning}");
            }
            Ok(resolved.spec)
        })
        .collect()
}

/// What `doctor` learns about the configured tokens.
#[derive(Debug, Default)]
pub(crate) struct TokenReview {
    /// Every token `serve` would refuse to start with, one error each.
    pub(crate) errors: Vec<anyhow::Error>,
    /// Token files readable by group or others.
    pub(crate) warnings: Vec<String>,
}

/// Resolves every token and holds each to the rules the gateway enforces at start, reporting
/// every failing token rather than the first.
///
/// The rules are not restated here: each token is offered to [`GatewayState::new`] together
/// with the tokens already accepted, with the limits `serve` uses, so a token that fails is
/// reported with the gateway's own message (such as too short, or a secret used twice) and
/// cannot hide a later one.
pub(crate) fn review_tokens(config: &Config) -> TokenReview {
    let limits = configured_limits(config.gateway.limits.as_ref());
    let mut review = TokenReview::default();
    let mut accepted: Vec<TokenSpec> = Vec::new();
    for (index, token) in configured(config).enumerate() {
        let resolved = match token_spec(index, token) {
            Ok(resolved) => resolved,
            Err(error) => {
                review.errors.push(error);
                continue;
            }
        };
        review.warnings.extend(resolved.warning);
        let mut tokens = accepted.clone();
        tokens.push(resolved.spec.clone());
        let settings = GatewaySettings {
            tokens,
            limits: limits.clone(),
        };
        match GatewayState::new(&settings) {
            Ok(_) => accepted.push(resolved.spec),
            Err(error) => review.errors.push(error.into()),
        }
    }
    review
}

/// The generated admin token, refused when others can read it or it is too short; `doctor`
/// applies the same check.
pub(crate) fn read_admin_token(path: &Path) -> anyhow::Result<Secret> {
    let mode = fs::metadata(path)
        .with_context(|| format!("cannot read admin token file {}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        bail!(
            "admin token file {} is accessible by group or others (mode {:o}); rotate the token \
             by deleting the file, or run `chmod 600` on it if it was never exposed",
            path.display(),
            mode & 0o777
        );
    }
    let token = fs::read_to_string(path)
        .with_context(|| format!("cannot read admin token file {}", path.display()))?;
    let token = token.trim();
    if token.chars().count() < MIN_TOKEN_CHARS {
        bail!(
            "admin token file {} holds fewer than {} characters; delete it to generate a new token",
            path.display(),
            MIN_TOKEN_CHARS
        );
    }
    Ok(Secret::new(token))
}

/// The entries of `gateway.auth.tokens`, in config order; none without the section.
fn configured(config: &Config) -> impl Iterator<Item = &TokenConfig> {
    config
        .gateway
        .auth
        .iter()
        .flat_map(|auth| auth.tokens.iter())
}

/// One token, ready for the gateway, and the warning its secret file raised.
struct ResolvedToken {
    /// The token as the gateway takes it.
    spec: TokenSpec,
    /// Set when the token file is readable by group or others.
    warning: Option<String>,
}

/// Resolves the token at `index`; the key in errors is the entry (`gateway.auth.tokens[0]`),
/// which says which token failed whichever of `token`, `tokenFile`, `tokenEnv` it uses.
fn token_spec(index: usize, token: &TokenConfig) -> anyhow::Result<ResolvedToken> {
    let key = format!("gateway.auth.tokens[{index}]");
    let Some(source) = token.source() else {
        bail!("`{key}`: set one of token, tokenFile, tokenEnv");
    };
    let resolved = source.resolve(&key)?;
    Ok(ResolvedToken {
        spec: TokenSpec {
            name: token.name.clone(),
            secret: resolved.secret,
            scopes: token
                .scopes
                .iter()
                .map(|scope| match scope {
                    ConfigScope::OperatorAdmin => Scope::Admin,
                    ConfigScope::OperatorApprovals => Scope::Approvals,
                    ConfigScope::Agent => Scope::Agent,
                })
                .collect(),
            agents: token.agents.clone(),
        },
        warning: resolved.warning,
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn review(tokens: &str) -> (Vec<String>, Vec<String>) {
        let text = format!("{{ gateway: {{ auth: {{ tokens: [{tokens}] }} }} }}");
        let config = gatehouse_config::load_str(&text, Path::new("t.json5"))
            .unwrap()
            .config;
        let review = review_tokens(&config);
        let errors = review.errors.iter().map(|e| format!("{e:#}")).collect();
        (errors, review.warnings)
    }

    #[test]
    fn accepts_valid_tokens() {
        let (errors, warnings) = review(
            "{ name: 'a', token: 'aaaaaaaaaaaaaaaaaaaa', scopes: ['agent'] },
             { name: 'b', token: 'bbbbbbbbbbbbbbbbbbbb', scopes: ['operator.admin'] }",
        );
        assert_eq!((errors, warnings), (Vec::new(), Vec::new()));
    }

    #[test]
    fn reports_every_failing_token_with_the_gateway_message() {
        let (errors, _) = review(
            "{ name: 'short', token: 'short', scopes: ['agent'] },
             { name: 'ok', token: 'okokokokokokokokokok', scopes: ['agent'] },
             { name: 'copy', token: 'okokokokokokokokokok', scopes: ['agent'] },
             { name: 'unset', tokenEnv: 'GATEHOUSE_TEST_UNSET_TOKEN_VARIABLE', scopes: ['agent'] }",
        );
        assert_eq!(
            errors,
            [
                "invalid gateway settings: token `short` is shorter than 16 characters",
                "invalid gateway settings: token `copy` has the same secret as another token",
                "`gateway.auth.tokens[3]`: environment variable \
                 GATEHOUSE_TEST_UNSET_TOKEN_VARIABLE is not set",
            ]
        );
    }
}
