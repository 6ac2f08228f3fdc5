//! Which `byProvider` entries and model gates apply to the session's provider and model.

use super::inputs::{ProviderRules, SessionContext};

/// Providers whose models get `apply_patch` without `allowModels`.
const APPLY_PATCH_PROVIDERS: [&str; 2] = ["openai", "openai-codex"];

/// The lower-cased provider and `provider/model` id of a session, if known.
fn provider_and_full_model(session: &SessionContext) -> (Option<String>, Option<String>) {
    let model = session
        .model
        .as_deref()
        .map(|m| m.trim().to_lowercase())
        .filter(|m| !m.is_empty());
    let provider = session
        .provider
        .as_deref()
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .or_else(|| {
            model
                .as_deref()
                .and_then(|m| m.split_once('/'))
                .map(|(p, _)| p.to_owned())
        });
    let full_model = match (&provider, model) {
        (Some(p), Some(m)) if !m.contains('/') => Some(format!("{p}/{m}")),
        (_, m) => m,
    };
    (provider, full_model)
}

/// The entries that apply: those keyed by `provider/model` if any, else those keyed by the
/// provider. Several entries can match when keys differ only in case; all of them apply.
pub(crate) fn matching_provider_rules<'a>(
    entries: &'a [ProviderRules],
    session: &SessionContext,
) -> Vec<&'a ProviderRules> {
    let (provider, full_model) = provider_and_full_model(session);
    for candidate in [full_model, provider].into_iter().flatten() {
        let matches: Vec<_> = entries
            .iter()
            .filter(|e| e.key.trim().to_lowercase() == candidate)
            .collect();
        if !matches.is_empty() {
            return matches;
        }
    }
    Vec::new()
}

/// Whether the session's model may be offered `apply_patch`: an OpenAI model, or — when
/// `allowModels` is set — a model it names (by id or `provider/id`). Unknown models get nothing.
pub(crate) fn apply_patch_allowed(session: &SessionContext, allow_models: &[String]) -> bool {
    let (provider, full_model) = provider_and_full_model(session);
    let allow_models: Vec<String> = allow_models
        .iter()
        .map(|m| m.trim().to_lowercase())
        .filter(|m| !m.is_empty())
        .collect();
    if allow_models.is_empty() {
        return provider.is_some_and(|p| APPLY_PATCH_PROVIDERS.contains(&p.as_str()));
    }
    let bare_model = session.model.as_deref().map(|m| m.trim().to_lowercase());
    allow_models
        .iter()
        .any(|entry| Some(entry) == full_model.as_ref() || Some(entry) == bare_model.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::inputs::ToolRules;

    fn session(provider: Option<&str>, model: Option<&str>) -> SessionContext {
        SessionContext {
            provider: provider.map(str::to_owned),
            model: model.map(str::to_owned),
            ..Default::default()
        }
    }

    fn entry(key: &str) -> ProviderRules {
        ProviderRules {
            key: key.into(),
            profile: None,
            rules: ToolRules {
                path: format!("tools.byProvider.{key}"),
                ..Default::default()
            },
        }
    }

    fn keys(found: Vec<&ProviderRules>) -> Vec<&str> {
        found.iter().map(|e| e.key.as_str()).collect()
    }

    #[test]
    fn prefers_provider_model_key_over_provider_key() {
        let entries = [entry("openai"), entry("OpenAI/GPT-5")];
        assert_eq!(
            keys(matching_provider_rules(
                &entries,
                &session(Some("openai"), Some("gpt-5"))
            )),
            vec!["OpenAI/GPT-5"]
        );
        assert_eq!(
            keys(matching_provider_rules(
                &entries,
                &session(Some("OpenAI"), Some("gpt-4o"))
            )),
            vec!["openai"]
        );
    }

    #[test]
    fn accepts_a_model_id_that_already_names_the_provider() {
        let entries = [entry("openai/gpt-5")];
        assert_eq!(
            keys(matching_provider_rules(
                &entries,
                &session(None, Some("openai/gpt-5"))
            )),
            vec!["openai/gpt-5"]
        );
    }

    #[test]
    fn applies_every_entry_whose_key_differs_only_in_case() {
        let entries = [entry("anthropic"), entry("Anthropic")];
        assert_eq!(
            matching_provider_rules(&entries, &session(Some("anthropic"), None)).len(),
            2
        );
    }

    #[test]
    fn no_provider_matches_nothing() {
        assert!(matching_provider_rules(&[entry("openai")], &session(None, None)).is_empty());
    }

    #[test]
    fn offers_apply_patch_to_openai_models_only_by_default() {
        assert!(apply_patch_allowed(
            &session(Some("openai"), Some("gpt-5")),
            &[]
        ));
        assert!(apply_patch_allowed(
            &session(Some("openai-codex"), None),
            &[]
        ));
        assert!(!apply_patch_allowed(
            &session(Some("anthropic"), Some("claude")),
            &[]
        ));
        assert!(!apply_patch_allowed(&session(None, None), &[]));
    }

    #[test]
    fn allow_models_names_the_models_that_get_apply_patch() {
        let allow = vec!["anthropic/claude-opus-4".to_owned(), "gpt-5".to_owned()];
        assert!(apply_patch_allowed(
            &session(Some("anthropic"), Some("Claude-Opus-4")),
            &allow
        ));
        assert!(apply_patch_allowed(
            &session(Some("openai"), Some("gpt-5")),
            &allow
        ));
        assert!(!apply_patch_allowed(
            &session(Some("openai"), Some("gpt-4o")),
            &allow
        ));
        assert!(!apply_patch_allowed(
            &session(Some("anthropic"), None),
            &allow
        ));
    }
}
