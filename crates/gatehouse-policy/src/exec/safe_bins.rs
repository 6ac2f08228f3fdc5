//! Safe bins: stdin-only filters that run without an allowlist entry, within a strict profile.
//!
//! A profile lists what is allowed (the built-in ones are data, in [`profiles`]); every other
//! option, every abbreviation that is not an unambiguous prefix of one of the real tool's
//! options (and that option allowed), every path-like or glob operand and every expansion is
//! refused. The command line is read with the grammar reader every other tool's options are
//! read with ([`super::options`]). Only a binary whose real directory is trusted qualifies, so
//! an agent cannot drop its own `head` into a directory on `PATH`.

mod profiles;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use self::profiles::builtin;
use super::evaluation::{Reason, Rule};
use super::inline_eval::is_interpreter_like;
use super::options::{Arity, Grammar, Opt, Role, opt};
use super::policy::{DEFAULT_SAFE_BIN_TRUSTED_DIRS, SafeBinProfile};

/// Whether Gatehouse ships a profile for safe bin `name` (normalized, lower-case): a safe bin
/// with neither this nor a configured profile is never allowed as one, which `doctor` reports.
pub fn has_builtin_profile(name: &str) -> bool {
    builtin(name).is_some()
}

/// What a call is checked against: the tool's option grammar and its operand limits.
struct Profile<'g> {
    grammar: &'g Grammar<'g>,
    min_operands: usize,
    max_operands: Option<usize>,
}

/// The options a configured profile states (`-n`, `--lines`): allowed value flags and refused
/// ones. Any other option is unknown, so refused; a flag written otherwise cannot be stated.
fn config_opts(config: &SafeBinProfile) -> Vec<Opt<'_>> {
    fn flag(written: &str) -> Option<(Option<char>, Option<&str>)> {
        let written = written.trim();
        if let Some(long) = written.strip_prefix("--") {
            return (!long.is_empty() && !long.contains('=')).then_some((None, Some(long)));
        }
        let mut letters = written.strip_prefix('-')?.chars();
        match (letters.next(), letters.next()) {
            (Some(letter), None) => Some((Some(letter), None)),
            _ => None,
        }
    }
    let value_flags = config
        .allowed_value_flags
        .iter()
        .filter_map(|f| flag(f))
        .map(|(short, long)| opt(short, long, Arity::Required, Role::Plain));
    let denied = config
        .denied_flags
        .iter()
        .filter_map(|f| flag(f))
        .map(|(short, long)| opt(short, long, Arity::Flag, Role::Denied));
    // Refusals first: a flag listed in both is refused.
    denied.chain(value_flags).collect()
}

/// The safe-bin half of an [`super::ExecPolicy`], prepared once per evaluation.
#[derive(Debug)]
pub(crate) struct SafeBins<'p> {
    names: &'p [String],
    profiles: &'p BTreeMap<String, SafeBinProfile>,
    trusted_dirs: Rc<Vec<PathBuf>>,
}

/// A configured trusted-directory list and the full list derived from it.
type TrustedMemo = (Vec<PathBuf>, Rc<Vec<PathBuf>>);

thread_local! {
    /// The last trusted-directory list with its real paths, reused while the configured list is
    /// unchanged (resolving it costs several system calls per evaluation).
    static TRUSTED: RefCell<Option<TrustedMemo>> = const { RefCell::new(None) };
}

/// The trusted directories: defaults plus configured ones, each also by its real location, since
/// a trusted directory that is itself a symlink (`/bin` → `/usr/bin`) is trusted there too. A
/// symlinked *binary* is still judged by where it really lives.
fn trusted_dirs(extra: &[PathBuf]) -> Rc<Vec<PathBuf>> {
    TRUSTED.with(|cell| {
        let mut cell = cell.borrow_mut();
        if let Some((key, dirs)) = cell.as_ref()
            && key.as_slice() == extra
        {
            return Rc::clone(dirs);
        }
        let mut dirs: Vec<PathBuf> = DEFAULT_SAFE_BIN_TRUSTED_DIRS
            .iter()
            .map(PathBuf::from)
            .chain(extra.iter().cloned())
            .collect();
        let real: Vec<PathBuf> = dirs
            .iter()
            .filter_map(|dir| std::fs::canonicalize(dir).ok())
            .collect();
        dirs.extend(real);
        let dirs = Rc::new(dirs);
        *cell = Some((extra.to_vec(), Rc::clone(&dirs)));
        dirs
    })
}

/// Whether a binary, by its real path, lives in a trusted directory (`/bin`, `/usr/bin` or
/// `extra_trusted`): where an agent cannot drop a file of its own under a well-known name. Safe
/// bins need it, and so does an executor spawning a wrapper the policy looked through.
pub fn is_in_trusted_dir(real_path: &Path, extra_trusted: &[PathBuf]) -> bool {
    let dirs = trusted_dirs(extra_trusted);
    in_dirs(&dirs, real_path)
}

fn in_dirs(dirs: &[PathBuf], real_path: &Path) -> bool {
    real_path
        .parent()
        .is_some_and(|dir| dirs.iter().any(|trusted| trusted == dir))
}

impl<'p> SafeBins<'p> {
    pub(crate) fn new(
        names: &'p [String],
        profiles: &'p BTreeMap<String, SafeBinProfile>,
        extra_trusted: &[PathBuf],
    ) -> Self {
        let trusted_dirs = trusted_dirs(extra_trusted);
        SafeBins {
            names,
            profiles,
            trusted_dirs,
        }
    }

    /// Whether `name` is configured as a safe bin at all. Names match exactly: on Linux `HEAD`
    /// is not `head` but another program (libwww-perl's `lwp-request`), and a configured name
    /// (lower-cased when the config is read) never admits a program spelled otherwise.
    pub(crate) fn is_listed(&self, name: &str) -> bool {
        self.names.iter().any(|listed| listed.trim() == name)
    }

    /// Checks a call of a listed safe bin: trusted location, profile, operands.
    /// `globbed` says an argument holds an unquoted glob the shell would expand into file
    /// names; `expanded` names an argument with a parameter expansion, whose value (a path, a
    /// filter) only the shell knows. A `$` in single quotes is text (`jq --arg k v '$k'`).
    pub(crate) fn check(
        &self,
        name: &str,
        resolved: &Path,
        args: &[String],
        globbed: bool,
        expanded: Option<&str>,
    ) -> Result<(), Reason> {
        let refuse = |detail: String| Err(Reason::new(Rule::SafeBinRefused, detail));
        if is_interpreter_like(name) {
            return refuse(format!(
                "`{name}` can run code, so it can never be a safe bin"
            ));
        }
        if !in_dirs(&self.trusted_dirs, resolved) {
            return refuse(format!(
                "`{}` is not in a trusted safe-bin directory (/bin, /usr/bin or safeBinTrustedDirs)",
                resolved.display()
            ));
        }
        let configured = self
            .profiles
            .iter()
            .find(|(key, _)| key.trim() == name)
            .map(|(_, profile)| profile);
        let config_opts = configured.map(config_opts).unwrap_or_default();
        let config_grammar = Grammar {
            opts: &config_opts,
            permute: true,
            abbreviations: false,
            unknown_attached_ok: false,
            numeric_shorthand: false,
        };
        let profile = match (configured, builtin(name)) {
            (Some(config), _) => Profile {
                grammar: &config_grammar,
                min_operands: config.min_positional.unwrap_or(0),
                max_operands: config.max_positional,
            },
            (None, Some(spec)) => Profile {
                grammar: &spec.grammar,
                min_operands: spec.min_operands,
                max_operands: spec.max_operands,
            },
            (None, None) => {
                return refuse(format!(
                    "`{name}` has no safe-bin profile; add one to safeBinProfiles"
                ));
            }
        };
        if globbed {
            return refuse(format!(
                "`{name}`: an unquoted glob would expand into file names"
            ));
        }
        if let Some(arg) = expanded {
            return Err(Reason::new(
                Rule::ParameterExpansion,
                format!("`{arg}`: expansions are refused in safe-bin arguments"),
            ));
        }
        let positionals = validate_args(&profile, args)
            .map_err(|detail| Reason::new(Rule::SafeBinRefused, format!("`{name}`: {detail}")))?;
        if let (true, Some(filter)) = (name == "jq", positionals.first()) {
            check_jq_filter(filter)?;
        }
        Ok(())
    }
}

/// Reads the arguments with the profile's grammar and returns the operands: every option must
/// be known and allowed, every value and operand plain, and the operands within the limits.
fn validate_args<'a>(profile: &Profile<'_>, args: &'a [String]) -> Result<Vec<&'a str>, String> {
    let parsed = profile
        .grammar
        .parse(args)
        .map_err(|unknown| format!("unknown, ambiguous or misused option `{}`", unknown.word))?;
    for (opt, value) in &parsed.options {
        let shown = match (opt.long, opt.short) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => "-N".to_owned(),
        };
        if opt.role == Role::Denied {
            return Err(format!("`{shown}` is refused"));
        }
        match (opt.arity, value) {
            (Arity::Flag, _) => {}
            (_, Some(value)) => check_value(value)?,
            (_, None) => return Err(format!("`{shown}` needs a value")),
        }
    }
    for value in &parsed.second_values {
        check_value(value)?;
    }
    // `-` is stdin only for a filter whose operands are all files; where operands are program
    // text or sets (jq's filter, tr's sets) it is one of them (jq 1.6 takes `jq - .env`'s `-`
    // as its filter). An empty word is always an operand: skipping it would turn the next
    // word, a file name, into jq's filter.
    let stdin_dash = profile.max_operands == Some(0);
    let mut operands = Vec::new();
    for operand in parsed.operands {
        if !(operand == "-" && stdin_dash) {
            check_operand(operand)?;
            operands.push(operand);
        }
    }
    if operands.len() < profile.min_operands {
        return Err(format!(
            "needs at least {} operand(s)",
            profile.min_operands
        ));
    }
    if let Some(max) = profile.max_operands.filter(|max| operands.len() > *max) {
        return Err(format!(
            "at most {max} operand(s) allowed (safe bins read stdin, not files)"
        ));
    }
    Ok(operands)
}

/// Option values must be plain literals: no globs, nothing that looks like a path.
fn check_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("empty option value".to_owned());
    }
    check_literal(value)
}

/// Operands of a stdin-only filter: anything that could name a file other than one in the
/// working directory is refused. Beyond the leading forms of `check_literal`, a `/` anywhere
/// (`sub/s.json`) or a `..` component (`..`, `a/../b`) makes an operand path-like: a filter or
/// a set rarely needs one, and a file name slipping into an operand slot must not reach a file.
fn check_operand(value: &str) -> Result<(), String> {
    check_literal(value)?;
    if value.contains('/') || value.split('/').any(|part| part == "..") {
        return Err(format!("`{value}` looks like a file path"));
    }
    Ok(())
}

fn check_literal(value: &str) -> Result<(), String> {
    if value == "-" {
        return Ok(());
    }
    let path_like = value.starts_with('/')
        || value.starts_with("./")
        || value.starts_with("../")
        || value.starts_with('~');
    if path_like {
        return Err(format!("`{value}` looks like a file path"));
    }
    Ok(())
}

/// jq filters that read the environment or files are refused; `.env` (a field) is fine.
fn check_jq_filter(filter: &str) -> Result<(), Reason> {
    const READERS: &[&str] = &[
        "env",
        "$ENV",
        "input",
        "inputs",
        "input_filename",
        "include",
        "import",
        "$__loc__",
        "$__prog_args",
        "getpath_env",
        "debug",
        "stderr",
        "input_line_number",
        "halt_error",
    ];
    let bytes = filter.as_bytes();
    let mut start = None;
    for (i, &b) in bytes.iter().chain(std::iter::once(&b' ')).enumerate() {
        let ident = b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
        match (start, ident) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let token = &filter[s..i];
                let is_field = s > 0 && bytes[s - 1] == b'.';
                if !is_field && READERS.contains(&token) {
                    return Err(Reason::new(
                        Rule::SafeBinRefused,
                        format!("jq filter uses `{token}`, which reads the environment or files"),
                    ));
                }
                start = None;
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::profiles::SAFE_BINS;
    use super::*;

    fn check(name: &str, args: &[&str]) -> Result<(), Reason> {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let names = vec![name.to_owned()];
        let profiles = BTreeMap::new();
        let bins = SafeBins::new(&names, &profiles, &[]);
        bins.check(name, Path::new("/usr/bin/x"), &args, false, None)
    }

    /// The one test of the declarative profiles: every `should_match` example passes and every
    /// `should_not_match` one is refused.
    #[test]
    fn every_example_holds() {
        let mut wrong = Vec::new();
        for spec in SAFE_BINS {
            for example in spec.should_match {
                if let Err(reason) = check(spec.name, example) {
                    wrong.push(format!("{} {example:?} refused: {reason}", spec.name));
                }
            }
            for example in spec.should_not_match {
                if check(spec.name, example).is_ok() {
                    wrong.push(format!("{} {example:?} allowed", spec.name));
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// A table names each option once, so an abbreviation resolves as the tool's getopt does.
    #[test]
    fn every_table_lists_each_option_once() {
        for spec in SAFE_BINS {
            let mut shorts: Vec<char> = spec.grammar.opts.iter().filter_map(|o| o.short).collect();
            let mut longs: Vec<&str> = spec.grammar.opts.iter().filter_map(|o| o.long).collect();
            let (s, l) = (shorts.len(), longs.len());
            shorts.sort_unstable();
            shorts.dedup();
            longs.sort_unstable();
            longs.dedup();
            assert_eq!((shorts.len(), longs.len()), (s, l), "{}", spec.name);
        }
    }

    #[test]
    fn never_lets_a_code_runner_be_a_safe_bin() {
        assert!(check("awk", &["{print}"]).is_err());
        assert!(check("sudo", &[]).is_err());
    }

    #[test]
    fn reads_configured_profiles_exactly() {
        let names = vec!["myfilter".to_owned()];
        let profiles = BTreeMap::from([(
            "myfilter".to_owned(),
            SafeBinProfile {
                max_positional: Some(0),
                allowed_value_flags: vec!["-n".to_owned(), " --lines ".to_owned()],
                denied_flags: vec!["--file".to_owned()],
                ..SafeBinProfile::default()
            },
        )]);
        let bins = SafeBins::new(&names, &profiles, &[]);
        let ok = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            bins.check("myfilter", Path::new("/usr/bin/x"), &args, false, None)
                .is_ok()
        };
        assert!(ok(&["-n", "1"]));
        assert!(ok(&["--lines=2"]));
        assert!(
            !ok(&["--li", "2"]),
            "no abbreviations without the real option list"
        );
        assert!(!ok(&["--file", "x"]));
        assert!(!ok(&["-q"]));
        assert!(!ok(&["x"]));
    }

    #[test]
    fn denies_untrusted_locations() {
        let names = vec!["head".to_owned()];
        let profiles = BTreeMap::new();
        let bins = SafeBins::new(&names, &profiles, &[]);
        assert!(
            bins.check("head", Path::new("/tmp/evil/head"), &[], false, None)
                .is_err()
        );
    }
}
