//! Log output for `serve`: lines on stderr, filtered by `RUST_LOG`.
//!
//! The filter is `tracing-subscriber`'s `Targets` (`info`, `gatehouse_gateway=debug,warn`), not
//! its `EnvFilter`: `EnvFilter`'s span and field filters need `regex-automata`'s DFA builder, and
//! Cargo would then enable that builder for every regex in the binary, including the allowlist
//! patterns each `gatehouse check` compiles (see `docs/performance.md`).

use std::io::IsTerminal as _;
use std::str::FromStr as _;

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// How log lines are written; `json` is for log collectors.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}

/// What is logged when `RUST_LOG` is unset, empty or not understood.
const DEFAULT_LEVEL: &str = "info";

/// Installs the subscriber. A `RUST_LOG` that does not parse is reported in the log itself
/// (at `warn`) and the default level applies, so a typo never silences the gateway. Colours
/// only on a terminal: escape codes in a log file or journal are noise.
pub(crate) fn init(format: LogFormat) {
    let (filter, refused) = filter_from(std::env::var("RUST_LOG").ok().as_deref());
    let registry = tracing_subscriber::registry().with(filter);
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match format {
        LogFormat::Text => registry.with(lines).init(),
        LogFormat::Json => registry.with(lines.json()).init(),
    }
    if let Some(reason) = refused {
        tracing::warn!(reason = %reason, "RUST_LOG was not understood; logging at {DEFAULT_LEVEL}.");
    }
}

/// The filter `RUST_LOG` asks for, or the default and why the value was refused.
fn filter_from(value: Option<&str>) -> (Targets, Option<String>) {
    let default = || Targets::new().with_default(tracing::Level::INFO);
    match value.map(str::trim).filter(|value| !value.is_empty()) {
        None => (default(), None),
        Some(value) => match unsupported_directive(value) {
            Some(refused) => (default(), Some(refused)),
            None => match Targets::from_str(value) {
                Ok(targets) => (targets, None),
                Err(error) => (default(), Some(error.to_string())),
            },
        },
    }
}

/// A directive `Targets` would read as a target name although it is none: it parses as a
/// target that matches nothing, which would leave only what the other directives name, or
/// nothing, logged. A span or field filter (`gatehouse[span{x}]=debug`) is named as such; any
/// other character a module path cannot hold (`bogus!!`) is a typo, not a filter.
fn unsupported_directive(value: &str) -> Option<String> {
    let is_target_char = |c: char| c.is_ascii_alphanumeric() || "_:-.".contains(c);
    value.split(',').map(str::trim).find_map(|directive| {
        let target = directive.split_once('=').map_or(directive, |(t, _)| t);
        if target.chars().all(is_target_char) {
            None
        } else if target.contains(['[', ']', '{', '}']) {
            Some(format!(
                "`{directive}`: span and field filters are not supported, only target=level"
            ))
        } else {
            Some(format!(
                "`{directive}`: `{target}` is neither a level (trace, debug, info, warn, error, \
                 off) nor a target (a module path such as gatehouse_gateway::ws)"
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::*;

    #[test]
    fn unset_or_empty_logs_at_info() {
        for value in [None, Some(""), Some("  ")] {
            let (filter, refused) = filter_from(value);
            assert_eq!(
                filter.default_level(),
                Some(Level::INFO.into()),
                "{value:?}"
            );
            assert!(refused.is_none());
        }
    }

    #[test]
    fn reads_levels_per_target() {
        let (filter, refused) = filter_from(Some("gatehouse_gateway=debug,warn"));
        assert!(refused.is_none());
        assert!(filter.would_enable("gatehouse_gateway::ws", &Level::DEBUG));
        assert!(!filter.would_enable("hyper", &Level::INFO));
        assert!(filter.would_enable("hyper", &Level::WARN));
    }

    #[test]
    fn a_span_filter_falls_back_to_info_instead_of_silencing_everything() {
        for value in ["gatehouse[span{x}]=debug", "info,gatehouse[{x}]=debug"] {
            let (filter, refused) = filter_from(Some(value));
            assert!(refused.is_some_and(|why| why.contains("span")), "{value}");
            assert!(filter.would_enable("gatehouse", &Level::INFO), "{value}");
        }
    }

    /// Operator walkthrough: `RUST_LOG='bogus!!'` was reported as a span or field filter.
    #[test]
    fn a_target_with_stray_characters_is_named_as_no_target_not_as_a_span_filter() {
        for (value, directive, target) in [
            ("bogus!!", "bogus!!", "bogus!!"),
            (
                "info,gatehouse gateway=debug",
                "gatehouse gateway=debug",
                "gatehouse gateway",
            ),
        ] {
            let (filter, refused) = filter_from(Some(value));
            assert_eq!(
                refused.as_deref(),
                Some(
                    format!(
                        "`{directive}`: `{target}` is neither a level (trace, debug, info, warn, \
                         error, off) nor a target (a module path such as gatehouse_gateway::ws)"
                    )
                    .as_str()
                ),
                "{value}"
            );
            assert!(filter.would_enable("gatehouse", &Level::INFO), "{value}");
        }
    }

    #[test]
    fn a_value_it_cannot_read_falls_back_to_info_and_says_why() {
        let (filter, refused) = filter_from(Some("gatehouse=loud"));
        assert!(refused.is_some());
        assert!(filter.would_enable("gatehouse", &Level::INFO));
        assert!(!filter.would_enable("gatehouse", &Level::DEBUG));
    }
}
