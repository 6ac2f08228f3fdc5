//! The temporary PostgreSQL clusters, driven by the client the store uses (tokio-postgres,
//! pooled by deadpool-postgres, TLS through rustls): what replicas rely on — connections,
//! restarts and crashes that keep data, LISTEN/NOTIFY between connections, advisory locks —
//! and that a cluster leaves nothing behind however its test ends.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use futures_util::StreamExt;
use gatehouse_fakes::postgres::{self, TempCluster};
use tokio_postgres::{AsyncMessage, Client, NoTls, Notification};

/// Connects without TLS and drives the connection on a task.
async fn connect(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// Connects and forwards the connection's notifications to the returned channel; a
/// `tokio-postgres` connection delivers them only to whoever polls it.
async fn connect_listening(
    url: &str,
) -> (Client, tokio::sync::mpsc::UnboundedReceiver<Notification>) {
    let (client, mut connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(note) = message {
                let _ = sender.send(note);
            }
        }
    });
    (client, receiver)
}

/// Every process on the machine whose command line mentions `needle` (a cluster's name).
fn processes_mentioning(needle: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|cmdline| String::from_utf8_lossy(&cmdline).replace('\0', " "))
        .filter(|cmdline| cmdline.contains(needle))
        .collect()
}

/// The System V shared memory id the running server holds (line 7 of `postmaster.pid`).
fn shared_memory_id(data_dir: &Path) -> String {
    let pid_file = std::fs::read_to_string(data_dir.join("postmaster.pid")).unwrap();
    let line = pid_file.lines().nth(6).unwrap();
    line.split_whitespace().nth(1).unwrap().to_owned()
}

/// Whether a System V shared memory segment with this id exists.
fn shared_memory_exists(id: &str) -> bool {
    std::fs::read_to_string("/proc/sysvipc/shm")
        .unwrap()
        .lines()
        .skip(1)
        .any(|line| line.split_whitespace().nth(1) == Some(id))
}

/// Polls until nothing of a cluster is left: no process naming it, no directory.
fn assert_gone(name: &str, dir: &Path) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = processes_mentioning(name);
        if left.is_empty() && !dir.exists() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "cluster {name} left processes {left:?} or its directory {} behind",
            dir.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn count_rows(client: &Client, table: &str) -> i64 {
    let row = client
        .query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap();
    row.get(0)
}

#[tokio::test]
async fn a_shared_database_takes_a_table_and_rows() {
    let db = postgres::database().unwrap();
    assert!(db.url().starts_with("postgres://postgres:"));
    let client = connect(db.url()).await;
    client
        .batch_execute("CREATE TABLE approvals (id bigserial PRIMARY KEY, state text NOT NULL)")
        .await
        .unwrap();
    let insert = client
        .prepare("INSERT INTO approvals (state) VALUES ($1) RETURNING id")
        .await
        .unwrap();
    let first: i64 = client
        .query_one(&insert, &[&"pending"])
        .await
        .unwrap()
        .get(0);
    let second: i64 = client
        .query_one(&insert, &[&"pending"])
        .await
        .unwrap()
        .get(0);
    assert_eq!(second, first + 1);
    let user: String = client
        .query_one("SELECT current_user", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(user, postgres::SUPERUSER);
}

#[tokio::test]
async fn shared_databases_are_separate_and_dropped_with_their_value() {
    let first = postgres::database().unwrap();
    let second = postgres::database().unwrap();
    assert_ne!(first.name(), second.name());
    let a = connect(first.url()).await;
    a.batch_execute("CREATE TABLE only_in_first (x int)")
        .await
        .unwrap();
    let b = connect(second.url()).await;
    let error = b
        .batch_execute("SELECT * FROM only_in_first")
        .await
        .unwrap_err();
    assert_eq!(
        error.code(),
        Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE)
    );

    let maintenance = connect(&first.cluster().url_for("postgres")).await;
    let name = first.name().to_owned();
    // Dropping the value drops the database even while a connection to it is open.
    drop(first);
    let left = maintenance
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
        .await
        .unwrap();
    assert!(left.is_none(), "database {name} still exists");
    assert!(a.batch_execute("SELECT 1").await.is_err());
}

#[tokio::test]
async fn two_clusters_run_side_by_side() {
    let (one, two) = std::thread::scope(|scope| {
        let one = scope.spawn(TempCluster::start);
        let two = scope.spawn(TempCluster::start);
        (one.join().unwrap().unwrap(), two.join().unwrap().unwrap())
    });
    assert_ne!(one.port(), two.port());
    assert_ne!(one.name(), two.name());
    assert_ne!(one.data_dir(), two.data_dir());

    let a = connect(&one.url()).await;
    let b = connect(&two.url()).await;
    a.batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (1)")
        .await
        .unwrap();
    b.batch_execute("CREATE TABLE t (x int); INSERT INTO t VALUES (2), (3)")
        .await
        .unwrap();
    assert_eq!(count_rows(&a, "t").await, 1);
    assert_eq!(count_rows(&b, "t").await, 2);
}

#[tokio::test]
async fn a_restart_keeps_data_and_the_port() {
    let mut cluster = TempCluster::start().unwrap();
    let port = cluster.port();
    let client = connect(&cluster.url()).await;
    client
        .batch_execute("CREATE TABLE kept (x int); INSERT INTO kept VALUES (1), (2)")
        .await
        .unwrap();
    let first_postmaster = cluster.postmaster_pid().unwrap();

    cluster.restart().unwrap();

    assert_eq!(cluster.port(), port);
    assert_ne!(cluster.postmaster_pid().unwrap(), first_postmaster);
    // The old connection was closed by the shutdown; a new one sees the data.
    assert!(client.batch_execute("SELECT 1").await.is_err());
    let client = connect(&cluster.url()).await;
    assert_eq!(count_rows(&client, "kept").await, 2);
}

#[tokio::test]
async fn a_killed_server_starts_again_with_committed_data_and_pools_reconnect() {
    let mut cluster = TempCluster::start().unwrap();
    let manager = Manager::from_config(
        cluster.url().parse().unwrap(),
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let pool = Pool::builder(manager).max_size(2).build().unwrap();
    let client = pool.get().await.unwrap();
    client
        .batch_execute("CREATE TABLE decided (id int PRIMARY KEY); INSERT INTO decided VALUES (1)")
        .await
        .unwrap();
    // A transaction still open when the server dies is lost; committed rows are not.
    client
        .batch_execute("BEGIN; INSERT INTO decided VALUES (2)")
        .await
        .unwrap();
    let postmaster = cluster.postmaster_pid().unwrap();

    cluster.kill().unwrap();

    assert!(!cluster.is_running());
    assert_eq!(cluster.server_pids(), Vec::<u32>::new());
    assert!(!Path::new(&format!("/proc/{postmaster}/cmdline")).exists());
    assert!(client.batch_execute("COMMIT").await.is_err());
    // The pool's fast recycling trusts `is_closed`, which turns true once the connection's task
    // has run and seen the socket end; wait for that (on a loaded machine it may not have run
    // yet), or the pool would hand the dead connection back.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !client.is_closed() {
        assert!(
            std::time::Instant::now() < deadline,
            "the connection never closed"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    drop(client);

    cluster.start_again().unwrap();
    assert!(cluster.log().contains("database system was interrupted"));
    // The pool drops its dead connection and opens a new one.
    let client = pool.get().await.unwrap();
    let ids: Vec<i32> = client
        .query("SELECT id FROM decided ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(ids, [1]);
}

#[tokio::test]
async fn start_again_refuses_a_running_server() {
    let mut cluster = TempCluster::start().unwrap();
    assert!(matches!(
        cluster.start_again(),
        Err(postgres::ClusterError::AlreadyRunning)
    ));
    cluster.stop().unwrap();
    assert!(!cluster.is_running());
    cluster.start_again().unwrap();
    assert!(count_rows(&connect(&cluster.url()).await, "pg_class").await > 0);
}

#[tokio::test]
async fn notify_reaches_a_listening_connection_on_commit() {
    let db = postgres::database().unwrap();
    let (listener, mut notes) = connect_listening(db.url()).await;
    listener.batch_execute("LISTEN approvals").await.unwrap();
    let notifier = connect(db.url()).await;
    let notifier_pid: i32 = notifier
        .query_one("SELECT pg_backend_pid()", &[])
        .await
        .unwrap()
        .get(0);

    notifier
        .batch_execute("BEGIN; SELECT pg_notify('approvals', '42')")
        .await
        .unwrap();
    // Not before the transaction commits: a wake-up never runs ahead of the data it announces.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), notes.recv())
            .await
            .is_err()
    );
    notifier.batch_execute("COMMIT").await.unwrap();
    let note = tokio::time::timeout(Duration::from_secs(10), notes.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (note.channel(), note.payload(), note.process_id()),
        ("approvals", "42", notifier_pid)
    );
}

#[tokio::test]
async fn an_advisory_lock_is_held_by_one_connection_until_it_ends() {
    let db = postgres::database().unwrap();
    let holder = connect(db.url()).await;
    let other = connect(db.url()).await;
    let try_lock = "SELECT pg_try_advisory_lock(34)";
    let got = |row: tokio_postgres::Row| row.get::<_, bool>(0);

    assert!(got(holder.query_one(try_lock, &[]).await.unwrap()));
    assert!(!got(other.query_one(try_lock, &[]).await.unwrap()));

    // The lease passes on when the holder's session ends (a replica dying), and a waiter
    // blocked in pg_advisory_lock gets it.
    let waiter = tokio::spawn(async move {
        other
            .batch_execute("SELECT pg_advisory_lock(34)")
            .await
            .unwrap();
        other
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished());
    drop(holder);
    let other = tokio::time::timeout(Duration::from_secs(10), waiter)
        .await
        .unwrap()
        .unwrap();
    let mine: bool = other
        .query_one(
            "SELECT count(*) = 1 FROM pg_locks WHERE locktype = 'advisory' \
             AND objid = 34 AND pid = pg_backend_pid() AND granted",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(mine);
}

/// A CA and a certificate for 127.0.0.1 it signed: (CA certificate, server chain PEM, key PEM).
fn test_certificates() -> (rustls::pki_types::CertificateDer<'static>, String, String) {
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = rcgen::CertifiedIssuer::self_signed(ca_params, rcgen::KeyPair::generate().unwrap())
        .unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let certificate = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &ca)
        .unwrap();
    (ca.der().clone(), certificate.pem(), key.serialize_pem())
}

/// tokio-postgres over rustls (ring), trusting only `root`.
fn rustls_connector(
    root: rustls::pki_types::CertificateDer<'static>,
) -> tokio_postgres_rustls::MakeRustlsConnect {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(root).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    tokio_postgres_rustls::MakeRustlsConnect::new(config)
}

#[tokio::test]
async fn tls_through_rustls_verifies_the_server_certificate() {
    let mut cluster = TempCluster::start().unwrap();
    let (ca, chain, key) = test_certificates();
    cluster.enable_tls(&chain, &key).unwrap();
    let url = format!("{}?sslmode=require", cluster.url());

    let (client, connection) = tokio_postgres::connect(&url, rustls_connector(ca))
        .await
        .unwrap();
    tokio::spawn(connection);
    let encrypted: bool = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(encrypted);

    // A server certificate from another CA is refused, not used unverified.
    let (other_ca, _, _) = test_certificates();
    let refused = tokio_postgres::connect(&url, rustls_connector(other_ca)).await;
    let error = refused.err().unwrap().to_string();
    assert!(error.contains("TLS"), "{error}");
}

#[test]
fn dropping_a_cluster_leaves_no_process_directory_or_shared_memory() {
    let cluster = TempCluster::start().unwrap();
    let name = cluster.name().to_owned();
    let dir = cluster.data_dir().parent().unwrap().to_path_buf();
    let memory = shared_memory_id(&cluster.data_dir());
    assert!(cluster.server_pids().len() >= 2, "postmaster and children");
    assert!(shared_memory_exists(&memory));

    drop(cluster);

    assert_eq!(processes_mentioning(&name), Vec::<String>::new());
    assert!(!dir.exists());
    assert!(!shared_memory_exists(&memory));
}

#[test]
fn dropping_a_killed_cluster_releases_its_shared_memory() {
    let mut cluster = TempCluster::start().unwrap();
    let memory = shared_memory_id(&cluster.data_dir());
    cluster.kill().unwrap();
    // Nobody shut the server down, so its segment outlives it until the cleanup.
    assert!(shared_memory_exists(&memory));
    let dir = cluster.data_dir().parent().unwrap().to_path_buf();
    drop(cluster);
    assert!(!dir.exists());
    assert!(!shared_memory_exists(&memory));
}

#[test]
fn a_panicking_test_still_cleans_up() {
    let mut seen = None;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let cluster = TempCluster::start().unwrap();
        seen = Some((cluster.name().to_owned(), cluster.data_dir()));
        panic!("a failing assertion");
    }));
    assert!(outcome.is_err());
    let (name, data) = seen.unwrap();
    assert_gone(&name, data.parent().unwrap());
}

/// Environment variable that turns [`child_process_that_never_drops`] into the helper of
/// [`a_test_process_killed_outright_still_cleans_up`].
const HELPER_VAR: &str = "GATEHOUSE_PG_CLEANUP_HELPER";

/// The helper process, killed when the test ends however it ends.
struct Helper(Child);

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_test_process_killed_outright_still_cleans_up() {
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "postgres::child_process_that_never_drops",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(HELPER_VAR, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut helper = Helper(child);
    let mut clusters: Vec<(String, PathBuf)> = Vec::new();
    let lines = BufReader::new(helper.0.stdout.take().unwrap()).lines();
    // libtest prints the test's name on the line the helper's first output continues.
    for line in lines.map(Result::unwrap) {
        if line.ends_with("helper ready") {
            break;
        }
        if let Some((_, rest)) = line.split_once("helper cluster ") {
            let (name, dir) = rest.split_once(' ').unwrap();
            clusters.push((name.to_owned(), PathBuf::from(dir)));
        }
    }
    assert_eq!(
        clusters.len(),
        2,
        "the helper reports its own and the shared cluster"
    );
    for (name, _) in &clusters {
        assert!(!processes_mentioning(name).is_empty());
    }

    // SIGKILL: no destructor, no atexit, nothing runs in the test process.
    drop(helper);

    for (name, dir) in &clusters {
        assert_gone(name, dir);
    }
}

/// Not a test on its own: run by [`a_test_process_killed_outright_still_cleans_up`] in a
/// child process (with [`HELPER_VAR`] set), it starts a cluster of its own and the shared
/// one, reports them and waits to be killed.
#[test]
fn child_process_that_never_drops() {
    if std::env::var_os(HELPER_VAR).is_none() {
        return;
    }
    let own = TempCluster::start().unwrap();
    let shared = postgres::database().unwrap();
    for cluster in [&own, shared.cluster()] {
        let dir = cluster.data_dir().parent().unwrap().to_path_buf();
        println!("helper cluster {} {}", cluster.name(), dir.display());
    }
    println!("helper ready");
    std::thread::sleep(Duration::from_secs(120));
    unreachable!("the parent test kills this process");
}
