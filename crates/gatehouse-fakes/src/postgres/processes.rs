//! Finding a cluster's processes in `/proc`, including children a killed postmaster left
//! behind (they are re-parented away from the test process, so only their names tie them to
//! the cluster).

use std::path::Path;

/// The live processes of one cluster: the postmaster, whose command line holds
/// `-D <data_dir>`, and every child, whose title PostgreSQL sets to
/// `postgres: <cluster_name>: …`. Zombies have an empty command line, so exited processes
/// not yet reaped do not count.
pub(crate) fn of_cluster(cluster_name: &str, data_dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let title = format!("postgres: {cluster_name}: ");
    let data_dir = data_dir.as_os_str().as_encoded_bytes();
    let mut pids: Vec<u32> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| belongs(&cmdline, title.as_bytes(), data_dir))
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether a NUL-separated command line is the cluster's postmaster or one of its children.
fn belongs(cmdline: &[u8], title: &[u8], data_dir: &[u8]) -> bool {
    if cmdline.starts_with(title) {
        return true;
    }
    let mut args = cmdline.split(|&byte| byte == 0);
    let is_server = args
        .next()
        .is_some_and(|program| program.ends_with(b"/postgres") || program == b"postgres");
    is_server && args.any(|arg| arg == data_dir)
}

#[cfg(test)]
mod tests {
    use super::belongs;

    #[test]
    fn recognises_the_postmaster_and_its_children_only() {
        let title = b"postgres: gh-1: ";
        let data = b"/tmp/gh-1/data";
        let postmaster = b"/usr/lib/postgresql/15/bin/postgres\0-D\0/tmp/gh-1/data\0-p\0port\0";
        assert!(belongs(postmaster, title, data));
        assert!(belongs(b"postgres: gh-1: checkpointer   ", title, data));
        assert!(!belongs(b"postgres: gh-10: checkpointer", title, data));
        assert!(!belongs(
            b"/usr/lib/postgresql/15/bin/postgres\0-D\0/tmp/gh-10/data\0",
            title,
            data
        ));
        assert!(!belongs(
            b"sh\0-c\0script\0guardian\0/tmp/gh-1/data\0",
            title,
            data
        ));
        assert!(!belongs(b"", title, data));
    }
}
