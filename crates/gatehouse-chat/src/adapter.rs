//! How a chat adapter plugs in: one value per adapter crate that says which [`Platform`] it
//! serves and sets its channel up from the operator's config. The binary lists these values in
//! one place; everything else about a platform is the adapter's own.
//!
//! The config model (`C`) and the HTTP routes an adapter may need served (`R`) are types this
//! crate does not know: the binary fixes both where it registers the adapters.

use std::error::Error;
use std::sync::Arc;

use async_trait::async_trait;

use crate::channel::Channel;
use crate::platform::Platform;

/// One chat adapter as the binary registers it.
#[async_trait]
pub trait Adapter<C: Sync, R>: Sync {
    /// The platform it serves.
    fn platform(&self) -> &'static dyn Platform;

    /// Whether `config` has a section for this platform at all, enabled or not: forwarding
    /// targets on a channel without one are refused, since nothing could deliver them.
    fn configured(&self, config: &C) -> bool;

    /// Builds the channel's settings as [`Adapter::prepare`] does, stopping short of the
    /// network: every refusal `prepare` would stop at (a secret it cannot read, a missing key,
    /// every key the platform's own rules refuse, each its own error). A secret file readable
    /// by group or others goes to `warnings`. Nothing when the channel is not enabled.
    fn check(&self, config: &C, warnings: &mut Vec<String>) -> Vec<SetupError>;

    /// Builds the channel's settings, or refuses them naming every refused key at once, with
    /// the warnings they raised; `None` when the channel is not enabled.
    fn prepare(
        &self,
        config: &C,
        warnings: &mut Vec<String>,
    ) -> Result<Option<Box<dyn Connect<R>>>, SetupError>;
}

/// A channel whose settings were accepted, ready to connect.
#[async_trait]
pub trait Connect<R>: Send {
    /// Connects to the platform (checking the credentials there) and hands the channel over.
    async fn connect(self: Box<Self>) -> Result<Connection<R>, SetupError>;
}

/// A connected channel, as the binary hands it to the service and the gateway.
pub struct Connection<R> {
    /// The channel.
    pub channel: Arc<dyn Channel>,
    /// The bot's own handle, so `/approve@thisbot` is accepted and another bot's is refused.
    pub bot_username: Option<String>,
    /// Routes the gateway must serve for it on its own listener (a webhook), if any.
    pub routes: Option<R>,
}

/// Why a channel could not be set up, worded for the operator: the key to fix, and why.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The config does not say enough to set the channel up.
    #[error("{0}")]
    Refused(String),
    /// A failure that names its key itself (a secret that cannot be read, a token in the
    /// wrong form).
    #[error(transparent)]
    Failed(Box<dyn Error + Send + Sync>),
    /// `context` (the key or step that failed), because of `source`.
    #[error("{context}")]
    Because {
        /// What failed, naming the config key.
        context: String,
        /// Why.
        #[source]
        source: Box<dyn Error + Send + Sync>,
    },
}

impl SetupError {
    /// A failure that names its key itself.
    pub fn failed(error: impl Into<Box<dyn Error + Send + Sync>>) -> Self {
        SetupError::Failed(error.into())
    }

    /// The error and each cause after the one it explains, in one line: what an operator reads
    /// (the CLI prints the same).
    pub fn explained(&self) -> String {
        let mut text = self.to_string();
        let mut cause = Error::source(self);
        while let Some(next) = cause {
            text.push_str(": ");
            text.push_str(&next.to_string());
            cause = next.source();
        }
        text
    }

    /// `source`, reported under `context`.
    pub fn because(
        context: impl Into<String>,
        source: impl Into<Box<dyn Error + Send + Sync>>,
    ) -> Self {
        SetupError::Because {
            context: context.into(),
            source: source.into(),
        }
    }
}

/// A URL from the config at `key`, refused with the key named when it does not parse.
pub fn config_url<U: std::str::FromStr>(key: &str, text: &str) -> Result<U, SetupError>
where
    U::Err: Error + Send + Sync + 'static,
{
    text.parse()
        .map_err(|error| SetupError::because(format!("`{key}`: {text:?} is not a URL"), error))
}

/// The two steps that set a channel up from its config section, as every adapter takes them:
/// build the settings (`settings`: secrets resolved, keys read), then hold them to the
/// platform's own rules (`problems`), reporting a refusal under `unusable`
/// (``"`channels.<name>` is not usable"``).
pub struct Steps<S, T, E> {
    /// What a refusal by the platform's rules is reported under.
    pub unusable: &'static str,
    /// Builds the settings from the section; a secret file others can read goes to the
    /// warnings.
    pub settings: fn(&S, &mut Vec<String>) -> Result<T, SetupError>,
    /// Every key of the settings the platform's rules refuse.
    pub problems: fn(&T) -> Vec<E>,
}

impl<S, T, E: Error + Send + Sync + 'static> Steps<S, T, E> {
    /// For [`Adapter::check`]: the error that stopped the settings being built, or every key
    /// the platform's rules refuse, each its own error; nothing without a `section`.
    pub fn check(&self, section: Option<&S>, warnings: &mut Vec<String>) -> Vec<SetupError> {
        let Some(section) = section else {
            return Vec::new();
        };
        match (self.settings)(section, warnings) {
            Ok(settings) => (self.problems)(&settings)
                .into_iter()
                .map(|problem| SetupError::because(self.unusable, problem))
                .collect(),
            Err(error) => vec![error],
        }
    }

    /// For [`Adapter::prepare`]: the settings, unless building them fails or the platform's
    /// rules refuse a key. Then one error names every refused key, one a line, so a single
    /// start shows all there is to fix, as `doctor` lists them. `None` without a `section`.
    pub fn prepare(
        &self,
        section: Option<&S>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<T>, SetupError> {
        let Some(section) = section else {
            return Ok(None);
        };
        let settings = (self.settings)(section, warnings)?;
        let mut problems = (self.problems)(&settings);
        if problems.len() <= 1 {
            return match problems.pop() {
                Some(problem) => Err(SetupError::because(self.unusable, problem)),
                None => Ok(Some(settings)),
            };
        }
        let lines: Vec<String> = problems.iter().map(ToString::to_string).collect();
        Err(SetupError::because(
            self.unusable,
            format!(
                "{} keys are refused:\n  {}",
                problems.len(),
                lines.join("\n  ")
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("invalid {0}")]
    struct Refused(&'static str);

    /// Settings that are the section's words, each word a refused key unless it is `ok`.
    const STEPS: Steps<&'static str, Vec<&'static str>, Refused> = Steps {
        unusable: "`channels.test` is not usable",
        settings: |section, _| Ok(section.split(' ').collect()),
        problems: |words| {
            words
                .iter()
                .filter(|word| **word != "ok")
                .map(|word| Refused(word))
                .collect()
        },
    };

    #[test]
    fn names_every_refused_key_at_once_and_each_apart_for_doctor() {
        let refused = STEPS.prepare(Some(&"a ok b"), &mut Vec::new()).unwrap_err();
        assert_eq!(refused.to_string(), "`channels.test` is not usable");
        assert_eq!(
            refused.explained(),
            "`channels.test` is not usable: 2 keys are refused:\n  invalid a\n  invalid b"
        );
        assert_eq!(
            std::error::Error::source(&refused).map(ToString::to_string),
            Some("2 keys are refused:\n  invalid a\n  invalid b".to_owned())
        );
        let one = STEPS.prepare(Some(&"ok a"), &mut Vec::new()).unwrap_err();
        assert_eq!(
            std::error::Error::source(&one).map(ToString::to_string),
            Some("invalid a".to_owned())
        );
        assert_eq!(STEPS.check(Some(&"a ok b"), &mut Vec::new()).len(), 2);
        assert_eq!(
            STEPS.prepare(Some(&"ok"), &mut Vec::new()).unwrap(),
            Some(vec!["ok"])
        );
        assert!(STEPS.prepare(None, &mut Vec::new()).unwrap().is_none());
        assert!(STEPS.check(None, &mut Vec::new()).is_empty());
    }
}
