//! Tests that need other processes. The test binary re-executes itself, running only
//! [`child_entry`] with a role in the environment, so no separate helper binary is needed.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use gatehouse_approvals::{
    ApprovalRecord, ApprovalState, DeliveredMessage, ListFilter, Resolution,
};
use gatehouse_policy::ApprovalDecision;
use gatehouse_store::approvals_db::{SqliteApprovalStore, SqliteOptions};
use gatehouse_store::approvals_file::{
    AllowlistHit, AllowlistItem, ExecApprovalsStore, NewAllowlistEntry,
};
use pretty_assertions::assert_eq;

use crate::support::new_approval;

const ROLE_VAR: &str = "GATEHOUSE_STORE_TEST_CHILD_ROLE";
const DIR_VAR: &str = "GATEHOUSE_STORE_TEST_CHILD_DIR";
const HITS_PER_PROCESS: usize = 15;
const READY: &str = "crash-writer-ready";

/// The body of a re-executed child. In an ordinary run no role is set and there is nothing to do.
#[test]
fn child_entry() {
    let Ok(role) = std::env::var(ROLE_VAR) else {
        return;
    };
    let dir = PathBuf::from(std::env::var(DIR_VAR).unwrap());
    match role.as_str() {
        "hit-writer" => hit_writer(&dir),
        "crash-writer" => crash_writer(&dir),
        other => panic!("unknown child role {other}"),
    }
}

fn spawn_child(role: &str, dir: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "child_processes::child_entry",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE_VAR, role)
        .env(DIR_VAR, dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

fn file_store(dir: &Path) -> ExecApprovalsStore {
    ExecApprovalsStore::new(dir.join("exec-approvals.json"))
}

fn db(dir: &Path) -> SqliteApprovalStore {
    SqliteApprovalStore::open(dir.join("approvals.sqlite"), SqliteOptions::default()).unwrap()
}

fn hit(pattern: &str, used_at_ms: u64) -> AllowlistHit<'_> {
    AllowlistHit {
        pattern,
        arg_pattern: None,
        used_at_ms,
        command: pattern,
        resolved_path: Some(pattern),
    }
}

fn add(store: &ExecApprovalsStore, agent: &str, pattern: &str) {
    store
        .add_allowlist_entry(
            agent,
            NewAllowlistEntry {
                pattern,
                arg_pattern: None,
                source: None,
                now_ms: 1,
            },
        )
        .unwrap();
}

fn hit_writer(dir: &Path) {
    let store = file_store(dir);
    let pid = std::process::id();
    for i in 0..HITS_PER_PROCESS {
        add(&store, "main", &format!("/bin/p{pid}-{i}"));
        assert_eq!(
            store
                .record_allowlist_hits(&[("main", hit("/bin/shared", i as u64))])
                .unwrap(),
            1
        );
    }
}

#[test]
fn concurrent_hits_and_additions_from_processes_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = file_store(dir.path());
    add(&store, "main", "/bin/shared");
    let children: Vec<Child> = (0..4)
        .map(|_| spawn_child("hit-writer", dir.path()))
        .collect();
    for i in 0..HITS_PER_PROCESS {
        add(&store, "main", &format!("/bin/parent-{i}"));
    }
    for child in children {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    let snapshot = store.read().unwrap();
    let main = &snapshot.file.agents["main"];
    let entries: Vec<_> = main
        .allowlist
        .iter()
        .flatten()
        .filter_map(AllowlistItem::entry)
        .collect();
    assert_eq!(entries.len(), 1 + 5 * HITS_PER_PROCESS);
    assert!(entries[0].last_used_command.is_some());
}

/// Writes to both stores until killed. Each step is one atomic write, so after a kill every
/// sequence must be a gap-free prefix.
fn crash_writer(dir: &Path) {
    let store = file_store(dir);
    let db = db(dir);
    let mut k = crash_patterns(&store).len();
    let mut n = all_rows(&db).len();
    // On its own line: the harness prints the test name without a newline first.
    println!("\n{READY}");
    std::io::stdout().flush().unwrap();
    // A parent that died without killing us must not leave a writer running forever.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        let pattern = format!("/bin/c-{k:06}");
        add(&store, "crash", &pattern);
        store
            .record_allowlist_hits(&[("crash", hit(&pattern, k as u64))])
            .unwrap();
        k += 1;

        let id = format!("row-{n:08}");
        db.insert(&new_approval(&id, n as u64)).unwrap();
        db.record_delivery(&id, &delivered(&id)).unwrap();
        let allow = Resolution::Decided {
            decision: ApprovalDecision::AllowOnce,
            resolved_by: Some("crash".into()),
            reason: None,
        };
        db.resolve(&id, &allow, n as u64 + 1).unwrap();
        db.consume_allow_once(&id, n as u64 + 2).unwrap();
        n += 1;
    }
}

fn delivered(id: &str) -> DeliveredMessage {
    DeliveredMessage {
        channel: "slack".into(),
        account_id: None,
        chat_id: "C1".into(),
        message_id: id.into(),
        thread_id: None,
    }
}

fn crash_patterns(store: &ExecApprovalsStore) -> Vec<String> {
    let snapshot = store.read().unwrap();
    let Some(agent) = snapshot.file.agents.get("crash") else {
        return Vec::new();
    };
    agent
        .allowlist
        .iter()
        .flatten()
        .map(|item| item.entry().expect("no malformed entries").pattern.clone())
        .collect()
}

fn all_rows(db: &SqliteApprovalStore) -> Vec<ApprovalRecord> {
    db.list(&ListFilter {
        limit: usize::MAX,
        ..ListFilter::default()
    })
    .unwrap()
}

/// Each row is at one of the writer's four steps (insert, deliver, allow, consume), with every
/// earlier step complete: a kill can stop a row between steps but never leave a half step.
fn assert_rows_consistent(rows: &[ApprovalRecord]) {
    for (n, row) in rows.iter().enumerate() {
        assert_eq!(row.id, format!("row-{n:08}"));
        let delivered = row.messages == vec![delivered(&row.id)];
        let step_ok = match (row.state, row.decision, row.consumed_at_ms) {
            (ApprovalState::Pending, None, None) => row.messages.is_empty() || delivered,
            (ApprovalState::Allowed, Some(ApprovalDecision::AllowOnce), _) => delivered,
            _ => false,
        };
        assert!(step_ok, "{row:?}");
    }
}

fn assert_patterns_consistent(store: &ExecApprovalsStore) -> usize {
    let snapshot = store.read().unwrap();
    let patterns = crash_patterns(store);
    for (k, pattern) in patterns.iter().enumerate() {
        assert_eq!(pattern, &format!("/bin/c-{k:06}"));
    }
    for item in snapshot
        .file
        .agents
        .get("crash")
        .iter()
        .flat_map(|a| a.allowlist.iter().flatten())
    {
        assert!(item.entry().unwrap().id.is_some());
    }
    patterns.len()
}

#[test]
fn sigkill_mid_write_leaves_both_stores_readable_and_consistent() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..8u64 {
        let mut child = spawn_child("crash-writer", dir.path());
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while line.trim() != READY {
            line.clear();
            assert!(
                stdout.read_line(&mut line).unwrap() > 0,
                "child exited early"
            );
        }
        std::thread::sleep(Duration::from_millis(15 + round * 11));
        child.kill().unwrap(); // SIGKILL on Unix
        child.wait().unwrap();

        let store = file_store(dir.path());
        assert_patterns_consistent(&store);
        let db = db(dir.path());
        assert_eq!(db.integrity_check().unwrap(), "ok");
        assert_rows_consistent(&all_rows(&db));
    }
    let store = file_store(dir.path());
    let written = assert_patterns_consistent(&store);
    let rows = all_rows(&db(dir.path())).len();
    assert!(
        written > 0 && rows > 0,
        "children made progress: {written} entries, {rows} rows"
    );

    // A later write removes any temp file a killed writer left behind.
    add(&store, "main", "/bin/after-crash");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
