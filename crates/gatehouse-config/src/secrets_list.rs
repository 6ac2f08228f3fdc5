//! Every secret a config names, with the key path that names it, so `doctor` and `serve` can
//! resolve them all up front and report a missing file or a loose mode by key.

use crate::model::Config;
use crate::secret::SecretSource;

/// One configured secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfiguredSecret {
    /// The key that holds it, e.g. `channels.telegram.tokenFile`; pass it to
    /// [`SecretSource::resolve`] so errors name it.
    pub key: String,
    /// Where the value comes from.
    pub source: SecretSource,
}

/// Which channel secrets a listing includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Listing {
    /// Every secret written in the config.
    Configured,
    /// Only the secrets a start reads.
    InUse,
}

impl Config {
    /// Every secret the config names, gateway tokens first, then channels in a fixed order.
    pub fn secrets(&self) -> Vec<ConfiguredSecret> {
        let mut out = Vec::new();
        let tokens = self.gateway.auth.iter().flat_map(|auth| auth.tokens.iter());
        for (index, token) in tokens.enumerate() {
            push(
                &mut out,
                &format!("gateway.auth.tokens[{index}]"),
                ["token", "tokenFile", "tokenEnv"],
                token.source(),
            );
        }
        self.push_channel_secrets(&mut out, Listing::Configured);
        out
    }

    /// The channel secrets a start reads, in the order of [`secrets`](Self::secrets): none of a
    /// channel switched off with `enabled: false`, and Telegram's webhook secret only with a
    /// `webhookUrl` (long polling never uses it). A check that resolves exactly these neither
    /// misses a secret the gateway would fail on nor fails on one it never reads.
    pub fn channel_secrets_in_use(&self) -> Vec<ConfiguredSecret> {
        let mut out = Vec::new();
        self.push_channel_secrets(&mut out, Listing::InUse);
        out
    }

    fn push_channel_secrets(&self, out: &mut Vec<ConfiguredSecret>, listing: Listing) {
        let channels = match listing {
            Listing::Configured => self.channels.configured(),
            Listing::InUse => self.channels.started(),
        };
        let bot = ["botToken", "tokenFile", "tokenEnv"];
        if let Some(telegram) = channels.telegram {
            push(out, "channels.telegram", bot, telegram.token_source());
            if listing == Listing::Configured || telegram.webhook_url.is_some() {
                let webhook = ["webhookSecret", "webhookSecretFile", "webhookSecretEnv"];
                push(
                    out,
                    "channels.telegram",
                    webhook,
                    telegram.webhook_secret_source(),
                );
            }
        }
        if let Some(discord) = channels.discord {
            push(out, "channels.discord", bot, discord.token_source());
        }
        if let Some(slack) = channels.slack {
            push(out, "channels.slack", bot, slack.token_source());
            let app = ["appToken", "appTokenFile", "appTokenEnv"];
            push(out, "channels.slack", app, slack.app_token_source());
            let signing = ["signingSecret", "signingSecretFile", "signingSecretEnv"];
            push(
                out,
                "channels.slack",
                signing,
                slack.signing_secret_source(),
            );
        }
    }
}

/// Records `source` under the one key of the triple `names` that set it.
fn push(
    out: &mut Vec<ConfiguredSecret>,
    parent: &str,
    names: [&str; 3],
    source: Option<SecretSource>,
) {
    let Some(source) = source else { return };
    out.push(ConfiguredSecret {
        key: format!("{parent}.{}", source.key_name(names)),
        source,
    });
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::load_str;

    fn keys(text: &str) -> Vec<String> {
        let config = load_str(text, Path::new("t.json5")).unwrap().config;
        config
            .channel_secrets_in_use()
            .into_iter()
            .map(|secret| secret.key)
            .collect()
    }

    #[test]
    fn lists_no_secret_of_a_disabled_channel() {
        let text = "{ channels: {
            discord: { enabled: false, tokenEnv: 'D', applicationId: '1' },
            slack: { tokenEnv: 'S', appTokenFile: '/run/app' },
        } }";
        assert_eq!(
            keys(text),
            ["channels.slack.tokenEnv", "channels.slack.appTokenFile"]
        );
    }

    #[test]
    fn lists_the_telegram_webhook_secret_only_with_a_webhook_url() {
        let polling = "{ channels: { telegram: { tokenEnv: 'T', webhookSecretEnv: 'W' } } }";
        assert_eq!(keys(polling), ["channels.telegram.tokenEnv"]);
        let webhook = "{ channels: { telegram: { tokenEnv: 'T', webhookSecretEnv: 'W', \
                       webhookUrl: 'https://example.com/tg' } } }";
        assert_eq!(
            keys(webhook),
            [
                "channels.telegram.tokenEnv",
                "channels.telegram.webhookSecretEnv"
            ]
        );
    }

    #[test]
    fn lists_no_gateway_token() {
        let text = "{ gateway: { auth: { tokens: [
            { name: 'a', tokenEnv: 'A', scopes: ['agent'] },
        ] } } }";
        assert_eq!(keys(text), Vec::<String>::new());
    }
}
