//! Path globs as operators write them in `tools.read`, `tools.write` and `tools.fs.denyPaths`,
//! compiled once per config load.
//!
//! An entry is one of:
//! - a **name** (no `/`): matches any one component of the path, so `.env*` or `*.pem` catch
//!   the file anywhere and `secrets` every path through a directory of that name;
//! - **absolute** (`/srv/data/**`), **home-relative** (`~/notes/**`) or **anywhere**
//!   (`**/build/*.log`): matched against the whole canonical path;
//! - anything else is **workspace-relative** (`src/**` means `<workspace>/src/**`).
//!
//! `*` and `?` stay inside one component, `**` crosses them, `[ab]` and `{a,b}` work as in
//! globset. Deny lists are matched folded (see [`crate::text::fold`]) and a deny entry also
//! covers everything under a matching directory; allow lists are matched exactly, against the
//! file itself.

use std::path::Path;

use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};

use crate::text::fold;

use super::error::FileRulesError;

/// How a list is matched: deny lists fold and reach into directories, allow lists do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    /// Folded, and a match on any ancestor counts.
    Deny,
    /// Exact, and only the path itself counts.
    Allow,
}

/// A compiled list of path globs.
#[derive(Debug, Clone)]
pub(crate) struct PathGlobs {
    kind: ListKind,
    /// Entries with no `/`, matched against single components.
    names: GlobSet,
    /// The rest, made absolute, matched against whole paths.
    paths: GlobSet,
    /// The entries as written, indexed like the two sets' patterns (names first).
    written: Vec<String>,
    name_count: usize,
}

impl PathGlobs {
    /// Compiles `entries` (from the config key `key`) for a workspace and an optional home.
    pub(crate) fn new(
        entries: &[String],
        kind: ListKind,
        key: &str,
        workspace: &Path,
        home: Option<&Path>,
    ) -> Result<Self, FileRulesError> {
        let mut names = GlobSetBuilder::new();
        let mut paths = GlobSetBuilder::new();
        let (mut name_entries, mut path_entries) = (Vec::new(), Vec::new());
        for entry in entries {
            let trimmed = entry.trim();
            let invalid = |why: String| FileRulesError::InvalidGlob {
                key: key.to_owned(),
                entry: entry.clone(),
                why,
            };
            if trimmed.is_empty() {
                return Err(invalid("the entry is blank".to_owned()));
            }
            let pattern = if trimmed.contains('/') {
                absolute_pattern(trimmed, workspace, home).map_err(&invalid)?
            } else {
                trimmed.to_owned()
            };
            let pattern = match kind {
                ListKind::Deny => fold(&pattern).into_owned(),
                ListKind::Allow => pattern,
            };
            let glob = compile(&pattern).map_err(|e| invalid(e.to_string()))?;
            if trimmed.contains('/') {
                paths.add(glob);
                path_entries.push(entry.clone());
            } else {
                names.add(glob);
                name_entries.push(entry.clone());
            }
        }
        let build = |set: GlobSetBuilder| {
            set.build().map_err(|e| FileRulesError::InvalidGlob {
                key: key.to_owned(),
                entry: String::new(),
                why: e.to_string(),
            })
        };
        let name_count = name_entries.len();
        name_entries.extend(path_entries);
        Ok(Self {
            kind,
            names: build(names)?,
            paths: build(paths)?,
            written: name_entries,
            name_count,
        })
    }

    /// The entry (as written) that matches `path`, an absolute path in UTF-8.
    pub(crate) fn matching(&self, path: &str) -> Option<&str> {
        let index = match self.kind {
            ListKind::Deny => self.deny_match(&fold(path)),
            ListKind::Allow => self.allow_match(path),
        };
        index.and_then(|i| self.written.get(i)).map(String::as_str)
    }

    /// The path entries against the whole path, then the name entries against the file's own
    /// name: a name in an allow list names the file, not a directory on its way.
    fn allow_match(&self, path: &str) -> Option<usize> {
        first_match(&self.paths, path)
            .map(|i| i + self.name_count)
            .or_else(|| first_match(&self.names, path.rsplit('/').next().unwrap_or_default()))
    }

    /// The name entries against every component, then the path entries against the path and
    /// each ancestor, longest first: a denied directory covers its contents.
    fn deny_match(&self, path: &str) -> Option<usize> {
        if !self.names.is_empty()
            && let Some(i) = path
                .split('/')
                .filter(|c| !c.is_empty())
                .find_map(|c| first_match(&self.names, c))
        {
            return Some(i);
        }
        if self.paths.is_empty() {
            return None;
        }
        let mut end = path.len();
        loop {
            let prefix = &path[..end];
            if let Some(i) = first_match(&self.paths, prefix) {
                return Some(i + self.name_count);
            }
            match prefix.rfind('/') {
                Some(0) | None => return None,
                Some(slash) => end = slash,
            }
        }
    }
}

/// The index of the first pattern of `set` matching `text`; the common miss costs no
/// allocation.
fn first_match(set: &GlobSet, text: &str) -> Option<usize> {
    if set.is_empty() {
        return None;
    }
    let candidate = Candidate::new(text);
    if !set.is_match_candidate(&candidate) {
        return None;
    }
    set.matches_candidate(&candidate).into_iter().min()
}

/// `/abs`, `~/home-relative`, `**/anywhere`, or workspace-relative, made absolute.
fn absolute_pattern(entry: &str, workspace: &Path, home: Option<&Path>) -> Result<String, String> {
    if entry.starts_with('/') || entry.starts_with("**/") {
        return Ok(entry.to_owned());
    }
    if let Some(rest) = entry.strip_prefix("~/") {
        let home =
            home.ok_or_else(|| "`~` needs the home directory, which is not known".to_owned())?;
        return Ok(format!("{}/{rest}", escaped(home)?));
    }
    if entry.starts_with('~') {
        return Err("only `~/` is expanded, not `~user`".to_owned());
    }
    Ok(format!(
        "{}/{}",
        escaped(workspace)?,
        entry.trim_start_matches("./")
    ))
}

/// A directory as a glob prefix, with glob characters escaped.
fn escaped(dir: &Path) -> Result<String, String> {
    let text = dir
        .to_str()
        .ok_or_else(|| format!("{} is not UTF-8", dir.display()))?;
    Ok(globset::escape(text.trim_end_matches('/')))
}

fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn globs(entries: &[&str], kind: ListKind) -> PathGlobs {
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        PathGlobs::new(
            &entries,
            kind,
            "tools.read.deny",
            Path::new("/ws"),
            Some(Path::new("/home/u")),
        )
        .unwrap()
    }

    #[test]
    fn name_entries_match_any_component_when_denying() {
        let deny = globs(&[".env*", "secrets"], ListKind::Deny);
        assert_eq!(deny.matching("/ws/.env"), Some(".env*"));
        assert_eq!(deny.matching("/ws/app/.ENV.local"), Some(".env*"));
        assert_eq!(deny.matching("/ws/secrets/a/b.txt"), Some("secrets"));
        assert_eq!(deny.matching("/ws/src/envelope.rs"), None);
    }

    #[test]
    fn path_entries_cover_everything_under_a_denied_directory() {
        let deny = globs(
            &["build", "target/*", "~/notes", "/srv/**/x"],
            ListKind::Deny,
        );
        assert_eq!(deny.matching("/ws/target/debug/app"), Some("target/*"));
        assert_eq!(deny.matching("/home/u/notes/a.md"), Some("~/notes"));
        assert_eq!(deny.matching("/srv/a/b/x/y"), Some("/srv/**/x"));
        assert_eq!(deny.matching("/ws/src/target"), None);
    }

    #[test]
    fn allow_entries_match_exactly_and_only_the_file() {
        let allow = globs(&["src/**", "*.md"], ListKind::Allow);
        assert_eq!(allow.matching("/ws/src/a/b.rs"), Some("src/**"));
        assert_eq!(allow.matching("/ws/README.md"), Some("*.md"));
        assert_eq!(allow.matching("/ws/SRC/a.rs"), None);
        assert_eq!(allow.matching("/ws/docs.md/x"), None);
    }

    #[test]
    fn denies_bad_entries_at_load_time() {
        let bad = |entry: &str, home: Option<&Path>| {
            PathGlobs::new(
                &[entry.to_owned()],
                ListKind::Deny,
                "k",
                Path::new("/ws"),
                home,
            )
            .is_err()
        };
        assert!(bad("  ", None));
        assert!(bad("~/x", None));
        assert!(bad("~bob/x", Some(Path::new("/home/u"))));
        assert!(bad("a[", None));
    }

    #[test]
    fn escapes_glob_characters_in_the_workspace() {
        let entries = vec!["src/*".to_owned()];
        let allow =
            PathGlobs::new(&entries, ListKind::Allow, "k", Path::new("/w[s]"), None).unwrap();
        assert_eq!(allow.matching("/w[s]/src/a"), Some("src/*"));
        assert_eq!(allow.matching("/ws/src/a"), None);
    }
}
