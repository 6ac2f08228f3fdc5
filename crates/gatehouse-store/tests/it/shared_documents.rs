//! `exec-approvals.json` as a document replicas share (PostgreSQL): the same `get`/`set`
//! semantics as the file (hash, `baseHash` conflicts, redaction, appends), on both backings;
//! concurrent appends and sets through two stores never lose an entry; a change through one
//! store reaches the other; a first start imports the host's file once.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gatehouse_approvals::DocumentStore;
use gatehouse_fakes::postgres::TempDatabase;
use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::{PgApprovalStore, PgOptions};
use gatehouse_store::approvals_file::{
    AllowlistItem, ExecApprovalsStore, Import, NewAllowlistEntry, REDACTED_TOKEN, SnapshotCache,
    SocketToken, hash_bytes, parse_str,
};

/// A PostgreSQL store's shared documents; the store is kept alive beside them.
struct Replica {
    _store: PgApprovalStore,
    documents: Arc<dyn DocumentStore>,
}

async fn replica(database: &TempDatabase) -> Replica {
    let store = PgApprovalStore::connect(database.url(), PgOptions::default())
        .await
        .unwrap();
    let documents = Arc::new(store.documents());
    Replica {
        _store: store,
        documents,
    }
}

/// The document through `replica`, with `dir`'s file as the host's file.
async fn shared(replica: &Replica, dir: &tempfile::TempDir) -> ExecApprovalsStore {
    let documents = Arc::clone(&replica.documents);
    let path = dir.path().join("exec-approvals.json");
    tokio::task::spawn_blocking(move || ExecApprovalsStore::shared(path, documents).unwrap())
        .await
        .unwrap()
}

/// Runs the blocking `work` off the async threads.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work).await.unwrap()
}

fn entry(pattern: &str) -> NewAllowlistEntry<'_> {
    NewAllowlistEntry {
        pattern,
        arg_pattern: None,
        source: Some("allow-always"),
        now_ms: 1_700_000_000_000,
    }
}

fn patterns(store: &ExecApprovalsStore, agent: &str) -> BTreeSet<String> {
    let snapshot = store.read().unwrap();
    snapshot
        .file
        .agents
        .get(agent)
        .and_then(|agent| agent.allowlist.clone())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|item| match item {
            AllowlistItem::Entry(entry) => Some(entry.pattern),
            _ => None,
        })
        .collect()
}

/// What `exec.approvals.get`/`set` rely on, checked the same on any backing.
fn get_set_contract(store: &ExecApprovalsStore) {
    let empty = store.read().unwrap();
    assert!(!empty.exists);
    assert_eq!(empty.hash, hash_bytes(b""));

    let ensured = store.ensure().unwrap();
    assert!(ensured.exists);
    let token = ensured.file.socket.clone().unwrap().token.unwrap();
    assert_eq!(token.expose().len(), 32);
    assert_eq!(
        store.read().unwrap().hash,
        ensured.hash,
        "a read sees the write"
    );

    // A set based on what was read applies; the redacted token keeps the stored one.
    let mut edited = ensured.redacted().file;
    assert_eq!(
        edited.socket.as_ref().unwrap().token,
        Some(SocketToken::new(REDACTED_TOKEN))
    );
    edited.agents.entry("main".into()).or_default().allowlist = parse_str(
        r#"{"version":1,"agents":{"main":{"allowlist":[{"pattern":"/bin/ls"}]}}}"#,
        "t".as_ref(),
    )
    .unwrap()
    .file
    .agents["main"]
        .allowlist
        .clone();
    let replaced = store.replace(edited.clone(), &ensured.hash).unwrap();
    assert_ne!(replaced.hash, ensured.hash);
    assert_eq!(replaced.file.socket.as_ref().unwrap().token, Some(token));
    assert_eq!(
        patterns(store, "main"),
        BTreeSet::from(["/bin/ls".to_owned()])
    );

    // The same set again, on the hash it was based on, is refused: someone wrote since.
    let stale = store.replace(edited, &ensured.hash).unwrap_err();
    match stale {
        StoreError::Conflict {
            expected, actual, ..
        } => {
            assert_eq!(expected, ensured.hash);
            assert_eq!(actual, replaced.hash);
        }
        other => panic!("expected a conflict, got {other:?}"),
    }

    // An allow-always append adds once, then finds the same rule.
    let added = store
        .add_allowlist_entry("main", entry("/usr/bin/git"))
        .unwrap();
    assert!(added.added);
    let again = store
        .add_allowlist_entry("main", entry(" /USR/BIN/GIT "))
        .unwrap();
    assert_eq!((again.id, again.added), (added.id, false));
    assert_eq!(
        patterns(store, "main"),
        BTreeSet::from(["/bin/ls".to_owned(), "/usr/bin/git".to_owned()])
    );
    // The hash is the sha256 of the document's bytes, as a file's is.
    let read = store.read().unwrap();
    assert_eq!(
        read.hash,
        hash_bytes(&gatehouse_store::approvals_file::to_file_bytes(&read.file).unwrap())
    );
}

#[test]
fn the_file_keeps_the_get_set_contract() {
    let dir = tempfile::tempdir().unwrap();
    get_set_contract(&ExecApprovalsStore::new(
        dir.path().join("exec-approvals.json"),
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_document_keeps_the_get_set_contract_of_the_file() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = replica(&database).await;
    let dir = tempfile::tempdir().unwrap();
    let store = shared(&a, &dir).await;
    blocking(move || get_set_contract(&store)).await;
    // Nothing was written to the host's file.
    assert!(!dir.path().join("exec-approvals.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_through_one_replica_is_read_on_the_other_within_moments() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (replica(&database).await, replica(&database).await);
    let dir = tempfile::tempdir().unwrap();
    let (on_a, on_b) = (shared(&a, &dir).await, shared(&b, &dir).await);
    let ensured = on_a.clone();
    blocking(move || ensured.ensure().unwrap()).await;
    let cache = SnapshotCache::new();
    let before = cache.read(&on_a, std::time::SystemTime::now()).unwrap();
    assert!(Arc::ptr_eq(
        &before,
        &cache.read(&on_a, std::time::SystemTime::now()).unwrap()
    ));

    blocking(move || {
        on_b.add_allowlist_entry("main", entry("/usr/bin/make"))
            .unwrap()
    })
    .await;
    let started = Instant::now();
    loop {
        let now = cache.read(&on_a, std::time::SystemTime::now()).unwrap();
        if patterns(&on_a, "main").contains("/usr/bin/make") {
            assert!(
                !Arc::ptr_eq(&now, &before),
                "the cache parsed the new version"
            );
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "replica A never heard of B's entry"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Appends through one replica and whole-document sets through another, all at once: every
/// append and every set's own entry survives, whatever the interleaving. A set based on a
/// stale hash is refused and retried on a fresh read, as a client does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_appends_and_sets_through_two_replicas_never_lose_an_entry() {
    const APPENDS: usize = 24;
    const SETS: usize = 12;
    let database = gatehouse_fakes::postgres::database().unwrap();
    let (a, b) = (replica(&database).await, replica(&database).await);
    let dir = tempfile::tempdir().unwrap();
    let (on_a, on_b) = (shared(&a, &dir).await, shared(&b, &dir).await);
    let (appender, setter) = (on_a.clone(), on_b.clone());
    let conflicts = blocking(move || {
        std::thread::scope(|scope| {
            let appends: Vec<_> = (0..2)
                .map(|worker| {
                    let store = &appender;
                    scope.spawn(move || {
                        for i in (worker..APPENDS).step_by(2) {
                            let pattern = format!("/opt/append/{i}");
                            store.add_allowlist_entry("main", entry(&pattern)).unwrap();
                        }
                    })
                })
                .collect();
            let sets = scope.spawn(|| {
                let mut conflicts = 0;
                for j in 0..SETS {
                    loop {
                        let read = setter.read().unwrap();
                        let mut file = read.redacted().file;
                        let mut text = serde_json::to_value(&file).unwrap();
                        let list = text["agents"]["main"]["allowlist"].as_array().cloned();
                        let mut list = list.unwrap_or_default();
                        list.push(serde_json::json!({ "pattern": format!("/opt/set/{j}") }));
                        text["agents"]["main"]["allowlist"] = list.into();
                        text["version"] = 1.into();
                        file = parse_str(&text.to_string(), "set".as_ref()).unwrap().file;
                        match setter.replace(file, &read.hash) {
                            Ok(_) => break,
                            Err(StoreError::Conflict { .. }) => conflicts += 1,
                            Err(other) => panic!("{other:?}"),
                        }
                    }
                }
                conflicts
            });
            for append in appends {
                append.join().unwrap();
            }
            sets.join().unwrap()
        })
    })
    .await;

    let expected: BTreeSet<String> = (0..APPENDS)
        .map(|i| format!("/opt/append/{i}"))
        .chain((0..SETS).map(|j| format!("/opt/set/{j}")))
        .collect();
    // At once through the store that wrote last (either may have: the appends go through A,
    // the sets through B), and, once each heard the other's last change, through both.
    assert!(
        [&on_a, &on_b]
            .iter()
            .any(|store| patterns(store, "main") == expected),
        "conflicts: {conflicts}; A {:?}; B {:?}",
        patterns(&on_a, "main").len(),
        patterns(&on_b, "main").len()
    );
    let started = Instant::now();
    for (name, store) in [("A", &on_a), ("B", &on_b)] {
        while patterns(store, "main") != expected {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{name} never caught up"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_on_an_empty_database_imports_the_hosts_file_once() {
    let database = gatehouse_fakes::postgres::database().unwrap();
    let a = replica(&database).await;
    let (host_a, host_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let file_a = ExecApprovalsStore::new(host_a.path().join("exec-approvals.json"));
    file_a
        .add_allowlist_entry("main", entry("/usr/bin/rsync"))
        .unwrap();
    let file_b = ExecApprovalsStore::new(host_b.path().join("exec-approvals.json"));
    file_b
        .add_allowlist_entry("main", entry("/usr/bin/other"))
        .unwrap();
    let token_a = file_a.read().unwrap().file.socket.unwrap().token;

    let on_a = shared(&a, &host_a).await;
    let on_b = shared(&a, &host_b).await;
    let (first, second) = blocking(move || {
        (
            on_a.import_local_file().unwrap(),
            on_b.import_local_file().unwrap(),
        )
    })
    .await;
    assert_eq!((first, second), (Import::Imported, Import::AlreadyShared));

    let read = shared(&a, &host_b).await;
    assert_eq!(
        patterns(&read, "main"),
        BTreeSet::from(["/usr/bin/rsync".to_owned()])
    );
    assert_eq!(read.read().unwrap().file.socket.unwrap().token, token_a);
    // The host's files are left as they were.
    assert!(file_b.read().unwrap().exists);
}

/// The connections of `application` that listen: their last statement is the listener's
/// `LISTEN` or its ping (pooled connections last ran the store's own queries).
async fn listening(client: &tokio_postgres::Client, application: &str) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 \
             AND (query = 'SELECT 1' OR query LIKE 'LISTEN %')",
            &[&application],
        )
        .await
        .unwrap()
        .get(0)
}

/// A store following documents and approvals holds one listening connection for both; cut,
/// it reconnects, and both hear again: the approval feed resyncs and the followed document is
/// read again, whatever was notified while it was away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_listening_connection_hears_documents_and_approvals_and_reconnects_for_both() {
    use gatehouse_approvals::{ApprovalStore, Change};

    let database = gatehouse_fakes::postgres::database().unwrap();
    let a_url = format!("{}?application_name=replica-a", database.url());
    let a = PgApprovalStore::connect(&a_url, PgOptions::default())
        .await
        .unwrap();
    let a_documents: Arc<dyn DocumentStore> = Arc::new(a.documents());
    let mut feed = a.changes().unwrap();
    let followed = Arc::clone(&a_documents);
    let mut doc = blocking(move || followed.follow("doc").unwrap()).await;
    let b = replica(&database).await;
    let (client, connection) = tokio_postgres::connect(database.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);

    let started = Instant::now();
    while listening(&client, "replica-a").await == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never listened"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        tokio::time::timeout(Duration::from_secs(10), feed.recv())
            .await
            .unwrap(),
        Some(Change::Resync)
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        listening(&client, "replica-a").await,
        1,
        "one listener for both"
    );

    client
        .execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE application_name = 'replica-a'",
            &[],
        )
        .await
        .unwrap();
    // Written while A's listener may be away: A hears of both all the same.
    let b_documents = Arc::clone(&b.documents);
    blocking(move || {
        b_documents
            .update("doc", &mut |_| Some(b"from b".to_vec()))
            .unwrap()
    })
    .await;
    let read_again = doc.wait_for(|bytes| bytes.as_deref() == Some(&b"from b"[..]));
    tokio::time::timeout(Duration::from_secs(10), read_again)
        .await
        .expect("A never read B's change")
        .unwrap();
    let resynced = tokio::time::timeout(Duration::from_secs(10), feed.recv())
        .await
        .unwrap();
    assert_eq!(
        resynced,
        Some(Change::Resync),
        "the feed was told to read the log again"
    );
    while listening(&client, "replica-a").await == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "never listened again"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        listening(&client, "replica-a").await,
        1,
        "still one after reconnecting"
    );
}
