//! What each isolation mode shows and keeps, seen from inside a real sandbox.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gatehouse_sandbox::Isolation;
use pretty_assertions::assert_eq;

use crate::support::{Fixture, output};

/// Reports, for each path given, whether it exists and whether a file can be created in it.
const VIEW: &str = r#"for p in "$@"; do
  if [ -e "$p" ]; then state=present; else state=absent; fi
  if [ -d "$p" ] && ( : > "$p/.gatehouse-probe" ) 2>/dev/null; then
    rm -f "$p/.gatehouse-probe"; state="$state writable"
  fi
  echo "$p|$state"
done"#;

/// How the sandbox sees each of `paths`.
fn view(fixture: &Fixture, isolation: Isolation, paths: &[PathBuf]) -> BTreeMap<PathBuf, String> {
    let settings = fixture.settings(isolation);
    let mut argv = vec!["sh", "-c", VIEW, "sh"];
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    argv.extend(shown.iter().map(String::as_str));
    let planned = fixture.plan(&settings, &argv, &BTreeMap::new()).unwrap();
    let output = output(&planned);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let (path, state) = line.split_once('|').unwrap();
            (PathBuf::from(path), state.to_owned())
        })
        .collect()
}

/// The paths every test looks at, and what every mode shows of them.
fn common(fixture: &Fixture) -> Vec<(PathBuf, &'static str)> {
    let home = &fixture.home;
    vec![
        (fixture.workspace.clone(), "present writable"),
        (PathBuf::from("/"), "present"),
        (PathBuf::from("/usr"), "present"),
        (PathBuf::from("/usr/bin"), "present"),
        (PathBuf::from("/etc"), "present"),
        (PathBuf::from("/tmp"), "present writable"),
        (PathBuf::from("/run"), "absent"),
        (PathBuf::from("/etc/shadow"), "absent"),
        (PathBuf::from("/etc/ssl/private"), "absent"),
        (PathBuf::from("/sys/kernel"), "absent"),
        (PathBuf::from("/var/run/docker.sock"), "absent"),
        (fixture.outside.clone(), "absent"),
        (fixture.data.clone(), "absent"),
        (home.clone(), "present writable"),
        (home.join(".ssh"), "absent"),
        (home.join(".secret-dir"), "absent"),
        (home.join(".profile"), "absent"),
        (home.join("LinkToOutside"), "absent"),
    ]
}

fn check(isolation: Isolation, specific: &[(&str, &'static str)]) {
    let fixture = Fixture::new();
    let mut expected: BTreeMap<PathBuf, String> = common(&fixture)
        .into_iter()
        .map(|(path, state)| (path, state.to_owned()))
        .collect();
    for (below_home, state) in specific {
        expected.insert(fixture.home.join(below_home), (*state).to_owned());
    }
    let paths: Vec<PathBuf> = expected.keys().cloned().collect();
    assert_eq!(view(&fixture, isolation, &paths), expected, "{isolation}");
    // Nothing the probe wrote stayed outside the sandbox's own directories.
    assert_eq!(entries(&fixture.outside), ["file"]);
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn home_shows_only_the_agents_own_home() {
    check(
        Isolation::Home,
        &[
            ("Documents", "absent"),
            ("Projects", "absent"),
            (".cache", "absent"),
        ],
    );
}

#[test]
fn autodocs_read_shows_the_visible_home_directories_read_only() {
    check(
        Isolation::AutodocsRead,
        &[
            ("Documents", "present"),
            ("Documents/readme.txt", "present"),
            ("Projects", "present"),
            (".cache", "absent"),
        ],
    );
}

#[test]
fn autodocs_write_shows_the_visible_home_directories_read_write() {
    check(
        Isolation::AutodocsWrite,
        &[
            ("Documents", "present writable"),
            ("Projects", "present writable"),
            (".cache", "absent"),
        ],
    );
}

#[test]
fn volumes_shows_only_the_volumes_over_a_throwaway_home() {
    check(
        Isolation::Volumes,
        &[("Documents", "absent"), (".cache", "present writable")],
    );
}

#[test]
fn ephemeral_shows_a_throwaway_home() {
    check(
        Isolation::Ephemeral,
        &[("Documents", "absent"), (".cache", "absent")],
    );
}

/// Writes a note in the home, in `/tmp` and in `~/.cache`, in one run.
const WRITE_NOTES: &str =
    "echo 1 > ~/note && echo 1 > /tmp/note && mkdir -p ~/.cache && echo 1 > ~/.cache/note";

/// Which of those notes a second run finds.
const READ_NOTES: &str =
    "for f in ~/note /tmp/note ~/.cache/note; do if [ -e $f ]; then echo \"$f kept\"; fi; done";

fn notes_kept(fixture: &Fixture, isolation: Isolation) -> String {
    let settings = fixture.settings(isolation);
    fixture.sh_ok(&settings, WRITE_NOTES);
    fixture
        .sh_ok(&settings, READ_NOTES)
        .replace(&fixture.home.display().to_string(), "~")
}

#[test]
fn ephemeral_keeps_nothing_between_runs() {
    let fixture = Fixture::new();
    assert_eq!(notes_kept(&fixture, Isolation::Ephemeral), "");
    assert!(!fixture.home.join("note").exists());
    assert!(
        !fixture.data.join("sandbox").exists(),
        "no state for ephemeral"
    );
}

#[test]
fn home_keeps_the_whole_home_under_the_data_directory() {
    let fixture = Fixture::new();
    assert_eq!(
        notes_kept(&fixture, Isolation::Home),
        "~/note kept\n~/.cache/note kept\n"
    );
    let backing = fixture.data.join("sandbox/main/home");
    assert_eq!(
        std::fs::read_to_string(backing.join("note")).unwrap(),
        "1\n"
    );
    assert!(
        !fixture.home.join("note").exists(),
        "the real home is untouched"
    );
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(&backing).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
}

#[test]
fn volumes_keep_only_the_configured_paths() {
    let fixture = Fixture::new();
    assert_eq!(
        notes_kept(&fixture, Isolation::Volumes),
        "~/.cache/note kept\n"
    );
    let backing = fixture.data.join("sandbox/main/volumes/.cache/note");
    assert_eq!(std::fs::read_to_string(backing).unwrap(), "1\n");
}

#[test]
fn autodocs_write_writes_through_to_the_real_directory_and_read_does_not() {
    let fixture = Fixture::new();
    let write = "echo new > ~/Documents/new.txt";
    let read_only = fixture.sh(&fixture.settings(Isolation::AutodocsRead), write);
    assert!(!read_only.status.success());
    assert!(
        String::from_utf8_lossy(&read_only.stderr).contains("Read-only file system"),
        "{}",
        String::from_utf8_lossy(&read_only.stderr)
    );
    assert!(!fixture.home.join("Documents/new.txt").exists());
    fixture.sh_ok(&fixture.settings(Isolation::AutodocsWrite), write);
    assert_eq!(
        std::fs::read_to_string(fixture.home.join("Documents/new.txt")).unwrap(),
        "new\n"
    );
}

/// Every mode: the write lands in the workspace on the host; writes anywhere else fail, and
/// the root itself is read-only.
#[test]
fn writes_outside_the_workspace_fail_in_every_mode() {
    for isolation in Isolation::ALL {
        let fixture = Fixture::new();
        let settings = fixture.settings(isolation);
        let script = format!(
            "echo ok > out.txt; for p in /usr/x /etc/x /x {}/x {}/x; do \
             if (echo x > $p) 2>/dev/null; then echo \"wrote $p\"; fi; done",
            fixture.outside.display(),
            fixture.data.display(),
        );
        assert_eq!(fixture.sh_ok(&settings, &script), "", "{isolation}");
        assert_eq!(
            std::fs::read_to_string(fixture.workspace.join("out.txt")).unwrap(),
            "ok\n"
        );
        assert_eq!(entries(&fixture.outside), ["file"]);
    }
}
