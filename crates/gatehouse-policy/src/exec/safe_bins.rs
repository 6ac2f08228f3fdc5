//! Safe bins: stdin-only filters that run without an allowlist entry, within a strict profile.
//!
//! A profile lists what is allowed; every other flag, every abbreviation that is not an
//! unambiguous prefix of one of the real tool's options (and that option in the profile), every
//! path-like or glob operand and every `$` is refused. Only a binary whose real directory is trusted qualifies, so an agent cannot drop
//! its own `head` into a directory on `PATH`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::evaluation::{Reason, Rule};
use super::inline_eval::is_interpreter_like;
use super::policy::{DEFAULT_SAFE_BIN_TRUSTED_DIRS, SafeBinProfile};

/// A profile with the boolean flags the built-in tools accept, which config profiles cannot
/// express.
#[derive(Debug, Clone, Default)]
struct Profile<'a> {
    min_positional: usize,
    max_positional: Option<usize>,
    value_flags: Vec<&'a str>,
    /// `jq --arg NAME VALUE` style flags taking two values.
    pair_flags: Vec<&'a str>,
    bool_flags: Vec<&'a str>,
    denied_flags: Vec<&'a str>,
    /// `head -5` is `head -n 5`.
    numeric_shorthand: bool,
}

fn strings(items: &[&'static str]) -> Vec<&'static str> {
    items.to_vec()
}

/// The boolean flags `head` and `tail` share.
const HEAD_TAIL_FLAGS: &[&str] = &[
    "-q",
    "-v",
    "-z",
    "--quiet",
    "--silent",
    "--verbose",
    "--zero-terminated",
];

/// Whether Gatehouse ships a profile for safe bin `name` (normalized, lower-case): a safe bin
/// with neither this nor a configured profile is never allowed as one, which `doctor` reports.
pub fn has_builtin_profile(name: &str) -> bool {
    builtin_profile(name).is_some()
}

/// The built-in profile of a safe bin, if Gatehouse ships one.
fn builtin_profile(name: &str) -> Option<Profile<'static>> {
    let profile = match name {
        "jq" => Profile {
            max_positional: Some(1),
            value_flags: strings(&["--indent"]),
            pair_flags: strings(&["--arg", "--argjson"]),
            bool_flags: strings(&[
                "-n",
                "-r",
                "-j",
                "-a",
                "-s",
                "-c",
                "-e",
                "-S",
                "-C",
                "-M",
                "-R",
                "--null-input",
                "--raw-input",
                "--raw-output",
                "--join-output",
                "--ascii-output",
                "--slurp",
                "--compact-output",
                "--exit-status",
                "--sort-keys",
                "--color-output",
                "--monochrome-output",
                "--tab",
                "--seq",
                "--stream",
            ]),
            denied_flags: strings(&[
                "--argfile",
                "--rawfile",
                "--slurpfile",
                "--from-file",
                "--library-path",
                "-L",
                "-f",
                "--args",
                "--jsonargs",
            ]),
            ..Profile::default()
        },
        "grep" => Profile {
            max_positional: Some(0),
            value_flags: strings(&[
                "--regexp",
                "--max-count",
                "--after-context",
                "--before-context",
                "--context",
                "--binary-files",
                "--label",
                "-e",
                "-m",
                "-A",
                "-B",
                "-C",
            ]),
            bool_flags: strings(&[
                "-i",
                "-v",
                "-c",
                "-n",
                "-o",
                "-q",
                "-s",
                "-w",
                "-x",
                "-E",
                "-F",
                "-G",
                "-P",
                "-h",
                "-H",
                "-a",
                "-b",
                "-z",
                "-Z",
                "-y",
                "--ignore-case",
                "--no-ignore-case",
                "--invert-match",
                "--count",
                "--line-number",
                "--only-matching",
                "--quiet",
                "--silent",
                "--word-regexp",
                "--line-regexp",
                "--extended-regexp",
                "--fixed-strings",
                "--basic-regexp",
                "--perl-regexp",
                "--no-filename",
                "--with-filename",
                "--text",
                "--byte-offset",
                "--null-data",
                "--null",
                "--no-messages",
                "--line-buffered",
            ]),
            denied_flags: strings(&[
                "--file",
                "--exclude-from",
                "--exclude",
                "--include",
                "--exclude-dir",
                "--dereference-recursive",
                "--directories",
                "--devices",
                "--recursive",
                "--files-with-matches",
                "--files-without-match",
                "-f",
                "-d",
                "-D",
                "-r",
                "-R",
                "-l",
                "-L",
            ]),
            ..Profile::default()
        },
        "cut" => Profile {
            max_positional: Some(0),
            value_flags: strings(&[
                "--bytes",
                "--characters",
                "--fields",
                "--delimiter",
                "--output-delimiter",
                "-b",
                "-c",
                "-f",
                "-d",
            ]),
            bool_flags: strings(&[
                "-s",
                "-n",
                "-z",
                "--only-delimited",
                "--complement",
                "--zero-terminated",
            ]),
            ..Profile::default()
        },
        "sort" => Profile {
            max_positional: Some(0),
            value_flags: strings(&[
                "--key",
                "--field-separator",
                "--buffer-size",
                "--parallel",
                "--batch-size",
                "-k",
                "-t",
                "-S",
            ]),
            bool_flags: strings(&[
                "-b",
                "-d",
                "-f",
                "-g",
                "-h",
                "-i",
                "-M",
                "-n",
                "-R",
                "-r",
                "-V",
                "-c",
                "-C",
                "-s",
                "-u",
                "-z",
                "--ignore-leading-blanks",
                "--dictionary-order",
                "--ignore-case",
                "--general-numeric-sort",
                "--human-numeric-sort",
                "--ignore-nonprinting",
                "--month-sort",
                "--numeric-sort",
                "--random-sort",
                "--reverse",
                "--version-sort",
                "--stable",
                "--unique",
                "--zero-terminated",
            ]),
            denied_flags: strings(&[
                "--compress-program",
                "--files0-from",
                "--output",
                "--random-source",
                "--temporary-directory",
                "-T",
                "-o",
            ]),
            ..Profile::default()
        },
        "uniq" => Profile {
            max_positional: Some(0),
            value_flags: strings(&[
                "--skip-fields",
                "--skip-chars",
                "--check-chars",
                "-f",
                "-s",
                "-w",
            ]),
            bool_flags: strings(&[
                "-c",
                "-d",
                "-D",
                "-u",
                "-i",
                "-z",
                "--count",
                "--repeated",
                "--unique",
                "--ignore-case",
                "--zero-terminated",
            ]),
            ..Profile::default()
        },
        "head" => Profile {
            max_positional: Some(0),
            value_flags: strings(&["--lines", "--bytes", "-n", "-c"]),
            bool_flags: strings(HEAD_TAIL_FLAGS),
            numeric_shorthand: true,
            ..Profile::default()
        },
        "tail" => Profile {
            max_positional: Some(0),
            value_flags: strings(&["--lines", "--bytes", "-n", "-c"]),
            bool_flags: strings(HEAD_TAIL_FLAGS),
            denied_flags: strings(&["-f", "-F", "--follow", "--retry", "--pid"]),
            numeric_shorthand: true,
            ..Profile::default()
        },
        "tr" => Profile {
            min_positional: 1,
            max_positional: Some(2),
            bool_flags: strings(&[
                "-c",
                "-C",
                "-d",
                "-s",
                "-t",
                "--complement",
                "--delete",
                "--squeeze-repeats",
                "--truncate-set1",
            ]),
            ..Profile::default()
        },
        "wc" => Profile {
            max_positional: Some(0),
            bool_flags: strings(&[
                "-c",
                "-m",
                "-l",
                "-L",
                "-w",
                "--bytes",
                "--chars",
                "--lines",
                "--max-line-length",
                "--words",
            ]),
            denied_flags: strings(&["--files0-from"]),
            ..Profile::default()
        },
        _ => return None,
    };
    Some(profile)
}

/// Every long option of the real tool (GNU coreutils 9 and grep 3, plus BSD names), so that an
/// abbreviation is resolved the way the tool's getopt resolves it. Matching only the profile's
/// own options would expand `grep --binary` (a real flag, `-U`) to the profile's
/// `--binary-files`, taking the next word as its value when grep reads it as a file.
fn real_long_options(name: &str) -> Option<&'static [&'static str]> {
    let options: &[&str] = match name {
        "grep" => &[
            "--after-context",
            "--basic-regexp",
            "--before-context",
            "--binary",
            "--binary-files",
            "--byte-offset",
            "--bz2decompress",
            "--color",
            "--colour",
            "--context",
            "--count",
            "--decompress",
            "--dereference-recursive",
            "--devices",
            "--directories",
            "--exclude",
            "--exclude-dir",
            "--exclude-from",
            "--extended-regexp",
            "--file",
            "--files-with-matches",
            "--files-without-match",
            "--fixed-regexp",
            "--fixed-strings",
            "--group-separator",
            "--help",
            "--ignore-case",
            "--include",
            "--include-dir",
            "--initial-tab",
            "--invert-match",
            "--label",
            "--line-buffered",
            "--line-number",
            "--line-regexp",
            "--max-count",
            "--mmap",
            "--no-filename",
            "--no-group-separator",
            "--no-ignore-case",
            "--no-messages",
            "--null",
            "--null-data",
            "--only-matching",
            "--perl-regexp",
            "--quiet",
            "--recursive",
            "--regexp",
            "--silent",
            "--text",
            "--unix-byte-offsets",
            "--version",
            "--with-filename",
            "--word-regexp",
        ],
        "sort" => &[
            "--batch-size",
            "--buffer-size",
            "--check",
            "--compress-program",
            "--debug",
            "--dictionary-order",
            "--field-separator",
            "--files0-from",
            "--general-numeric-sort",
            "--heapsort",
            "--help",
            "--human-numeric-sort",
            "--ignore-case",
            "--ignore-leading-blanks",
            "--ignore-nonprinting",
            "--key",
            "--merge",
            "--mergesort",
            "--mmap",
            "--month-sort",
            "--numeric-sort",
            "--output",
            "--parallel",
            "--qsort",
            "--radixsort",
            "--random-sort",
            "--random-source",
            "--reverse",
            "--sort",
            "--stable",
            "--temporary-directory",
            "--unique",
            "--version",
            "--version-sort",
            "--zero-terminated",
        ],
        "head" => &[
            "--bytes",
            "--help",
            "--lines",
            "--quiet",
            "--silent",
            "--verbose",
            "--version",
            "--zero-terminated",
        ],
        "tail" => &[
            "--bytes",
            "--debug",
            "--follow",
            "--help",
            "--lines",
            "--max-unchanged-stats",
            "--pid",
            "--quiet",
            "--retry",
            "--silent",
            "--sleep-interval",
            "--verbose",
            "--version",
            "--zero-terminated",
        ],
        "cut" => &[
            "--bytes",
            "--characters",
            "--complement",
            "--delimiter",
            "--fields",
            "--help",
            "--only-delimited",
            "--output-delimiter",
            "--version",
            "--zero-terminated",
        ],
        "uniq" => &[
            "--all-repeated",
            "--check-chars",
            "--count",
            "--group",
            "--help",
            "--ignore-case",
            "--repeated",
            "--skip-chars",
            "--skip-fields",
            "--unique",
            "--version",
            "--zero-terminated",
        ],
        "tr" => &[
            "--complement",
            "--delete",
            "--help",
            "--squeeze-repeats",
            "--truncate-set1",
            "--version",
        ],
        "wc" => &[
            "--bytes",
            "--chars",
            "--debug",
            "--files0-from",
            "--help",
            "--lines",
            "--max-line-length",
            "--total",
            "--version",
            "--words",
        ],
        // jq matches long options exactly (no getopt), and a tool without a list here is not
        // known well enough to resolve an abbreviation at all.
        _ => return None,
    };
    Some(options)
}

/// A config profile replaces the built-in one for that name, keeping only what it states.
fn from_config(config: &SafeBinProfile) -> Profile<'_> {
    fn clean(flags: &[String]) -> Vec<&str> {
        flags
            .iter()
            .map(|flag| flag.trim())
            .filter(|flag| !flag.is_empty())
            .collect()
    }
    Profile {
        min_positional: config.min_positional.unwrap_or(0),
        max_positional: config.max_positional,
        value_flags: clean(&config.allowed_value_flags),
        denied_flags: clean(&config.denied_flags),
        ..Profile::default()
    }
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
            .map(|(_, profile)| from_config(profile));
        let Some(profile) = configured.or_else(|| builtin_profile(name)) else {
            return refuse(format!(
                "`{name}` has no safe-bin profile; add one to safeBinProfiles"
            ));
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
        let real_long = real_long_options(name);
        let positionals = validate_args(&profile, real_long, args)
            .map_err(|detail| Reason::new(Rule::SafeBinRefused, format!("`{name}`: {detail}")))?;
        if let (true, Some(filter)) = (name == "jq", positionals.first()) {
            check_jq_filter(filter)?;
        }
        Ok(())
    }
}

/// Walks the arguments against a profile and returns the positional operands.
fn validate_args<'a>(
    profile: &Profile,
    real_long: Option<&[&str]>,
    args: &'a [String],
) -> Result<Vec<&'a str>, String> {
    let mut positionals = Vec::new();
    // `-` is stdin only for a filter whose operands are all files; where operands are program
    // text or sets (jq's filter, tr's sets) it is one of them (jq 1.6 takes `jq - .env`'s `-`
    // as its filter). An empty word is always an operand: skipping it would turn the next
    // word, a file name, into jq's filter.
    let stdin_dash = profile.max_positional == Some(0);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let arg = arg.as_str();
        i += 1;
        if arg == "-" && stdin_dash {
            continue;
        }
        if arg == "--" {
            for rest in &args[i..] {
                if !(rest == "-" && stdin_dash) {
                    check_operand(rest)?;
                    positionals.push(rest.as_str());
                }
            }
            break;
        }
        if arg.is_empty() || arg == "-" {
            check_operand(arg)?;
            positionals.push(arg);
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let flag = canonical_long(profile, real_long, &format!("--{name}"))?;
            i = consume_value(profile, &flag, inline, args, i)?;
            continue;
        }
        if let Some(cluster) = arg.strip_prefix('-') {
            if profile.numeric_shorthand && cluster.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            i = consume_cluster(profile, cluster, args, i)?;
            continue;
        }
        check_operand(arg)?;
        positionals.push(arg);
    }
    if positionals.len() < profile.min_positional {
        return Err(format!(
            "needs at least {} operand(s)",
            profile.min_positional
        ));
    }
    if let Some(max) = profile
        .max_positional
        .filter(|max| positionals.len() > *max)
    {
        return Err(format!(
            "at most {max} operand(s) allowed (safe bins read stdin, not files)"
        ));
    }
    Ok(positionals)
}

/// Resolves a long option the way the tool's getopt does: an exact name, or an abbreviation
/// that is a prefix of exactly one of the tool's real options (`real_long`). Without the real
/// list (jq, custom safe bins) only exact names count. The option found must be in the profile;
/// unknown, ambiguous and denied options fail closed.
fn canonical_long(
    profile: &Profile,
    real_long: Option<&[&str]>,
    flag: &str,
) -> Result<String, String> {
    let in_profile = |candidate: &str| {
        profile
            .value_flags
            .iter()
            .chain(&profile.pair_flags)
            .chain(&profile.bool_flags)
            .chain(&profile.denied_flags)
            .any(|known| *known == candidate)
    };
    let resolved = if in_profile(flag) || real_long.is_some_and(|real| real.contains(&flag)) {
        flag
    } else {
        let Some(real) = real_long else {
            return Err(format!(
                "unknown option `{flag}` (abbreviations are refused for this tool)"
            ));
        };
        let mut matches = real.iter().filter(|candidate| candidate.starts_with(flag));
        match (matches.next(), matches.next()) {
            (Some(only), None) => only,
            (None, _) => return Err(format!("unknown option `{flag}`")),
            (Some(_), Some(_)) => return Err(format!("ambiguous option `{flag}`")),
        }
    };
    if profile.denied_flags.contains(&resolved) {
        return Err(format!("`{flag}` is refused"));
    }
    if !in_profile(resolved) {
        return Err(format!("`{resolved}` is not allowed for this safe bin"));
    }
    Ok(resolved.to_owned())
}

fn consume_value(
    profile: &Profile,
    flag: &str,
    inline: Option<&str>,
    args: &[String],
    next: usize,
) -> Result<usize, String> {
    if profile.pair_flags.contains(&flag) {
        if inline.is_some() {
            return Err(format!("`{flag}` takes two separate values"));
        }
        for offset in 0..2 {
            let value = args
                .get(next + offset)
                .ok_or(format!("`{flag}` needs two values"))?;
            check_value(value)?;
        }
        return Ok(next + 2);
    }
    if profile.value_flags.contains(&flag) {
        return match inline {
            Some(value) => check_value(value).map(|()| next),
            None => {
                let value = args.get(next).ok_or(format!("`{flag}` needs a value"))?;
                check_value(value).map(|()| next + 1)
            }
        };
    }
    match inline {
        Some(_) => Err(format!("`{flag}` does not take a value")),
        None => Ok(next),
    }
}

fn consume_cluster(
    profile: &Profile,
    cluster: &str,
    args: &[String],
    next: usize,
) -> Result<usize, String> {
    for (offset, c) in cluster.char_indices() {
        let flag = format!("-{c}");
        let flag = flag.as_str();
        if profile.denied_flags.contains(&flag) {
            return Err(format!("`{flag}` is refused"));
        }
        if profile.value_flags.contains(&flag) {
            let rest = &cluster[offset + c.len_utf8()..];
            if !rest.is_empty() {
                check_value(rest)?;
                return Ok(next);
            }
            let value = args.get(next).ok_or(format!("`{flag}` needs a value"))?;
            check_value(value)?;
            return Ok(next + 1);
        }
        if !profile.bool_flags.contains(&flag) {
            return Err(format!("unknown option `{flag}`"));
        }
    }
    Ok(next)
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
    use super::*;

    fn ok(name: &str, args: &[&str]) -> bool {
        let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
        let names = vec![name.to_owned()];
        let profiles = BTreeMap::new();
        let bins = SafeBins::new(&names, &profiles, &[]);
        bins.check(name, Path::new("/usr/bin/x"), &args, false, None)
            .is_ok()
    }

    #[test]
    fn allows_calls_within_profiles() {
        assert!(ok("head", &["-n", "5"]));
        assert!(ok("head", &["-5"]));
        assert!(ok("head", &["-qn5"]));
        assert!(ok("sort", &["--ke=1,1", "-rn"]));
        assert!(ok("grep", &["-i", "-e", "needle"]));
        assert!(ok("jq", &["-r", ".items[0].name"]));
        assert!(ok("jq", &["--arg", "k", "v", ".name"]));
        assert!(ok("tr", &["a-z", "A-Z"]));
        assert!(ok("cut", &["-d", ",", "-f", "1"]));
        assert!(ok("wc", &["-l", "-"]));
        // Single-quoted `$` reaches the program as text.
        assert!(ok("jq", &["--arg", "k", "v", "-n", "$k"]));
        assert!(ok("cut", &["-d", "$", "-f", "2"]));
    }

    #[test]
    fn denies_calls_outside_profiles() {
        assert!(!ok("head", &["/etc/passwd"]));
        assert!(!ok("grep", &["needle"]));
        assert!(!ok("sort", &["--f=1"]));
        assert!(!ok("sort", &["--compress-pr=sh"]));
        assert!(!ok("tail", &["-fn", "1"]));
        assert!(!ok("jq", &["env"]));
        assert!(!ok("jq", &["$ENV.HOME"]));
        assert!(!ok("jq", &["$__loc__"]));
        assert!(!ok("jq", &["input"]));
        assert!(!ok("tr", &["-S", "a", "b"]));
        assert!(!ok("cut", &["-f1", "--", "../x"]));
        assert!(!ok("awk", &["{print}"]));
        assert!(
            !ok("grep", &["-e", "x", "--binary", "secret"]),
            "--binary is -U"
        );
        assert!(
            !ok("grep", &["-e", "x", "--bin", "text"]),
            "ambiguous in real grep"
        );
        assert!(!ok("tail", &["--fo"]));
        assert!(!ok("jq", &["--raw", "."]), "jq has no abbreviations");
    }

    #[test]
    fn knows_every_profile_option_of_the_real_tools() {
        for name in ["grep", "sort", "head", "tail", "cut", "uniq", "tr", "wc"] {
            let (Some(profile), Some(real)) = (builtin_profile(name), real_long_options(name))
            else {
                panic!("{name} has a profile and a real option list");
            };
            for flag in profile
                .value_flags
                .iter()
                .chain(&profile.bool_flags)
                .chain(&profile.denied_flags)
                .filter(|flag| flag.starts_with("--"))
            {
                assert!(real.contains(flag), "{name} {flag}");
            }
        }
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
