use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use gatehouse_store::StoreError;
use gatehouse_store::approvals_file::{
    AllowlistHit, AllowlistItem, ExecApprovalsStore, LoadNote, NewAllowlistEntry, REDACTED_TOKEN,
    SocketToken, hash_bytes,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn store_with(dir: &tempfile::TempDir, content: &Value) -> ExecApprovalsStore {
    let path = dir.path().join("exec-approvals.json");
    fs::write(&path, serde_json::to_vec_pretty(content).unwrap()).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    ExecApprovalsStore::new(path)
}

fn on_disk(store: &ExecApprovalsStore) -> Value {
    serde_json::from_slice(&fs::read(store.path()).unwrap()).unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn entry(pattern: &str) -> NewAllowlistEntry<'_> {
    NewAllowlistEntry {
        pattern,
        arg_pattern: None,
        source: None,
        now_ms: 1_700_000_000_000,
    }
}

#[test]
fn reads_a_missing_file_as_empty_without_creating_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
    let snapshot = store.read().unwrap();
    assert!(!snapshot.exists);
    assert_eq!(snapshot.hash, hash_bytes(b""));
    assert!(snapshot.file.agents.is_empty());
    assert!(!store.path().exists());
}

#[test]
fn ensure_generates_a_token_and_socket_path_and_writes_0600() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::new(dir.path().join("state/exec-approvals.json"));
    let snapshot = store.ensure().unwrap();
    assert_eq!(mode(store.path()), 0o600);
    let socket = snapshot.file.socket.clone().unwrap();
    let token = socket.token.unwrap();
    assert_eq!(token.expose().len(), 32, "24 bytes in unpadded base64url");
    assert!(socket.path.unwrap().ends_with("state/exec-approvals.sock"));
    assert_eq!(snapshot.hash, hash_bytes(&fs::read(store.path()).unwrap()));
    assert_eq!(on_disk(&store)["version"], 1);
    let again = store.ensure().unwrap();
    assert_eq!(again.hash, snapshot.hash, "a second ensure changes nothing");
}

#[test]
fn keeps_an_existing_token() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        &dir,
        &json!({"version": 1, "socket": {"path": "/run/x.sock", "token": "keep-me"}}),
    );
    let snapshot = store.ensure().unwrap();
    assert_eq!(
        snapshot.file.socket.unwrap().token,
        Some(SocketToken::new("keep-me"))
    );
}

#[test]
fn redacts_the_token_for_clients_and_keeps_it_when_they_write_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(&dir, &json!({"version": 1, "socket": {"token": "s3cret"}}));
    let snapshot = store.ensure().unwrap();
    let view = snapshot.redacted();
    assert_eq!(view.hash, snapshot.hash);
    let shown = format!(
        "{:?} {}",
        view.file,
        serde_json::to_string(&view.file).unwrap()
    );
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(shown.contains(REDACTED_TOKEN));
    assert!(!format!("{snapshot:?}").contains("s3cret"));

    let mut edited = view.file.clone();
    edited.agents.entry("main".into()).or_default().allowlist =
        Some(vec![AllowlistItem::Malformed(json!("/bin/ls"))]);
    store.replace(edited, &view.hash).unwrap();
    assert_eq!(on_disk(&store)["socket"]["token"], "s3cret");
}

#[test]
fn refuses_a_write_based_on_stale_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(&dir, &json!({"version": 1}));
    let first = store.read().unwrap();
    store.add_allowlist_entry("main", entry("/bin/ls")).unwrap();
    let before = fs::read(store.path()).unwrap();
    let err = store.replace(first.file.clone(), &first.hash).unwrap_err();
    match err {
        StoreError::Conflict {
            expected, actual, ..
        } => {
            assert_eq!(expected, first.hash);
            assert_eq!(actual, hash_bytes(&before));
        }
        other => panic!("expected Conflict, got {other:?}"),
    }
    assert_eq!(
        fs::read(store.path()).unwrap(),
        before,
        "nothing was written"
    );
    let fresh = store.read().unwrap();
    store.replace(first.file, &fresh.hash).unwrap();
}

#[test]
fn refuses_a_base_hash_for_a_file_created_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
    let missing = store.read().unwrap();
    store.ensure().unwrap();
    assert!(matches!(
        store.replace(missing.file, &missing.hash),
        Err(StoreError::Conflict { .. })
    ));
}

#[test]
fn reports_loose_permissions_and_restores_0600_on_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(&dir, &json!({"version": 1}));
    fs::set_permissions(store.path(), fs::Permissions::from_mode(0o644)).unwrap();
    let snapshot = store.read().unwrap();
    assert!(
        snapshot
            .report
            .notes
            .contains(&LoadNote::LoosePermissions { mode: 0o644 })
    );
    store.ensure().unwrap();
    assert_eq!(mode(store.path()), 0o600);
    assert!(store.read().unwrap().report.notes.is_empty());
}

#[test]
fn migrates_legacy_default_agent_into_main_on_write() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        &dir,
        &json!({"version": 1, "agents": {
            "default": {"ask": "off", "security": "allowlist",
                        "allowlist": [{"pattern": "/bin/legacy"}, {"pattern": "/bin/MAIN"}]},
            "main": {"ask": "always", "allowlist": [{"pattern": "/bin/main"}]}}}),
    );
    let snapshot = store.read().unwrap();
    assert!(
        snapshot
            .report
            .notes
            .contains(&LoadNote::LegacyDefaultAgentMigrated)
    );
    store.ensure().unwrap();
    let written = on_disk(&store);
    assert_eq!(written["agents"].get("default"), None);
    let main = &written["agents"]["main"];
    assert_eq!(main["ask"], "always");
    assert_eq!(main["security"], "allowlist");
    let patterns: Vec<&str> = main["allowlist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(patterns, vec!["/bin/main", "/bin/legacy"]);
}

#[test]
fn preserves_unknown_fields_and_malformed_entries_on_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        &dir,
        &json!({"version": 1, "futureTopLevel": {"a": 1},
                "socket": {"token": "t", "extraSocket": true},
                "defaults": {"ask": "sometimes", "note": "keep"},
                "agents": {"main": {"color": "blue", "allowlist": [
                    {"pattern": "/bin/ls", "id": "fixed", "comment": "mine"}, {"pattern": 7}, "", "echo"]}}}),
    );
    store
        .add_allowlist_entry("main", entry("/bin/cat"))
        .unwrap();
    let written = on_disk(&store);
    assert_eq!(written["futureTopLevel"], json!({"a": 1}));
    assert_eq!(written["socket"]["extraSocket"], true);
    assert_eq!(
        written["defaults"],
        json!({"ask": "sometimes", "note": "keep"})
    );
    let main = &written["agents"]["main"];
    assert_eq!(main["color"], "blue");
    let list = main["allowlist"].as_array().unwrap();
    assert_eq!(
        list.len(),
        4,
        "blank string dropped, everything else kept: {list:?}"
    );
    assert_eq!(
        list[0],
        json!({"id": "fixed", "pattern": "/bin/ls", "comment": "mine"})
    );
    assert_eq!(list[1], json!({"pattern": 7}));
    assert_eq!(list[2]["pattern"], "echo");
    assert_eq!(list[3]["pattern"], "/bin/cat");
}

#[test]
fn adding_an_entry_deduplicates_and_assigns_a_uuid() {
    let dir = tempfile::tempdir().unwrap();
    let store = ExecApprovalsStore::new(dir.path().join("exec-approvals.json"));
    let first = store
        .add_allowlist_entry(
            "main",
            NewAllowlistEntry {
                source: Some("allow-always"),
                ..entry("  /usr/bin/rg ")
            },
        )
        .unwrap();
    assert!(first.added);
    assert!(uuid::Uuid::parse_str(&first.id).is_ok(), "{}", first.id);
    let again = store
        .add_allowlist_entry("main", entry("/USR/BIN/RG"))
        .unwrap();
    assert_eq!(
        again,
        gatehouse_store::approvals_file::AddedEntry {
            id: first.id.clone(),
            added: false
        }
    );
    let with_args = store
        .add_allowlist_entry(
            "main",
            NewAllowlistEntry {
                arg_pattern: Some("^-n"),
                ..entry("/usr/bin/rg")
            },
        )
        .unwrap();
    assert!(
        with_args.added,
        "a different argPattern is a different rule"
    );
    let written = on_disk(&store);
    let list = written["agents"]["main"]["allowlist"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["pattern"], "/usr/bin/rg");
    assert_eq!(list[0]["source"], "allow-always");
    assert_eq!(list[0]["lastUsedAt"], 1_700_000_000_000u64);
}

#[test]
fn assigns_ids_to_entries_written_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        &dir,
        &json!({"version": 1, "agents": {"main": {"allowlist": ["ls", {"pattern": "/bin/cat"}]}}}),
    );
    store.ensure().unwrap();
    let written = on_disk(&store);
    for item in written["agents"]["main"]["allowlist"].as_array().unwrap() {
        assert!(uuid::Uuid::parse_str(item["id"].as_str().unwrap()).is_ok());
    }
}

#[test]
fn records_a_hit_on_the_agent_entry_or_the_wildcard_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        &dir,
        &json!({"version": 1, "agents": {
            "*": {"allowlist": [{"pattern": "/bin/hostname"}]},
            "main": {"allowlist": [{"pattern": "/bin/ls", "argPattern": "^-l"}]}}}),
    );
    let hit = |pattern, arg_pattern| AllowlistHit {
        pattern,
        arg_pattern,
        used_at_ms: 42,
        command: "ls -l",
        resolved_path: Some("/bin/ls"),
    };
    let hits = [
        ("main", hit("/bin/ls", Some("^-l"))),
        ("main", hit("/bin/hostname", None)),
        ("main", hit("/bin/ls", None)),
    ];
    // The third names no entry (its argPattern differs), so two of three are found.
    assert_eq!(store.record_allowlist_hits(&hits).unwrap(), 2);
    let written = on_disk(&store);
    let ls = &written["agents"]["main"]["allowlist"][0];
    assert_eq!(ls["lastUsedAt"], 42);
    assert_eq!(ls["lastUsedCommand"], "ls -l");
    assert_eq!(ls["lastResolvedPath"], "/bin/ls");
    assert_eq!(written["agents"]["*"]["allowlist"][0]["lastUsedAt"], 42);
    // Final review: two agents' uses of the `*` entry, written in either order, keep the later.
    let earlier = AllowlistHit {
        used_at_ms: 7,
        command: "hostname -f",
        ..hit("/bin/hostname", None)
    };
    assert_eq!(
        store.record_allowlist_hits(&[("other", earlier)]).unwrap(),
        1
    );
    let written = on_disk(&store);
    assert_eq!(written["agents"]["*"]["allowlist"][0]["lastUsedAt"], 42);
    assert_eq!(
        written["agents"]["*"]["allowlist"][0]["lastUsedCommand"],
        "ls -l"
    );
}

#[test]
fn concurrent_hits_and_additions_from_threads_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(
        &dir,
        &json!({"version": 1, "agents": {"main": {"allowlist": [{"pattern": "/bin/shared"}]}}}),
    );
    std::thread::scope(|scope| {
        for t in 0..6u64 {
            let store = store.clone();
            scope.spawn(move || {
                for i in 0..10u64 {
                    let pattern = format!("/bin/t{t}-{i}");
                    store.add_allowlist_entry("main", entry(&pattern)).unwrap();
                    let command = format!("shared {t} {i}");
                    store
                        .record_allowlist_hits(&[(
                            "main",
                            AllowlistHit {
                                pattern: "/bin/shared",
                                arg_pattern: None,
                                used_at_ms: t * 100 + i,
                                command: &command,
                                resolved_path: None,
                            },
                        )])
                        .unwrap();
                }
            });
        }
    });
    let written = on_disk(&store);
    let list = written["agents"]["main"]["allowlist"].as_array().unwrap();
    assert_eq!(list.len(), 1 + 6 * 10);
    assert!(
        list[0]["lastUsedCommand"]
            .as_str()
            .unwrap()
            .starts_with("shared ")
    );
}

#[test]
fn refuses_to_write_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.json");
    fs::write(&real, r#"{"version":1}"#).unwrap();
    let link = dir.path().join("exec-approvals.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let store = ExecApprovalsStore::new(&link);
    assert!(matches!(
        store.ensure(),
        Err(StoreError::UnsafeDestination { .. })
    ));
    assert_eq!(fs::read_to_string(&real).unwrap(), r#"{"version":1}"#);
}

#[test]
fn reports_parse_errors_with_the_file_position() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exec-approvals.json");
    fs::write(
        &path,
        "{\n  \"version\": 1,\n  \"agents\": {\"main\": {\"allowlist\": 5}}\n}\n",
    )
    .unwrap();
    let err = ExecApprovalsStore::new(&path).read().unwrap_err();
    match &err {
        StoreError::Parse { line, path: p, .. } => {
            assert_eq!(*line, 3);
            assert_eq!(p, &path);
        }
        other => panic!("expected Parse, got {other:?}"),
    }
    assert!(err.to_string().contains("exec-approvals.json:3:"), "{err}");
}

#[test]
fn reads_null_agents_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(&dir, &json!({"version": 1, "agents": null}));
    assert!(store.read().unwrap().file.agents.is_empty());
}
