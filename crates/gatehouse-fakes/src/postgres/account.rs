//! Which OS account the server runs as. `initdb` and `postgres` refuse to run as root, and
//! CI runs the tests as root, so there the cluster's programs, files and cleanup all switch
//! to an unprivileged account.
//!
//! The account is Debian's `postgres` system user when it exists (the `postgresql` package
//! creates it to run its own servers, so it is meant for exactly this), else `nobody`. Both
//! already exist, so the tests never add a user to the machine (which would race between
//! test processes and outlive them). The programs switch through `std`'s
//! `CommandExt::uid`/`gid`, which also drops root's supplementary groups before exec, so no
//! `setpriv`/`runuser` process sits between the test and the server; only the guardian's
//! shell, which cannot call `setuid` itself, uses util-linux's `setpriv` (see [`ServerAccount::setpriv`]).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use super::error::ClusterError;

/// Accounts tried, in order, when running as root.
const CANDIDATES: [&str; 2] = ["postgres", "nobody"];

/// The account the cluster's processes run as.
#[derive(Debug, Clone)]
pub(crate) struct ServerAccount {
    uid: u32,
    gid: u32,
    /// Whether commands must switch to it (only when running as root).
    switch: bool,
}

impl ServerAccount {
    /// The current user when it is not root; otherwise the first of [`CANDIDATES`] found
    /// in `/etc/passwd` with a non-zero uid.
    pub(crate) fn choose() -> Result<Self, ClusterError> {
        let euid = rustix::process::geteuid();
        if !euid.is_root() {
            return Ok(Self {
                uid: euid.as_raw(),
                gid: rustix::process::getegid().as_raw(),
                switch: false,
            });
        }
        let passwd = std::fs::read_to_string("/etc/passwd")
            .map_err(ClusterError::io("reading /etc/passwd"))?;
        CANDIDATES
            .iter()
            .filter_map(|name| lookup(&passwd, name))
            .find(|&(uid, _)| uid != 0)
            .map(|(uid, gid)| Self {
                uid,
                gid,
                switch: true,
            })
            .ok_or(ClusterError::NoAccount)
    }

    /// Makes `command` run as this account.
    pub(crate) fn apply(&self, command: &mut Command) {
        if self.switch {
            command.uid(self.uid).gid(self.gid);
        }
    }

    /// The `setpriv` command line that runs a program as this account, for the guardian's
    /// shell; `None` when no switch is needed. (`setpriv` is in util-linux, which every
    /// Debian system has.)
    pub(crate) fn setpriv(&self) -> Option<String> {
        self.switch.then(|| {
            format!(
                "setpriv --reuid={} --regid={} --clear-groups",
                self.uid, self.gid
            )
        })
    }

    /// Gives `path` to this account, so the server can write where the test process created.
    pub(crate) fn give(&self, path: &Path) -> Result<(), ClusterError> {
        if !self.switch {
            return Ok(());
        }
        std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid)).map_err(ClusterError::io(
            format!("giving {} to uid {}", path.display(), self.uid),
        ))
    }
}

/// The uid and gid of `name` in `/etc/passwd` text (`name:x:uid:gid:gecos:home:shell`).
fn lookup(passwd: &str, name: &str) -> Option<(u32, u32)> {
    passwd.lines().find_map(|line| {
        let mut fields = line.split(':');
        if fields.next()? != name {
            return None;
        }
        let mut ids = fields.skip(1);
        Some((ids.next()?.parse().ok()?, ids.next()?.parse().ok()?))
    })
}

#[cfg(test)]
mod tests {
    use super::lookup;

    #[test]
    fn reads_uid_and_gid_from_passwd() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\n\
                      postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n\
                      nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
        assert_eq!(lookup(passwd, "postgres"), Some((101, 104)));
        assert_eq!(lookup(passwd, "nobody"), Some((65534, 65534)));
        assert_eq!(lookup(passwd, "post"), None);
        assert_eq!(lookup("broken:x:abc:1::/:/bin/sh", "broken"), None);
    }
}
