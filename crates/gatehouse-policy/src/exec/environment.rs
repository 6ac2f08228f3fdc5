//! The variables a request sets itself: which of them leave a command's auto-allow standing.
//!
//! A variable can change what any program runs or writes: the loader's (`LD_PRELOAD`), git's
//! (`GIT_CONFIG_COUNT` with `core.fsmonitor`), make's (`MAKEFLAGS=--eval=…`, `CC`), OpenSSL's
//! (`OPENSSL_CONF` loads a provider library into curl), glibc's (`GCONV_PATH`), the JVM's
//! (`JAVA_TOOL_OPTIONS`), and hundreds more that tools read. No list of the dangerous ones is
//! complete, so this is a list of the harmless ones: a variable the requester sets keeps
//! auto-allow only if it is listed here with a value of the listed shape. Any other withdraws
//! every auto-allow, shell builtins' too (the shell that runs a builtin is a program that reads
//! the same variables: `LD_PRELOAD` loads into it, bash's `SHELLOPTS=xtrace` runs `PS4`), so a
//! person decides. The variables the host filled
//! in from its own environment ([`ExecRequest::inherited`](super::ExecRequest)) are the host's
//! settings, not the requester's, and are not judged.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::child_env::is_analysable_locale;
use super::evaluation::{Reason, Rule};
use super::policy::DEFAULT_SAFE_BIN_TRUSTED_DIRS;
use super::segment::SegmentOutcome;

/// What a listed variable's value may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// Anything: the variable only changes how output looks or what a record says.
    Any,
    /// A locale name (`C.UTF-8`, `en_US:en`), not a path: glibc loads locale data, message
    /// catalogs included, from a value with a `/`, and programs print their messages through
    /// those catalogs as format strings.
    LocaleName,
    /// A locale name that also picks the character set the shell reads the command in: it must
    /// be UTF-8 or single-byte ([`is_analysable_locale`]), or the shell may read a multibyte
    /// character as swallowing the backslash after it and split the command elsewhere.
    CtypeLocale,
    /// A zone name under the system's zoneinfo or a POSIX rule (`Europe/Paris`, `UTC0`): a
    /// leading `/` (after an optional `:`) or a `..` component reads a zone file of the
    /// caller's.
    ZoneName,
    /// A terminfo entry name, not a path.
    TermName,
    /// No pager at all: empty or `cat` (git then starts none; others run `cat`).
    NoPager,
}

/// The variables known not to change what code runs or what files are written, each with why.
/// When in doubt a variable stays off: it then needs a person, which is safe.
const HARMLESS: &[(&str, Value)] = &[
    // Locale: which of the system's locales formats text and messages. `LOCPATH`, which
    // moves the locale directories, is not here.
    ("LANG", Value::CtypeLocale),
    ("LANGUAGE", Value::LocaleName),
    ("LC_ALL", Value::CtypeLocale),
    ("LC_ADDRESS", Value::LocaleName),
    ("LC_COLLATE", Value::LocaleName),
    ("LC_CTYPE", Value::CtypeLocale),
    ("LC_IDENTIFICATION", Value::LocaleName),
    ("LC_MEASUREMENT", Value::LocaleName),
    ("LC_MESSAGES", Value::LocaleName),
    ("LC_MONETARY", Value::LocaleName),
    ("LC_NAME", Value::LocaleName),
    ("LC_NUMERIC", Value::LocaleName),
    ("LC_PAPER", Value::LocaleName),
    ("LC_TELEPHONE", Value::LocaleName),
    ("LC_TIME", Value::LocaleName),
    // The time zone dates are shown in. `TZDIR`, which moves the zone files, is not here.
    ("TZ", Value::ZoneName),
    // The terminal: escape sequences, colours and width. `TERMINFO` and `TERMCAP`, which
    // name or hold the terminal description, are not here.
    ("TERM", Value::TermName),
    ("COLORTERM", Value::Any),
    ("NO_COLOR", Value::Any),
    ("FORCE_COLOR", Value::Any),
    ("CLICOLOR", Value::Any),
    ("CLICOLOR_FORCE", Value::Any),
    ("COLUMNS", Value::Any),
    ("LINES", Value::Any),
    // "Running unattended": tools stop prompting and drawing progress bars.
    ("CI", Value::Any),
    // A commit's recorded author and committer; git stops prompting for credentials with
    // `GIT_TERMINAL_PROMPT=0`. Every other `GIT_*` variable is git configuration.
    ("GIT_AUTHOR_NAME", Value::Any),
    ("GIT_AUTHOR_EMAIL", Value::Any),
    ("GIT_AUTHOR_DATE", Value::Any),
    ("GIT_COMMITTER_NAME", Value::Any),
    ("GIT_COMMITTER_EMAIL", Value::Any),
    ("GIT_COMMITTER_DATE", Value::Any),
    ("GIT_TERMINAL_PROMPT", Value::Any),
    // No pager, as agents ask for output that ends; any other pager is a command.
    ("PAGER", Value::NoPager),
    ("GIT_PAGER", Value::NoPager),
    // How much a Rust panic prints.
    ("RUST_BACKTRACE", Value::Any),
    // Python's output buffering, and whether it caches bytecode (it then writes less).
    ("PYTHONUNBUFFERED", Value::Any),
    ("PYTHONDONTWRITEBYTECODE", Value::Any),
];

/// The first variable the requester set that withdraws auto-allow, as a reason a person can
/// read; `None` when every one is harmless. `PATH` is harmless only when it lists nothing but
/// trusted directories (`/bin`, `/usr/bin` and `trusted_dirs`, the operator's
/// `safeBinTrustedDirs`, which agents cannot write): an allowlisted `make`, `git` or `npm`
/// looks its own helpers up on it, and so does a `#!/usr/bin/env` script.
pub(crate) fn refusal(
    env: &BTreeMap<String, String>,
    inherited: &BTreeSet<String>,
    trusted_dirs: &[PathBuf],
) -> Option<Reason> {
    let mut refused = env
        .iter()
        .filter(|(key, _)| !inherited.contains(*key))
        .filter_map(|(key, value)| {
            why_refused(key, value, trusted_dirs).map(|why| (key.as_str(), why))
        });
    let (variable, why) = refused.next()?;
    let more = match refused.count() {
        0 => String::new(),
        others => format!(" (and {others} more)"),
    };
    Some(Reason::new(
        Rule::EnvAssignment,
        format!("the request environment sets `{variable}`{more}, {why}; a person decides"),
    ))
}

/// Why one variable the requester set withdraws auto-allow, or `None` if it does not.
fn why_refused(key: &str, value: &str, trusted_dirs: &[PathBuf]) -> Option<String> {
    if key == "PATH" {
        return (!only_trusted_dirs(value, trusted_dirs)).then(|| {
            "whose directories are not all trusted ones (/bin, /usr/bin or safeBinTrustedDirs): \
             the programs looked up on it, and the helpers they start, may be files an agent \
             wrote"
                .to_owned()
        });
    }
    let Some((_, shape)) = HARMLESS.iter().find(|(name, _)| *name == key) else {
        return Some(
            "which is not one of the variables known not to change what programs run or write"
                .to_owned(),
        );
    };
    let fits = match shape {
        Value::Any => true,
        Value::LocaleName | Value::TermName => !value.contains('/'),
        Value::CtypeLocale => !value.contains('/') && is_analysable_locale(value),
        Value::ZoneName => {
            let zone = value.strip_prefix(':').unwrap_or(value);
            !zone.starts_with('/') && !zone.split('/').any(|part| part == "..")
        }
        Value::NoPager => value.is_empty() || value == "cat",
    };
    (!fits).then(|| match shape {
        Value::NoPager => "to a pager other than `cat`, which is a command to run".to_owned(),
        Value::CtypeLocale if !value.contains('/') => "to a locale whose character set is not \
             UTF-8 or single-byte (or not named), in which the shell may split the command \
             where the analysis does not"
            .to_owned(),
        _ => "to a path, which makes programs read a file of the caller's choosing".to_owned(),
    })
}

/// Whether every entry of a `PATH` value is, as written, a trusted directory. An empty or
/// relative entry is the working directory or below it.
fn only_trusted_dirs(path: &str, trusted_dirs: &[PathBuf]) -> bool {
    path.split(':').map(Path::new).all(|entry| {
        entry.is_absolute()
            && DEFAULT_SAFE_BIN_TRUSTED_DIRS
                .iter()
                .map(Path::new)
                .chain(trusted_dirs.iter().map(PathBuf::as_path))
                .any(|dir| dir == entry)
    })
}

/// Withdraws every auto-allow, builtins' too: the variable reaches whatever program runs, and the
/// shell running a builtin is one.
pub(crate) fn refuse_all(outcomes: &mut [SegmentOutcome], reason: &Reason) {
    for outcome in outcomes {
        let evaluation = &mut outcome.evaluation;
        if evaluation.satisfied_by.is_none() {
            continue;
        }
        evaluation.satisfied_by = None;
        evaluation.reason = reason.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(key: &str, value: &str) -> bool {
        let env = BTreeMap::from([(key.to_owned(), value.to_owned())]);
        let trusted = [PathBuf::from("/opt/tools/bin")];
        refusal(&env, &BTreeSet::new(), &trusted).is_some()
    }

    #[test]
    fn keeps_listed_variables_with_values_of_their_shape() {
        for (key, value) in [
            ("LANG", "C.UTF-8"),
            ("LANGUAGE", "en_US:en"),
            ("LC_ALL", "sr_RS.UTF-8@latin"),
            ("LC_MESSAGES", "zh_TW.BIG5"),
            ("TZ", "Europe/Paris"),
            ("TZ", ":UTC"),
            ("TZ", "EST5EDT,M3.2.0,M11.1.0"),
            ("TERM", "xterm-256color"),
            ("GIT_PAGER", "cat"),
            ("PAGER", ""),
            ("PATH", "/usr/bin:/bin"),
            ("PATH", "/opt/tools/bin/:/usr/bin"),
        ] {
            assert!(!refused(key, value), "{key}={value}");
        }
    }

    #[test]
    fn refuses_other_variables_and_values_that_name_files_or_commands() {
        for (key, value) in [
            ("LANG", "/tmp/locale"),
            ("LANG", "zh_TW.BIG5"),
            ("LC_ALL", "zh_CN.GBK"),
            ("LC_CTYPE", "ja_JP.SJIS"),
            ("LANG", "zh_TW"),
            ("LC_ALL", "sr_RS@latin"),
            ("LC_MESSAGES", "../../tmp/x"),
            ("TZ", "/tmp/zone"),
            ("TZ", ":/tmp/zone"),
            ("TZ", "../../../tmp/zone"),
            ("TERM", "/tmp/terminfo"),
            ("PAGER", "less"),
            ("GIT_PAGER", "sh -c id"),
            ("PATH", "/tmp/evil:/usr/bin"),
            ("PATH", ":/usr/bin"),
            ("PATH", "bin:/usr/bin"),
            ("PATH", "/usr/bin/../../tmp"),
            ("LOCPATH", "/usr/lib/locale"),
            ("lang", "C"),
            ("OPENSSL_CONF", "/tmp/x.cnf"),
        ] {
            assert!(refused(key, value), "{key}={value}");
        }
    }

    #[test]
    fn names_the_first_variable_and_counts_the_rest() {
        let env = BTreeMap::from([
            ("CC".to_owned(), "x".to_owned()),
            ("LANG".to_owned(), "C".to_owned()),
            ("ZIPOPT".to_owned(), "x".to_owned()),
        ]);
        let reason = refusal(&env, &BTreeSet::new(), &[]).map(|r| r.to_string());
        assert_eq!(
            reason.as_deref(),
            Some(
                "env-assignment: the request environment sets `CC` (and 1 more), which is not \
                 one of the variables known not to change what programs run or write; a \
                 person decides"
            )
        );
        let inherited = BTreeSet::from(["CC".to_owned(), "ZIPOPT".to_owned()]);
        assert!(refusal(&env, &inherited, &[]).is_none());
    }
}
