//! `gatehouse doctor`'s check that sandboxed runs can work here: bubblewrap is there, which
//! version it is, and it can really create the namespaces and mounts a run uses (it runs
//! `true` in a sandbox built like a run's), with an explanation a person can act on when the
//! host forbids user namespaces.

use std::ffi::OsStr;
use std::fmt;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::bwrap::{Bubblewrap, BwrapError, Invocation, arguments};
use crate::env::ChildEnv;
use crate::layout::Layout;
use crate::settings::BwrapBinary;
use crate::system::system_mounts;

/// How long the probe's sandbox may take to start and exit.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the probe found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeReport {
    /// The binary and its version, or why there is none.
    pub bubblewrap: Result<Bubblewrap, BwrapError>,
    /// Whether a sandbox could be created (`None` when there was no binary to try).
    pub namespaces: Option<Result<(), NamespaceFailure>>,
}

impl ProbeReport {
    /// Whether sandboxed runs can work on this host.
    pub fn is_ok(&self) -> bool {
        matches!(self.namespaces, Some(Ok(())))
    }
}

impl fmt::Display for ProbeReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.bubblewrap {
            Ok(bwrap) => {
                let yes_no = |on: bool| if on { "yes" } else { "no" };
                write!(
                    f,
                    "bubblewrap {} at {} (--disable-userns: {}, --argv0: {})",
                    bwrap.version,
                    bwrap.path.display(),
                    yes_no(bwrap.features.disable_userns),
                    yes_no(bwrap.features.argv0)
                )?;
            }
            Err(error) => write!(f, "bubblewrap: {error}")?,
        }
        match &self.namespaces {
            Some(Ok(())) => write!(f, "; a sandbox starts here"),
            Some(Err(failure)) => write!(f, "; {failure}"),
            None => Ok(()),
        }
    }
}

/// The probe's sandbox did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{explanation}")]
pub struct NamespaceFailure {
    /// What bubblewrap printed (or why it did not finish).
    pub detail: String,
    /// What to do about it.
    pub explanation: String,
}

/// Locates bubblewrap and tries it.
pub fn probe(binary: &BwrapBinary, search_path: Option<&OsStr>) -> ProbeReport {
    let bubblewrap = Bubblewrap::locate(binary, search_path);
    let namespaces = bubblewrap.as_ref().ok().map(|bwrap| {
        try_sandbox(bwrap).map_err(|detail| NamespaceFailure {
            explanation: explain(&detail, &HostFacts::gather()),
            detail,
        })
    });
    ProbeReport {
        bubblewrap,
        namespaces,
    }
}

/// Runs `true` in a sandbox with a run's namespaces and system mounts; the error is what
/// bubblewrap said.
fn try_sandbox(bwrap: &Bubblewrap) -> Result<(), String> {
    let program = ["/usr/bin/true", "/bin/true"]
        .into_iter()
        .map(Path::new)
        .find(|path| path.is_file())
        .ok_or_else(|| "neither /usr/bin/true nor /bin/true exists".to_owned())?;
    let layout = Layout::new(system_mounts());
    let args = arguments(&Invocation {
        layout: &layout,
        network: false,
        features: bwrap.features,
        cwd: Path::new("/"),
        program,
        argv: &["true".to_owned()],
        env: &ChildEnv::empty(),
    });
    let child = std::process::Command::new(&bwrap.path)
        .args(&args)
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start {}: {error}", bwrap.path.display()))?;
    wait_bounded(child)
}

fn wait_bounded(mut child: Child) -> Result<(), String> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < PROBE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "the sandbox did not finish within {} s",
                    PROBE_TIMEOUT.as_secs()
                ));
            }
            Err(error) => return Err(format!("cannot wait for bubblewrap: {error}")),
        }
    }
    let output = child
        .wait_with_output()
        .map_err(|error| format!("cannot read bubblewrap's output: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        Err(format!("bubblewrap failed ({}): {said}", output.status))
    }
}

/// What the host says about user namespaces, for [`explain`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFacts {
    /// The gateway runs as root.
    pub root: bool,
    /// `kernel.unprivileged_userns_clone` (Debian's and Ubuntu's older switch).
    pub unprivileged_userns_clone: Option<u64>,
    /// `user.max_user_namespaces`.
    pub max_user_namespaces: Option<u64>,
    /// `kernel.apparmor_restrict_unprivileged_userns` (Ubuntu 23.10 and later).
    pub apparmor_restricts_userns: Option<u64>,
    /// Started by systemd as a service (`INVOCATION_ID` is set).
    pub under_systemd: bool,
    /// Inside a container (`/.dockerenv` or `/run/.containerenv`).
    pub in_container: bool,
}

impl HostFacts {
    /// Reads the facts from `/proc` and the process environment.
    pub fn gather() -> Self {
        let number = |path: &str| {
            std::fs::read_to_string(path)
                .ok()
                .and_then(|text| text.trim().parse().ok())
        };
        let root = std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().next())
                == Some("0")
        });
        HostFacts {
            root,
            unprivileged_userns_clone: number("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: number("/proc/sys/user/max_user_namespaces"),
            apparmor_restricts_userns: number(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
            ),
            under_systemd: std::env::var_os("INVOCATION_ID").is_some(),
            in_container: Path::new("/.dockerenv").exists()
                || Path::new("/run/.containerenv").exists(),
        }
    }
}

/// A readable account of why bubblewrap failed here and what would fix it.
pub fn explain(detail: &str, facts: &HostFacts) -> String {
    let mut causes = Vec::new();
    if facts.max_user_namespaces == Some(0) {
        causes.push(
            "user namespaces are disabled (user.max_user_namespaces = 0): raise it, e.g. \
             `sysctl -w user.max_user_namespaces=15000`",
        );
    }
    if !facts.root && facts.unprivileged_userns_clone == Some(0) {
        causes.push(
            "this kernel forbids user namespaces to unprivileged users \
             (kernel.unprivileged_userns_clone = 0): `sysctl -w \
             kernel.unprivileged_userns_clone=1`",
        );
    }
    if !facts.root && facts.apparmor_restricts_userns == Some(1) {
        causes.push(
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns = 1): give bwrap an AppArmor profile \
             that allows them (Ubuntu ships `bwrap-userns-restrict`), or set the sysctl to 0",
        );
    }
    if facts.under_systemd {
        causes.push(
            "the gateway runs as a systemd service, whose unit may forbid namespaces: the \
             shipped unit's `RestrictNamespaces=true` and system call filter do; see \
             docs/sandbox.md for the drop-in sandboxed agents need",
        );
    }
    if facts.in_container {
        causes.push(
            "the gateway runs inside a container, whose runtime's default seccomp and AppArmor \
             profiles forbid creating namespaces: run the gateway on the host, or give its \
             container a profile that allows them",
        );
    }
    if causes.is_empty() {
        causes.push(
            "user namespaces are not available to the gateway's user here: check the kernel \
             settings (user.max_user_namespaces), AppArmor or SELinux policy and any seccomp \
             filter the gateway runs under",
        );
    }
    format!(
        "bubblewrap cannot create a sandbox on this host ({detail}). Likely cause: {}. Until \
         this is fixed, sandboxed sessions' commands cannot run.",
        causes.join("; or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN_REFUSAL: &str = "bubblewrap failed (exit status: 1): bwrap: No permissions to \
                                  creating new namespace, likely because the kernel does not \
                                  allow non-privileged user namespaces.";

    #[test]
    fn names_the_sysctl_that_disables_user_namespaces() {
        let facts = HostFacts {
            unprivileged_userns_clone: Some(0),
            max_user_namespaces: Some(15000),
            ..HostFacts::default()
        };
        let text = explain(DEBIAN_REFUSAL, &facts);
        assert!(
            text.starts_with("bubblewrap cannot create a sandbox on this host (bubblewrap failed")
        );
        assert!(
            text.contains("`sysctl -w kernel.unprivileged_userns_clone=1`"),
            "{text}"
        );
        assert!(
            text.ends_with("sandboxed sessions' commands cannot run."),
            "{text}"
        );
        let disabled = HostFacts {
            max_user_namespaces: Some(0),
            root: true,
            unprivileged_userns_clone: Some(0),
            ..HostFacts::default()
        };
        let text = explain(DEBIAN_REFUSAL, &disabled);
        assert!(text.contains("user.max_user_namespaces = 0"), "{text}");
        // Root is not subject to the unprivileged switch.
        assert!(!text.contains("unprivileged_userns_clone"), "{text}");
    }

    #[test]
    fn points_at_apparmor_systemd_and_containers() {
        let facts = HostFacts {
            apparmor_restricts_userns: Some(1),
            under_systemd: true,
            in_container: true,
            ..HostFacts::default()
        };
        let text = explain("setting up uid map: Permission denied", &facts);
        for expected in [
            "bwrap-userns-restrict",
            "RestrictNamespaces=true",
            "inside a container",
        ] {
            assert!(text.contains(expected), "{expected}: {text}");
        }
        let text = explain("x", &HostFacts::default());
        assert!(text.contains("user namespaces are not available"), "{text}");
    }

    #[test]
    fn a_missing_binary_is_reported_without_trying_a_sandbox() {
        let empty = tempfile::tempdir().unwrap();
        let report = probe(&BwrapBinary::OnPath, Some(empty.path().as_os_str()));
        assert_eq!(report.namespaces, None);
        assert!(!report.is_ok());
        assert!(
            report
                .to_string()
                .starts_with("bubblewrap: bubblewrap (`bwrap`) is not on PATH")
        );
    }
}
