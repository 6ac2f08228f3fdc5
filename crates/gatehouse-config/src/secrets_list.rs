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
        let bot = ["botToken", "tokenFile", "tokenEnv"];
        if let Some(telegram) = &self.channels.telegram {
            push(&mut out, "channels.telegram", bot, telegram.token_source());
            let webhook = ["webhookSecret", "webhookSecretFile", "webhookSecretEnv"];
            push(
                &mut out,
                "channels.telegram",
                webhook,
                telegram.webhook_secret_source(),
            );
        }
        if let Some(discord) = &self.channels.discord {
            push(&mut out, "channels.discord", bot, discord.token_source());
        }
        if let Some(slack) = &self.channels.slack {
            push(&mut out, "channels.slack", bot, slack.token_source());
            let app = ["appToken", "appTokenFile", "appTokenEnv"];
            push(&mut out, "channels.slack", app, slack.app_token_source());
            let signing = ["signingSecret", "signingSecretFile", "signingSecretEnv"];
            push(
                &mut out,
                "channels.slack",
                signing,
                slack.signing_secret_source(),
            );
        }
        out
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
    let name = match source {
        SecretSource::Inline(_) => names[0],
        SecretSource::File(_) => names[1],
        SecretSource::Env(_) => names[2],
    };
    out.push(ConfiguredSecret {
        key: format!("{parent}.{name}"),
        source,
    });
}
