//! One throwaway PostgreSQL cluster: `initdb` in a temporary directory, a server on a free
//! loopback port, and control over its life (stop, crash, start again) for tests of what
//! happens when the database goes away.

use std::collections::hash_map::RandomState;
use std::fs::{self, OpenOptions};
use std::hash::BuildHasher;
use std::io::Write;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

use super::account::ServerAccount;
use super::binaries::Binaries;
use super::error::ClusterError;
use super::guardian::Guardian;
use super::processes;

/// The superuser `initdb` creates; every URL connects as it.
pub const SUPERUSER: &str = "postgres";
/// The database [`TempCluster::start`] creates and [`TempCluster::url`] points at.
pub const DATABASE: &str = "gatehouse";

/// How long a server may take to accept connections (crash recovery included) on a busy
/// 2-core machine before starting counts as failed.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a fast shutdown may take before the postmaster is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long children of a killed postmaster get to notice and exit before they are killed.
const ORPHAN_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the server's state is polled while waiting.
const POLL: Duration = Duration::from_millis(10);
/// Attempts at a free port: another process may take the port between our probe and the
/// server's bind.
const PORT_ATTEMPTS: usize = 5;
/// Lines of the server log quoted in errors.
const LOG_TAIL_LINES: usize = 20;

/// Settings appended to `postgresql.conf`: loopback only, durability against a machine
/// crash traded for speed (a test cluster is thrown away, and fsync on a shared disk costs
/// more than the whole test), and room for several replicas' pools at once.
///
/// Durability against a *server* crash stays, because tests of "the database restarted"
/// rely on it: a commit still writes its WAL to the kernel before it returns, so a SIGKILLed
/// server recovers every committed transaction. That is why `synchronous_commit` keeps its
/// default: turned off, commits return while their WAL sits in the server's shared memory,
/// and a killed server loses them.
///
/// Dynamic shared memory lives in files in the data directory (`mmap`) rather than in
/// `/dev/shm` or System V segments, so a killed server leaves none of it outside the
/// directory the cleanup removes.
const SETTINGS: &str = "
# Added by gatehouse-fakes: a throwaway test cluster, tuned for speed over durability
# against machine crashes (server crashes still keep every commit).
listen_addresses = '127.0.0.1'
fsync = off
full_page_writes = off
shared_buffers = 32MB
dynamic_shared_memory_type = mmap
max_connections = 200
max_parallel_workers_per_gather = 0
log_line_prefix = '%m [%p] %q%u@%d '
";

/// A real PostgreSQL server of its own, in a temporary directory, for tests that stop,
/// crash or restart the database. Tests that only need a database share one cluster per
/// process through [`super::database`], which is much cheaper (see the module doc).
///
/// The server listens on `127.0.0.1` on a free port and on a Unix socket in
/// [`TempCluster::socket_dir`]; TCP connections authenticate with SCRAM as [`SUPERUSER`]
/// with a generated password (in every URL given out). Dropping the cluster, or the test
/// process ending in any way, stops the server and removes the directory.
///
/// Every method blocks (it runs programs and waits on processes); from async code that must
/// keep other tasks running meanwhile, call it through `tokio::task::spawn_blocking`.
#[derive(Debug)]
pub struct TempCluster {
    /// Unique on the machine; PostgreSQL's `cluster_name` (so it appears in every server
    /// process title) and the name of the directory.
    name: String,
    dir: PathBuf,
    port: u16,
    password: String,
    binaries: Binaries,
    account: ServerAccount,
    /// The postmaster, while this cluster's server runs.
    server: Option<Child>,
    guardian: Guardian,
}

impl TempCluster {
    /// Creates a cluster with `initdb`, starts its server, waits until it accepts
    /// connections and creates the database [`DATABASE`].
    pub fn start() -> Result<Self, ClusterError> {
        let began = Instant::now();
        let binaries = Binaries::find()?;
        let account = ServerAccount::choose()?;
        let (name, dir) = make_dir(&account)?;
        let guardian = Guardian::spawn(&dir, &account).inspect_err(|_| {
            let _ = fs::remove_dir(&dir);
        })?;
        let mut cluster = Self {
            name,
            dir,
            port: 0,
            password: random_hex(),
            binaries,
            account,
            server: None,
            guardian,
        };
        cluster.init()?;
        let initialized = began.elapsed();
        cluster.boot_on_free_port()?;
        let booted = began.elapsed();
        cluster.create_database(DATABASE)?;
        tracing::debug!(
            cluster = %cluster.name,
            port = cluster.port,
            initdb_ms = initialized.as_millis(),
            boot_ms = (booted - initialized).as_millis(),
            createdb_ms = (began.elapsed() - booted).as_millis(),
            "Temporary PostgreSQL cluster ready."
        );
        Ok(cluster)
    }

    /// URL of the database [`DATABASE`]: `postgres://postgres:<password>@127.0.0.1:<port>/gatehouse`.
    pub fn url(&self) -> String {
        self.url_for(DATABASE)
    }

    /// URL of another database of this cluster (see [`TempCluster::create_database`]).
    pub fn url_for(&self, database: &str) -> String {
        format!(
            "postgres://{SUPERUSER}:{}@127.0.0.1:{}/{database}",
            self.password, self.port
        )
    }

    /// Creates an empty database and returns its URL. Names are limited to letters, digits
    /// and underscores so they need no quoting in SQL or URLs.
    pub fn create_database(&self, database: &str) -> Result<String, ClusterError> {
        check_database_name(database)?;
        self.run_client("createdb", &[database])?;
        Ok(self.url_for(database))
    }

    /// Drops a database, disconnecting whoever is still connected to it.
    pub fn drop_database(&self, database: &str) -> Result<(), ClusterError> {
        check_database_name(database)?;
        self.run_client("dropdb", &["--force", "--if-exists", database])
    }

    /// Backs `database` up with `pg_dump` (custom format, one consistent snapshot, taken while
    /// clients write) and restores the dump with `pg_restore` into the new database `into`,
    /// as an operator restores a backup; the new database's URL. The dump stays in the
    /// cluster's directory until the cluster is gone.
    pub fn dump_and_restore(&self, database: &str, into: &str) -> Result<String, ClusterError> {
        check_database_name(database)?;
        let dump = self.dir.join(format!("{database}.dump"));
        let dump_arg = dump.to_string_lossy();
        self.run_client(
            "pg_dump",
            &["--format=custom", "--file", &dump_arg, database],
        )?;
        let url = self.create_database(into)?;
        self.run_client(
            "pg_restore",
            &["--exit-on-error", "--dbname", into, &dump_arg],
        )?;
        Ok(url)
    }

    /// The TCP port on 127.0.0.1; it stays the same across restarts.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The password of [`SUPERUSER`] over TCP (it is in every URL too).
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The directory holding the server's Unix socket (`.s.PGSQL.<port>`); connections
    /// there need no password.
    pub fn socket_dir(&self) -> PathBuf {
        self.dir.join("sock")
    }

    /// The data directory (`PGDATA`).
    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// The cluster's name: its `cluster_name` setting, shown in every server process title
    /// (`postgres: <name>: checkpointer`), and the name of its directory.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server version, such as `15.18`.
    pub fn version(&self) -> &str {
        self.binaries.version()
    }

    /// The server's log (stdout and stderr of every start), for a failing test to print.
    pub fn log(&self) -> String {
        fs::read(self.log_path())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    }

    /// The postmaster's process id, while the server runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        self.server.as_ref().map(Child::id)
    }

    /// Every live process of this cluster on the machine: the postmaster and its children,
    /// including children a killed postmaster left behind.
    pub fn server_pids(&self) -> Vec<u32> {
        processes::of_cluster(&self.name, &self.data_dir())
    }

    /// Whether the server is running.
    pub fn is_running(&mut self) -> bool {
        self.server
            .as_mut()
            .is_some_and(|server| matches!(server.try_wait(), Ok(None)))
    }

    /// Stops the server the way an operator does (a fast shutdown: clients disconnected,
    /// a checkpoint written), keeping the data. Does nothing when it is not running.
    pub fn stop(&mut self) -> Result<(), ClusterError> {
        let Some(mut server) = self.server.take() else {
            return Ok(());
        };
        send(server.id(), Signal::INT);
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if server
                .try_wait()
                .map_err(ClusterError::io("waiting for the server"))?
                .is_some()
            {
                return Ok(());
            }
            sleep(POLL);
        }
        self.server = Some(server);
        self.kill()
    }

    /// Crashes the server: SIGKILL to the postmaster, as when the OOM killer or an operator's
    /// `kill -9` ends it (not the machine, which with `fsync = off` may lose data). Its children
    /// notice and exit; this waits until they have (killing any that linger), so
    /// [`TempCluster::start_again`] finds no old process holding the shared memory. The next
    /// start runs crash recovery; committed data survives.
    pub fn kill(&mut self) -> Result<(), ClusterError> {
        if let Some(mut server) = self.server.take() {
            send(server.id(), Signal::KILL);
            server
                .wait()
                .map_err(ClusterError::io("waiting for the postmaster"))?;
        }
        self.wait_for_orphans()
    }

    /// Starts the server again after [`TempCluster::stop`] or [`TempCluster::kill`], on the
    /// same port and data, and waits until it accepts connections.
    pub fn start_again(&mut self) -> Result<(), ClusterError> {
        if self.is_running() {
            return Err(ClusterError::AlreadyRunning);
        }
        // A server that died on its own still needs reaping.
        self.kill()?;
        self.boot()
    }

    /// [`TempCluster::stop`] then [`TempCluster::start_again`].
    pub fn restart(&mut self) -> Result<(), ClusterError> {
        self.stop()?;
        self.start_again()
    }

    /// Turns TLS on with this certificate chain and private key (PEM), restarting the
    /// server if it runs. TCP clients may then use TLS (plain TCP stays allowed, so a test
    /// can check the client asked for it: `SELECT ssl FROM pg_stat_ssl WHERE pid =
    /// pg_backend_pid()`).
    pub fn enable_tls(&mut self, certificate_pem: &str, key_pem: &str) -> Result<(), ClusterError> {
        let data = self.data_dir();
        // PostgreSQL refuses a key file others may read.
        self.write_private(&data.join("server.crt"), certificate_pem)?;
        self.write_private(&data.join("server.key"), key_pem)?;
        self.append_settings("ssl = on\n")?;
        if self.is_running() {
            self.restart()?;
        }
        Ok(())
    }

    fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Runs `initdb` and appends the test settings to `postgresql.conf`.
    fn init(&mut self) -> Result<(), ClusterError> {
        let socket_dir = self.socket_dir();
        fs::create_dir(&socket_dir).map_err(ClusterError::io(format!(
            "creating {}",
            socket_dir.display()
        )))?;
        self.account.give(&socket_dir)?;
        let password_file = self.dir.join("password");
        self.write_private(&password_file, &self.password)?;
        let mut initdb = self.binaries.command("initdb");
        initdb
            .arg("--pgdata")
            .arg(self.data_dir())
            .args(["--username", SUPERUSER, "--auth-local=trust"])
            .args(["--auth-host=scram-sha-256", "--encoding=UTF8", "--locale=C"])
            .args(["--no-sync", "--no-instructions"])
            .arg(format!("--pwfile={}", password_file.display()));
        self.run(initdb, "initdb")?;
        // Removed so the password lives only in the server's catalog and the URLs.
        let _ = fs::remove_file(&password_file);
        let mut settings = SETTINGS.to_owned();
        settings.push_str(&format!(
            "unix_socket_directories = {}\ncluster_name = {}\n",
            quote(&socket_dir.to_string_lossy()),
            quote(&self.name)
        ));
        self.append_settings(&settings)
    }

    /// Appends lines to `postgresql.conf` (later lines win over earlier ones).
    fn append_settings(&self, settings: &str) -> Result<(), ClusterError> {
        let conf = self.data_dir().join("postgresql.conf");
        OpenOptions::new()
            .append(true)
            .open(&conf)
            .and_then(|mut file| file.write_all(settings.as_bytes()))
            .map_err(ClusterError::io(format!("writing {}", conf.display())))
    }

    /// Writes a file only the server's account may read.
    fn write_private(&self, path: &Path, contents: &str) -> Result<(), ClusterError> {
        OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut file| file.write_all(contents.as_bytes()))
            .map_err(ClusterError::io(format!("writing {}", path.display())))?;
        self.account.give(path)
    }

    /// Boots the server on a free port, trying another port if the one picked was taken
    /// before the server could bind it.
    fn boot_on_free_port(&mut self) -> Result<(), ClusterError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            self.port = free_port()?;
            match self.boot() {
                Err(ClusterError::ServerExited { log, .. })
                    if attempt < PORT_ATTEMPTS && log.contains("Address already in use") =>
                {
                    tracing::debug!(
                        port = self.port,
                        "Port taken before the server bound it; trying another."
                    );
                }
                other => return other,
            }
        }
    }

    /// Starts the postmaster and waits until it reports itself ready.
    fn boot(&mut self) -> Result<(), ClusterError> {
        let log_path = self.log_path();
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(ClusterError::io(format!("opening {}", log_path.display())))?;
        let log_copy = log
            .try_clone()
            .map_err(ClusterError::io(format!("opening {}", log_path.display())))?;
        let mut postgres = self.binaries.command("postgres");
        postgres
            .arg("-D")
            .arg(self.data_dir())
            .arg("-p")
            .arg(self.port.to_string())
            .stdout(log)
            .stderr(log_copy)
            // Its own process group: a terminal's Ctrl-C goes to the test process only, and
            // the guardian then shuts the server down.
            .process_group(0);
        self.account.apply(&mut postgres);
        let server = postgres
            .spawn()
            .map_err(ClusterError::io("starting postgres"))?;
        self.server = Some(server);
        self.wait_ready()
    }

    /// Polls `postmaster.pid` until our postmaster writes `ready` in it (line 8, what
    /// `pg_ctl -w` waits for). The pid in line 1 is checked too: after a crash the old
    /// file still says `ready`.
    fn wait_ready(&mut self) -> Result<(), ClusterError> {
        let pid_file = self.data_dir().join("postmaster.pid");
        let began = Instant::now();
        while began.elapsed() < READY_TIMEOUT {
            let Some(server) = self.server.as_mut() else {
                break;
            };
            if let Some(status) = server
                .try_wait()
                .map_err(ClusterError::io("waiting for the server"))?
            {
                self.server = None;
                return Err(ClusterError::ServerExited {
                    status: status.to_string(),
                    log: self.log_tail(),
                });
            }
            let pid = server.id().to_string();
            let contents = fs::read_to_string(&pid_file).unwrap_or_default();
            let mut lines = contents.lines();
            if lines.next() == Some(pid.as_str())
                && lines.nth(6).is_some_and(|status| status.trim() == "ready")
            {
                return Ok(());
            }
            sleep(POLL);
        }
        Err(ClusterError::NotReady {
            waited: began.elapsed(),
            log: self.log_tail(),
        })
    }

    /// Waits for the children of a dead postmaster to exit; kills those that do not.
    fn wait_for_orphans(&self) -> Result<(), ClusterError> {
        let began = Instant::now();
        loop {
            let pids = self.server_pids();
            if pids.is_empty() {
                return Ok(());
            }
            if began.elapsed() >= ORPHAN_TIMEOUT {
                for pid in pids {
                    send(pid, Signal::KILL);
                }
                sleep(Duration::from_millis(200));
                let left = self.server_pids();
                if left.is_empty() {
                    return Ok(());
                }
                return Err(ClusterError::ProcessesLeft {
                    pids: left,
                    waited: began.elapsed(),
                });
            }
            sleep(POLL);
        }
    }

    /// Runs `createdb`/`dropdb` over the Unix socket (no password needed there).
    fn run_client(&self, program: &str, args: &[&str]) -> Result<(), ClusterError> {
        let mut command = self.binaries.command(program);
        command
            .arg("--host")
            .arg(self.socket_dir())
            .arg("--port")
            .arg(self.port.to_string())
            .args(["--username", SUPERUSER, "--no-password"])
            .args(args);
        self.run(command, program)
    }

    /// Runs a program as the server's account and turns a failure into an error with its
    /// output.
    fn run(&self, mut command: Command, program: &str) -> Result<(), ClusterError> {
        self.account.apply(&mut command);
        let output = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .map_err(ClusterError::io(format!("running {program}")))?;
        if output.status.success() {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        Err(ClusterError::Program {
            program: program.to_owned(),
            status: output.status.to_string(),
            output: text.trim().to_owned(),
        })
    }

    fn log_tail(&self) -> String {
        let log = self.log();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
    }
}

impl Drop for TempCluster {
    /// Hands cleanup to the guardian (server shut down, shared memory released, directory
    /// removed) and reaps the postmaster.
    fn drop(&mut self) {
        let _ = self.guardian.finish();
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
        // The guardian may lack the right to remove the directory's own entry when the
        // temporary directory is not world-writable.
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Creates the cluster's directory (mode 0700, owned by the server's account) under the
/// system temporary directory, named uniquely on the machine.
fn make_dir(account: &ServerAccount) -> Result<(String, PathBuf), ClusterError> {
    loop {
        let name = format!("gatehouse-pg-{}-{}", std::process::id(), &random_hex()[..8]);
        let dir = std::env::temp_dir().join(&name);
        match fs::create_dir(&dir) {
            Ok(()) => {
                fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
                    .map_err(ClusterError::io(format!("securing {}", dir.display())))?;
                account.give(&dir)?;
                return Ok((name, dir));
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => {
                return Err(ClusterError::io(format!("creating {}", dir.display()))(
                    error,
                ));
            }
        }
    }
}

/// A port that was free on 127.0.0.1 a moment ago.
fn free_port() -> Result<u16, ClusterError> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(ClusterError::io("finding a free port on 127.0.0.1"))
}

/// 32 hex digits from the standard library's per-process random hash keys: unpredictable
/// enough for a throwaway test password and for unique names.
fn random_hex() -> String {
    let state = RandomState::new();
    format!("{:016x}{:016x}", state.hash_one(1u8), state.hash_one(2u8))
}

/// A `postgresql.conf` string literal.
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "''"))
}

fn check_database_name(name: &str) -> Result<(), ClusterError> {
    let valid = !name.is_empty()
        && name.len() <= 63
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(ClusterError::BadDatabaseName(name.to_owned()))
    }
}

/// Sends a signal to a server process; an error means it is already gone, which the
/// caller's wait then sees.
fn send(pid: u32, signal: Signal) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}
