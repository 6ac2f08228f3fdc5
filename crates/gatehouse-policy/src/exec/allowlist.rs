//! Allowlist entries compiled into one glob set over resolved executable paths.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use regex::Regex;

use super::policy::AllowlistEntry;

/// Matching follows the filesystem: on Linux `/OPT/rg` and `/opt/rg` are different files, so an
/// entry for one must not admit the other; on macOS and Windows the filesystem folds case.
const CASE_INSENSITIVE: bool = cfg!(any(target_os = "macos", target_os = "windows"));

/// The last allowlist compiled on this thread, with the inputs it was compiled from.
type Memo = (Vec<AllowlistEntry>, Option<PathBuf>, Rc<CompiledAllowlist>);

thread_local! {
    /// Compiling globs costs far more than evaluating a command, and a host evaluates many
    /// commands against the same allowlist, so the last compilation is reused while its inputs
    /// are equal. The result depends only on those inputs, so reuse cannot change a verdict.
    static LAST: RefCell<Option<Memo>> = const { RefCell::new(None) };
}

/// The compiled form of `entries`, reused from the previous call when nothing changed.
pub(crate) fn compile(entries: &[AllowlistEntry], home: Option<&Path>) -> Rc<CompiledAllowlist> {
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((cached_entries, cached_home, compiled)) = last.as_ref()
            && cached_entries.as_slice() == entries
            && cached_home.as_deref() == home
        {
            return Rc::clone(compiled);
        }
        let compiled = Rc::new(CompiledAllowlist::new(entries, home));
        *last = Some((
            entries.to_vec(),
            home.map(Path::to_path_buf),
            Rc::clone(&compiled),
        ));
        compiled
    })
}

/// Why each entry of `entries` the policy cannot use is skipped, in the words `gatehouse check`
/// prints, so a tool reviewing a configuration (`gatehouse doctor`) reports exactly what the
/// policy ignores instead of restating its rules. `home` expands a leading `~`, as in
/// evaluation. Empty when every entry is used.
pub fn ignored_entries(entries: &[AllowlistEntry], home: Option<&Path>) -> Vec<String> {
    CompiledAllowlist::new(entries, home).warnings
}

/// The usable entries of an allowlist, ready to match.
#[derive(Debug)]
pub(crate) struct CompiledAllowlist {
    set: GlobSet,
    /// Per glob in `set`, the index of its entry in the policy's allowlist and the entry's
    /// optional argument pattern.
    globs: Vec<(usize, Option<Regex>)>,
    /// Entries that were skipped, with why, for operators.
    pub(crate) warnings: Vec<String>,
}

impl CompiledAllowlist {
    /// Compiles the entries, expanding a leading `~` against `home`. Entries that cannot be
    /// used are skipped with a warning, never widened.
    pub(crate) fn new(entries: &[AllowlistEntry], home: Option<&Path>) -> Self {
        let mut builder = GlobSetBuilder::new();
        let mut globs = Vec::new();
        let mut warnings = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            let pattern = entry.pattern.trim();
            if pattern.is_empty() || pattern.starts_with("=command:") {
                continue;
            }
            let Some(expanded) = expand_home(pattern, home) else {
                warnings.push(format!(
                    "allowlist entry `{pattern}` ignored: `~` needs HOME, which is not set"
                ));
                continue;
            };
            if !expanded.contains('/') {
                warnings.push(format!(
                    "allowlist entry `{pattern}` ignored: a bare name would match any program \
                     of that name; use its absolute path"
                ));
                continue;
            }
            let glob = match compile_glob(&expanded) {
                Ok(glob) => glob,
                Err(error) => {
                    warnings.push(format!("allowlist entry `{pattern}` ignored: {error}"));
                    continue;
                }
            };
            let arg_pattern = match entry.arg_pattern.as_deref().map(str::trim) {
                None | Some("") => None,
                Some(raw) => match Regex::new(&format!("^(?:{raw})$")) {
                    Ok(regex) => Some(regex),
                    Err(error) => {
                        warnings.push(format!(
                            "allowlist entry `{pattern}` ignored: bad argPattern: {error}"
                        ));
                        continue;
                    }
                },
            };
            builder.add(glob);
            globs.push((index, arg_pattern));
        }
        let set = builder.build().unwrap_or_else(|error| {
            warnings.push(format!("allowlist ignored: {error}"));
            GlobSet::empty()
        });
        CompiledAllowlist {
            set,
            globs,
            warnings,
        }
    }

    /// The index, in the policy's allowlist, of the first entry that matches the resolved path
    /// and, if it has one, its argument pattern: the entry whose use the gateway records.
    pub(crate) fn matching_entry(&self, path: &Path, args: &[String]) -> Option<usize> {
        // Joined only for an entry with an argument pattern, once.
        let mut joined: Option<String> = None;
        self.set
            .matches(path)
            .into_iter()
            .find_map(|glob| match self.globs.get(glob) {
                Some((entry, Some(regex))) => {
                    let joined = joined.get_or_insert_with(|| args.join(" "));
                    regex.is_match(joined).then_some(*entry)
                }
                Some((entry, None)) => Some(*entry),
                None => None,
            })
    }
}

/// The allowlist pattern that matches exactly this resolved path, for allow-always. Glob
/// metacharacters in the path (`./x*` resolving to `/w/x*`) are escaped, since the pattern is
/// later read as a glob and `/w/x*` would also admit `/w/xevil`. A path the stored pattern
/// cannot say exactly yields nothing, so allow-always stores nothing for it: one that is not
/// UTF-8, that starts or ends with whitespace (entries are trimmed when compiled), that starts
/// with `~` or `=` (read as HOME or an exact-command entry) or has no `/`.
///
/// Every glob metacharacter globset knows is escaped, so the pattern compiles and matches the
/// path alone; the tests check that against globset for generated paths
/// (`tests::escaped_patterns_match_exactly_their_path`) rather than compiling a glob on every
/// evaluation, which cost three quarters of evaluating `ls`.
pub(crate) fn literal_pattern(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    if text.trim() != text || text.starts_with(['~', '=']) || !text.contains('/') {
        return None;
    }
    let mut pattern = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '{' | '}' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    Some(pattern)
}

fn expand_home(pattern: &str, home: Option<&Path>) -> Option<String> {
    match pattern.strip_prefix('~') {
        None => Some(pattern.to_owned()),
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            let home = home?.to_str()?.trim_end_matches('/');
            Some(format!("{home}{rest}"))
        }
        Some(_) => Some(pattern.to_owned()),
    }
}

fn compile_glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .case_insensitive(CASE_INSENSITIVE)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(patterns: &[&str], path: &str) -> bool {
        let entries: Vec<AllowlistEntry> =
            patterns.iter().map(|p| AllowlistEntry::new(*p)).collect();
        CompiledAllowlist::new(&entries, Some(Path::new("/home/u")))
            .matching_entry(Path::new(path), &[])
            .is_some()
    }

    #[test]
    fn single_star_stays_in_one_component() {
        assert!(allows(&["/usr/bin/*"], "/usr/bin/rg"));
        assert!(!allows(&["/usr/*"], "/usr/bin/rg"));
        assert!(allows(&["/usr/**"], "/usr/bin/rg"));
    }

    #[test]
    fn expands_home_and_ignores_bare_names() {
        assert!(allows(&["~/bin/rg"], "/home/u/bin/rg"));
        assert!(!allows(&["rg"], "/usr/bin/rg"));
        let compiled = CompiledAllowlist::new(&[AllowlistEntry::new("rg")], None);
        assert_eq!(compiled.warnings.len(), 1);
    }

    #[test]
    fn derives_literal_patterns_from_paths() {
        for path in [
            "/w/x*",
            "/w/x?",
            "/w/[ab]",
            "/w/{a,b}",
            "/w/a\\*",
            "/usr/bin/rg",
        ] {
            let Some(pattern) = literal_pattern(Path::new(path)) else {
                panic!("{path}: no pattern");
            };
            assert!(allows(&[&pattern], path), "{path} via {pattern}");
        }
        assert_eq!(
            literal_pattern(Path::new("/w/x*")).as_deref(),
            Some("/w/x\\*")
        );
        let pattern = literal_pattern(Path::new("/w/x*")).unwrap_or_default();
        assert!(!allows(&[&pattern], "/w/xevil"));
        let pattern = literal_pattern(Path::new("/w/[ab]")).unwrap_or_default();
        assert!(!allows(&[&pattern], "/w/a"));
        for path in ["/w/x ", " /w/x", "~/x", "x"] {
            assert_eq!(literal_pattern(Path::new(path)), None, "{path:?}");
        }
    }

    proptest::proptest! {
        /// The escaped pattern of any path `literal_pattern` accepts compiles and matches that
        /// path and no path that differs from it by one character.
        #[test]
        fn escaped_patterns_match_exactly_their_path(
            parts in proptest::collection::vec("[a-zA-Z0-9 ._*?\\[\\]{}\\\\,!é-]{1,8}", 1..4),
            other in "[a-z*?\\[\\]{}\\\\]",
            at in 0usize..64,
        ) {
            let text = format!("/{}", parts.join("/"));
            let Some(pattern) = literal_pattern(Path::new(&text)) else {
                proptest::prop_assume!(false);
                return Ok(());
            };
            let matcher = compile_glob(&pattern).map(|glob| glob.compile_matcher());
            proptest::prop_assert!(matcher.is_ok(), "{} does not compile", pattern);
            let matcher = matcher.unwrap_or_else(|_| unreachable!());
            proptest::prop_assert!(matcher.is_match(&text), "{} misses {}", pattern, text);
            let mut chars: Vec<char> = text.chars().collect();
            let at = 1 + at % (chars.len() - 1).max(1);
            if at < chars.len() && chars[at] != '/' && other != chars[at].to_string() {
                chars[at] = other.chars().next().unwrap_or('x');
                let changed: String = chars.into_iter().collect();
                if !CASE_INSENSITIVE || changed.to_lowercase() != text.to_lowercase() {
                    proptest::prop_assert!(!matcher.is_match(&changed), "{} also matches {}", pattern, changed);
                }
            }
        }
    }

    #[test]
    fn names_the_first_matching_entry_by_its_place_in_the_policy() {
        let entries = [
            AllowlistEntry::new("git"),
            AllowlistEntry {
                pattern: "/usr/bin/git".into(),
                arg_pattern: Some("push".into()),
            },
            AllowlistEntry::new("/usr/bin/*"),
        ];
        let compiled = CompiledAllowlist::new(&entries, None);
        let git = |arg: &str| compiled.matching_entry(Path::new("/usr/bin/git"), &[arg.into()]);
        assert_eq!(git("push"), Some(1));
        assert_eq!(git("status"), Some(2));
    }

    #[test]
    fn checks_argument_patterns() {
        let entry = AllowlistEntry {
            pattern: "/usr/bin/git".into(),
            arg_pattern: Some("status( .*)?".into()),
        };
        let compiled = CompiledAllowlist::new(&[entry], None);
        let git = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
            compiled.matching_entry(Path::new("/usr/bin/git"), &args)
        };
        assert_eq!(git(&["status"]), Some(0));
        assert_eq!(git(&["push"]), None);
    }
}
