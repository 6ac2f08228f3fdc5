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
/// (``"`channels.<name>` is not usable"``). Every refused key is reported, whichever step
/// refuses it: the settings step records a part it cannot build and goes on with a stand-in the
/// rules accept, so a malformed URL does not hide a malformed token.
pub struct Steps<S, T, E> {
    /// What a refusal by the platform's rules is reported under.
    pub unusable: &'static str,
    /// Builds the settings from the section. Each part it cannot build (a secret it cannot
    /// read, a missing key, a malformed URL) goes to the refusals, and the settings keep a
    /// stand-in the platform's rules accept, so the rules still judge every other key; the
    /// stand-ins are never used, since any refusal stops the start. `None` only when no
    /// settings can be built at all. A secret file others can read goes to the warnings.
    pub settings: fn(&S, &mut Vec<String>, &mut Vec<SetupError>) -> Option<T>,
    /// Every key of the settings the platform's rules refuse, named as the section wrote it
    /// (`tokenFile` when the token came from a file).
    pub problems: fn(&S, &T) -> Vec<E>,
}

impl<S, T, E: Error + Send + Sync + 'static> Steps<S, T, E> {
    /// Every refusal of `section`, in the order the keys are read: the settings step's, then
    /// the platform's rules', each its own error.
    fn refusals(&self, section: &S, warnings: &mut Vec<String>) -> (Option<T>, Vec<SetupError>) {
        let mut refused = Vec::new();
        let settings = (self.settings)(section, warnings, &mut refused);
        if let Some(settings) = &settings {
            refused.extend(
                (self.problems)(section, settings)
                    .into_iter()
                    .map(|problem| SetupError::because(self.unusable, problem)),
            );
        }
        (settings, refused)
    }

    /// For [`Adapter::check`]: every refusal of `section`, each its own error; nothing without
    /// a `section`.
    pub fn check(&self, section: Option<&S>, warnings: &mut Vec<String>) -> Vec<SetupError> {
        match section {
            Some(section) => self.refusals(section, warnings).1,
            None => Vec::new(),
        }
    }

    /// For [`Adapter::prepare`]: the settings, unless something is refused. One refusal is
    /// returned as it is; several become one error naming every refused key, one a line, so a
    /// single start shows all there is to fix, as `doctor` lists them. `None` without a
    /// `section`.
    pub fn prepare(
        &self,
        section: Option<&S>,
        warnings: &mut Vec<String>,
    ) -> Result<Option<T>, SetupError> {
        let Some(section) = section else {
            return Ok(None);
        };
        let (settings, mut refused) = self.refusals(section, warnings);
        if refused.len() > 1 {
            let lines: Vec<String> = refused.iter().map(refusal_line).collect();
            return Err(SetupError::because(
                self.unusable,
                format!(
                    "{} keys are refused:\n  {}",
                    refused.len(),
                    lines.join("\n  ")
                ),
            ));
        }
        match (refused.pop(), settings) {
            (Some(refusal), _) => Err(refusal),
            (None, Some(settings)) => Ok(Some(settings)),
            (None, None) => Err(SetupError::Refused(format!(
                "{}: its settings could not be built",
                self.unusable
            ))),
        }
    }
}

/// One refusal on one line of a combined error: a rule's refusal without the `unusable`
/// context it is listed under, any other with its causes.
fn refusal_line(refusal: &SetupError) -> String {
    match refusal {
        SetupError::Because { source, .. } => source.to_string(),
        other => other.explained(),
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
        settings: |section, _, refused| {
            // A word `url:` stands for a part the settings step itself refuses.
            let words = section.split(' ');
            refused.extend(
                words
                    .clone()
                    .filter(|word| word.starts_with("url:"))
                    .map(|word| SetupError::Refused(format!("bad {word}"))),
            );
            Some(words.filter(|word| !word.starts_with("url:")).collect())
        },
        problems: |_, words| {
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

    /// Operator review: a malformed `apiUrl` (refused while the settings were built) hid a
    /// malformed token (refused by the platform's rules) until the next start.
    #[test]
    fn a_part_the_settings_step_refuses_hides_no_rule_refusal() {
        let refused = STEPS
            .prepare(Some(&"url:x a ok"), &mut Vec::new())
            .unwrap_err();
        assert_eq!(
            refused.explained(),
            "`channels.test` is not usable: 2 keys are refused:\n  bad url:x\n  invalid a"
        );
        let each: Vec<String> = STEPS
            .check(Some(&"url:x a ok"), &mut Vec::new())
            .iter()
            .map(SetupError::explained)
            .collect();
        assert_eq!(
            each,
            ["bad url:x", "`channels.test` is not usable: invalid a"]
        );
        let alone = STEPS
            .prepare(Some(&"url:x ok"), &mut Vec::new())
            .unwrap_err();
        assert_eq!(
            alone.to_string(),
            "bad url:x",
            "one refusal is passed on as it is"
        );
    }
}
