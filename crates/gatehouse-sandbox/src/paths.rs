//! Configured paths made plain: `~` expanded, absolute, no `.` or `..`, and walked component by
//! component without following links, so that the path checked is the path mounted.

use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};

use crate::validate::MountRefusal;

/// `raw` with a leading `~` or `~/` read as `home`, then [`plain`].
pub(crate) fn expand(raw: &str, home: &Path) -> Result<PathBuf, MountRefusal> {
    let expanded = match raw.strip_prefix('~') {
        Some("") => home.to_path_buf(),
        Some(rest) => match rest.strip_prefix('/') {
            Some(below) => home.join(below),
            // `~user` would be another user's home, looked up in the password database.
            None => {
                return Err(MountRefusal::NotAbsolute {
                    path: raw.to_owned(),
                });
            }
        },
        None => PathBuf::from(raw),
    };
    plain(&expanded).map_err(|refusal| match refusal {
        MountRefusal::NotAbsolute { .. } => MountRefusal::NotAbsolute {
            path: raw.to_owned(),
        },
        other => other,
    })
}

/// Whether `raw` is a path the sandbox settings accept, by its spelling alone (absolute or
/// `~/…`, no `..`, no `~user`), without looking at the file system: the config crate refuses
/// others when it loads the file, with their line and column.
pub fn check_written_path(raw: &str) -> Result<(), MountRefusal> {
    expand(raw, Path::new("/home")).map(drop)
}

/// `path` without `.` components or a trailing `/`; a relative path or one with `..` is
/// refused, since what `..` names depends on links a lexical rewrite cannot see.
pub(crate) fn plain(path: &Path) -> Result<PathBuf, MountRefusal> {
    if !path.is_absolute() {
        return Err(MountRefusal::NotAbsolute {
            path: path.display().to_string(),
        });
    }
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                return Err(MountRefusal::DotDot {
                    path: path.to_path_buf(),
                });
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Ok(out)
}

/// What walking a plain absolute path component by component found.
#[derive(Debug)]
pub(crate) enum Walk {
    /// Every component exists and none is a link: the last one's metadata.
    Plain(Metadata),
    /// This component (a prefix of the path, or the path itself) is a symbolic link.
    Link(PathBuf),
    /// This component does not exist.
    Missing(PathBuf),
    /// This component could not be examined.
    Unreadable(PathBuf, std::io::Error),
}

/// Walks `path` (plain and absolute) from the root with `lstat`, stopping at the first link,
/// missing or unreadable component.
pub(crate) fn walk(path: &Path) -> Walk {
    let mut prefix = PathBuf::from("/");
    let mut last = None;
    for component in path.components() {
        let Component::Normal(name) = component else {
            continue;
        };
        prefix.push(name);
        match std::fs::symlink_metadata(&prefix) {
            Ok(meta) if meta.file_type().is_symlink() => return Walk::Link(prefix),
            Ok(meta) => last = Some(meta),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Walk::Missing(prefix);
            }
            Err(error) => return Walk::Unreadable(prefix, error),
        }
    }
    match last {
        Some(meta) => Walk::Plain(meta),
        // The root itself.
        None => match std::fs::symlink_metadata("/") {
            Ok(meta) => Walk::Plain(meta),
            Err(error) => Walk::Unreadable(prefix, error),
        },
    }
}

/// How many normal components `path` has: mounts are applied shallowest first.
pub(crate) fn depth(path: &Path) -> usize {
    path.components()
        .filter(|component| matches!(component, Component::Normal(_)))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_the_home_and_makes_paths_plain() {
        let home = Path::new("/home/ann");
        let ok = |raw: &str| expand(raw, home).unwrap();
        assert_eq!(ok("~"), PathBuf::from("/home/ann"));
        assert_eq!(ok("~/"), PathBuf::from("/home/ann"));
        assert_eq!(ok("~/a/./b/"), PathBuf::from("/home/ann/a/b"));
        assert_eq!(ok("/srv//x/."), PathBuf::from("/srv/x"));
        assert_eq!(ok("/"), PathBuf::from("/"));
    }

    #[test]
    fn refuses_relative_paths_another_users_home_and_dot_dot() {
        let home = Path::new("/home/ann");
        for raw in ["relative/x", "~bob/x", "~bob", "", "./x"] {
            assert!(
                matches!(
                    expand(raw, home),
                    Err(MountRefusal::NotAbsolute { ref path }) if path == raw
                ),
                "{raw}"
            );
        }
        assert!(matches!(
            expand("/srv/x/../../etc", home),
            Err(MountRefusal::DotDot { .. })
        ));
        assert!(matches!(
            expand("~/../bob", home),
            Err(MountRefusal::DotDot { .. })
        ));
    }

    #[test]
    fn walking_stops_at_the_first_link_or_missing_component() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("real/inner")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("link")).unwrap();
        assert!(matches!(walk(&root.join("real/inner")), Walk::Plain(meta) if meta.is_dir()));
        assert!(
            matches!(walk(&root.join("link/inner")), Walk::Link(at) if at == root.join("link"))
        );
        assert!(
            matches!(walk(&root.join("real/none/x")), Walk::Missing(at) if at == root.join("real/none"))
        );
        assert!(matches!(walk(Path::new("/")), Walk::Plain(meta) if meta.is_dir()));
        assert_eq!(depth(Path::new("/")), 0);
        assert_eq!(depth(Path::new("/a/b")), 2);
    }
}
