//! Finding the PostgreSQL server programs: Debian's packaged ones first, because that is what
//! CI installs and where Debian puts them (`/usr/lib/postgresql/<major>/bin`, off `PATH`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::error::ClusterError;

/// Environment variable naming the directory of `initdb` and `postgres`, for installations
/// in neither Debian's place nor on `PATH` (or to pick one of several versions).
pub(crate) const OVERRIDE_VAR: &str = "GATEHOUSE_PG_BIN";

/// Where Debian installs one directory per major version.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

/// The programs a cluster runs; all must come from one installation.
const PROGRAMS: [&str; 6] = [
    "initdb",
    "postgres",
    "createdb",
    "dropdb",
    "pg_dump",
    "pg_restore",
];

/// The oldest major version the cluster supports (`dropdb --force` and `initdb
/// --no-instructions` arrived in 13).
const OLDEST_MAJOR: u32 = 13;

/// One installation's server programs and its version.
#[derive(Debug, Clone)]
pub(crate) struct Binaries {
    dir: PathBuf,
    version: String,
}

impl Binaries {
    /// Finds the programs: the directory in [`OVERRIDE_VAR`] if set, else the highest
    /// version under `/usr/lib/postgresql`, else the directory `initdb` on `PATH` really
    /// lives in (links such as `/usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb`
    /// are followed, so its siblings are found).
    pub(crate) fn find() -> Result<Self, ClusterError> {
        let (dir, searched) = match std::env::var_os(OVERRIDE_VAR) {
            Some(dir) => {
                let dir = PathBuf::from(dir);
                let searched = format!("{OVERRIDE_VAR}={}", dir.display());
                (complete(&dir).then_some(dir), searched)
            }
            None => (
                highest_debian().or_else(on_path),
                format!("{DEBIAN_ROOT}/<version>/bin and PATH"),
            ),
        };
        let dir = dir.ok_or(ClusterError::NoBinaries { searched })?;
        let version = server_version(&dir)?;
        match major(&version) {
            Some(found) if found >= OLDEST_MAJOR => Ok(Self { dir, version }),
            _ => Err(ClusterError::TooOld {
                dir,
                found: version,
                needed: OLDEST_MAJOR,
            }),
        }
    }

    /// A command for one of the programs, with an empty environment so no `PG*` variable or
    /// locale of the test run changes what it does.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.dir.join(program));
        command.env_clear().stdin(Stdio::null());
        command
    }

    /// The version `postgres --version` reported, such as `15.18`.
    pub(crate) fn version(&self) -> &str {
        &self.version
    }
}

/// Whether a directory holds every program a cluster runs.
fn complete(dir: &Path) -> bool {
    PROGRAMS.iter().all(|program| dir.join(program).is_file())
}

/// The complete `/usr/lib/postgresql/<version>/bin` with the highest version.
fn highest_debian() -> Option<PathBuf> {
    let entries = std::fs::read_dir(DEBIAN_ROOT).ok()?;
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = version_key(entry.file_name().to_str()?)?;
            let bin = entry.path().join("bin");
            complete(&bin).then_some((version, bin))
        })
        .max()
        .map(|(_, bin)| bin)
}

/// `15` → `[15]`, `9.6` → `[9, 6]`: numeric, so 15 sorts above 9.6.
fn version_key(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

/// The real directory of the first `initdb` on `PATH`, if its siblings are there too.
fn on_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("initdb"))
        .find(|initdb| initdb.is_file())
        .and_then(|initdb| std::fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        .filter(|dir| complete(dir))
}

/// `postgres --version`, such as `postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)`,
/// reduced to the version (`15.18`).
fn server_version(dir: &Path) -> Result<String, ClusterError> {
    let program = dir.join("postgres");
    let output = Command::new(&program)
        .arg("--version")
        .env_clear()
        .output()
        .map_err(ClusterError::io(format!(
            "running {} --version",
            program.display()
        )))?;
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .split_whitespace()
        .nth(2)
        .unwrap_or(text.trim())
        .to_owned())
}

/// The major version of `15.18` (15), `9.6.24` (9) or `17beta1` (17).
fn major(version: &str) -> Option<u32> {
    let digits = version
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(version.len());
    version[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::{major, version_key};

    #[test]
    fn versions_sort_numerically() {
        assert!(version_key("15") > version_key("9.6"));
        assert!(version_key("17") > version_key("15"));
        assert_eq!(version_key("main"), None);
        assert_eq!(major("15.18"), Some(15));
        assert_eq!(major("9.6.24"), Some(9));
        assert_eq!(major("17beta1"), Some(17));
        assert_eq!(major("devel"), None);
    }
}
