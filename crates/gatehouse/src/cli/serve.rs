//! `gatehouse serve`: run the gateway.
//!
//! The data directory holds `exec-approvals.json`, the approvals database and the audit log, and
//! one `serve` at a time owns it: a second one would wait forever on the audit log's write lock,
//! then take over silently when the first stopped, so it is refused at start instead. Everything
//! that can fail cheaply (flags, config, the lock, binding the listen address) is checked before
//! the admin token is created, so a failed start leaves no token behind. Tokens come from
//! `gateway.auth.tokens` in the config; with no config, or a config without tokens, one
//! `operator.admin` token is generated on first start into a 0600 file and reused afterwards.
//! The login URL carrying that token goes to stdout for the operator, never to the logs.

use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{ErrorKind, Write as _};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use gatehouse_approvals::{ChatOutbox, RoutePresence, SharedChat, SystemClock};
use gatehouse_gateway::{
    GatewaySettings, GatewayState, Scope, Secret, StoreBatches, TokenSpec, configured_limits,
};
use gatehouse_service::{ChatSetup, ExecLimits, Ports, Service, ServiceError};
use gatehouse_store::approvals_db::{PendingCaps, SqliteApprovalStore};
use rand::RngCore as _;
use rustix::fs::{FlockOperation, flock};
use rustix::io::Errno;

use super::layout::{
    ADMIN_TOKEN_FILE, LOCK_FILE, OpenedStore, SESSIONS_FILE, default_data_dir, listen_address,
    open_store, service_setup,
};
use super::logging::{self, LogFormat};
use super::tokens::read_admin_token;

/// This gateway's name in the chat outbox's claims on a store of its own. One gateway runs per
/// data directory (its lock), so one fixed name is stable across its restarts and unique on its
/// store. On a store several gateways share, each is named by its host and port
/// ([`replica_name`]).
const LOCAL_INSTANCE: &str = "local";

/// A gateway's name among those sharing a store: its host and listening port, stable across
/// its restarts and unique among replicas (two cannot listen on one host's port at once).
fn replica_name(addr: SocketAddr) -> String {
    let host = rustix::system::uname();
    format!("{}:{}", host.nodename().to_string_lossy(), addr.port())
}

/// Flags of `gatehouse serve`.
#[derive(Debug, clap::Args)]
pub(crate) struct ServeArgs {
    /// JSON5 config file (OpenClaw keys); the embedded default when absent.
    #[arg(long, value_name = "FILE", env = "GATEHOUSE_CONFIG")]
    config: Option<PathBuf>,
    /// Address to listen on [default: `gateway.listen` from the config, else 127.0.0.1:18790].
    #[arg(long, value_name = "ADDR", env = "GATEHOUSE_LISTEN")]
    listen: Option<SocketAddr>,
    /// State directory [default: $XDG_STATE_HOME/gatehouse or ~/.local/state/gatehouse].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Log line format on stderr.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// Runs the gateway until SIGTERM or ctrl-c, then shuts down gracefully.
pub(crate) fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let config = super::config::load(args.config.as_deref())?;
    super::config::check_chat(args.config.as_deref(), &config)?;
    logging::init(args.log_format);
    let listen = listen_address(args.listen, config.gateway.listen.as_deref())?;
    let data_dir = match args.data_dir {
        Some(dir) => dir,
        None => default_data_dir()?,
    };
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&data_dir)
        .with_context(|| format!("cannot create data directory {}", data_dir.display()))?;
    // Declared before the runtime, so it is dropped after it: nothing of the gateway outlives it.
    let _lock = DataDirLock::take(&data_dir)?;
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    // Bound before anything is created or connected: a port in use is the commonest failed
    // start, and it should fail in a moment, leaving nothing behind.
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind(listen))
        .with_context(|| format!("cannot listen on {listen}"))?;
    let mut tokens = super::tokens::configured_tokens(&config)?;
    let admin_token = if tokens.is_empty() {
        let token = load_or_create_admin_token(&data_dir.join(ADMIN_TOKEN_FILE))?;
        tokens.push(TokenSpec {
            name: "admin".into(),
            secret: token.clone(),
            scopes: vec![Scope::Admin],
            agents: None,
        });
        Some(token)
    } else {
        None
    };
    let limits = configured_limits(config.gateway.limits.as_ref());
    let exec_limits = ExecLimits::configured(config.gateway.limits.as_ref());
    let pending_caps = PendingCaps {
        per_agent: exec_limits.max_pending_per_agent,
        per_token: exec_limits.max_pending_per_token,
    };
    let settings = GatewaySettings { tokens, limits };
    let claude_code_hook = config
        .integrations
        .claude_code
        .as_ref()
        .map(|block| block.settings())
        .unwrap_or_default();
    let sandbox_host = super::sandbox::host_context(&config, args.config.as_deref(), &data_dir)
        .inspect_err(|why| tracing::warn!(reason = %why, "Sandboxed runs will be refused."))
        .ok();
    let setup = service_setup(
        config,
        args.config.as_deref(),
        &data_dir,
        exec_limits,
        sandbox_host,
    );
    runtime.block_on(async {
        let connected = super::channels::connect_all(&setup.config).await?;
        let chat_connected = !connected.channels.is_empty();
        // In the order a start has always checked things: the service's own files, the
        // approvals database, the gateway's settings, then chat.
        let store_config = setup.config.gateway.store.clone();
        let mut prepared = Service::prepare(setup)?;
        let opened = open_store(store_config.as_ref(), &data_dir, pending_caps).await?;
        if let OpenedStore::Postgres(store) = &opened {
            // Replicas share the allowlists and `/elevated` levels through the database.
            prepared = prepared.share_state(Arc::new(store.documents()));
            // And one audit chain, which the store's transitions append to.
            let log = store.audit_log().map_err(ServiceError::store)?;
            prepared = prepared.share_audit(Arc::new(log))?;
        }
        let mut gateway = GatewayState::builder(&settings).claude_code_hook(claude_code_hook);
        // The chat outbox lives beside the approvals it refers to. On a store several
        // gateways share, chat runs on the one holding the chat lease.
        let addr = listener
            .local_addr()
            .context("cannot read the listening address")?;
        let (outbox, shared, instance) = match &opened {
            OpenedStore::Sqlite(store) => {
                let metrics = Arc::clone(store);
                gateway = gateway.store_metrics(Arc::new(move || store_batches(&metrics)));
                let outbox = Arc::clone(store) as Arc<dyn ChatOutbox>;
                (outbox, None, LOCAL_INSTANCE.to_owned())
            }
            OpenedStore::Postgres(store) => {
                let outbox = Arc::clone(store) as Arc<dyn ChatOutbox>;
                // Without channels there is nothing to hold: no lease is taken.
                let shared = chat_connected.then(|| Arc::clone(store) as Arc<dyn SharedChat>);
                (outbox, shared, replica_name(addr))
            }
        };
        let ports = Ports {
            store: opened.store(),
            clock: Arc::new(SystemClock),
            publisher: Arc::new(gateway.events().clone()),
        };
        let service = prepared.start(ports).await?;
        if let OpenedStore::Postgres(store) = &opened {
            // An operator on another replica is a route for requests made here.
            service.share_routes(Arc::clone(store) as Arc<dyn RoutePresence>);
        }
        let state = gateway.with_service(service.clone())?;
        service.start_chat(ChatSetup {
            channels: connected.channels,
            platforms: super::channels::platforms(),
            outbox,
            instance,
            sessions_file: data_dir.join(SESSIONS_FILE),
            shared,
        })?;
        serve(
            listener,
            state,
            connected.routes,
            Started {
                admin_token: admin_token.as_ref(),
                data_dir: &data_dir,
                chat_connected,
                shared_store: matches!(opened, OpenedStore::Postgres(_)),
                chat_lease_lost: Box::pin(service.chat_lease_lost()),
            },
        )
        .await
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The approvals database's write batches, as `GET /metrics` reports them.
fn store_batches(store: &SqliteApprovalStore) -> StoreBatches {
    let times = store.batch_times();
    StoreBatches {
        cumulative: times.cumulative().collect(),
        total: times.total,
        writes: times.writes,
    }
}

/// This process's claim on the data directory: an exclusive `flock` on [`LOCK_FILE`], held until
/// it is dropped. The kernel also drops it when the process ends however it ends, so a crash never
/// leaves the directory locked. The file itself stays and is never deleted: deleting it while
/// another process opens it would let two in at once.
struct DataDirLock {
    _file: fs::File,
}

impl DataDirLock {
    /// Takes the lock, or refuses at once (never waits) when another `serve` holds it.
    fn take(data_dir: &Path) -> anyhow::Result<Self> {
        let path = data_dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .with_context(|| format!("cannot open lock file {}", path.display()))?;
        loop {
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(Self { _file: file }),
                Err(Errno::INTR) => continue,
                Err(Errno::WOULDBLOCK) => bail!(
                    "data directory {} is in use by another gatehouse serve; stop it first or pass \
                     another --data-dir",
                    data_dir.display()
                ),
                Err(errno) => {
                    return Err(std::io::Error::from(errno))
                        .with_context(|| format!("cannot lock {}", path.display()));
                }
            }
        }
    }
}

/// The start-up warning of a gateway without chat: what answers its approvals, and the fix.
fn no_route_warning(shared_store: bool) -> &'static str {
    if shared_store {
        "No approval route yet on this replica: no chat channel is configured here, so until an \
         operator client connects to this replica or to another replica of this database (or \
         another replica holds chat), every approval expires at once (no-approval-route) and \
         askFallback decides. Open the Control UI, or configure a chat channel (docs/channels/)."
    } else {
        "No approval route yet: no chat channel is configured, so until an operator opens the \
         Control UI (the login URL above) or another operator client connects, every approval \
         expires at once (no-approval-route) and askFallback decides. Open the Control UI, or \
         configure a chat channel (docs/channels/)."
    }
}

/// What a start tells the operator about, once it listens.
struct Started<'a> {
    /// The generated admin token, when no tokens are configured: its login URL is printed.
    admin_token: Option<&'a Secret>,
    data_dir: &'a Path,
    /// Whether any chat channel connected: without one, only an open Control UI (or another
    /// operator client) can answer approvals.
    chat_connected: bool,
    /// Whether the approvals database is shared with other replicas, whose operators and chat
    /// connection are routes for this one's requests too.
    shared_store: bool,
    /// Resolves, with why, if this gateway loses the chat lease it held: it then stops, and
    /// its supervisor starts it again as one waiting for the lease.
    chat_lease_lost: std::pin::Pin<Box<dyn Future<Output = String> + Send>>,
}

async fn serve(
    listener: tokio::net::TcpListener,
    state: GatewayState,
    channel_routes: axum::Router,
    started: Started<'_>,
) -> anyhow::Result<()> {
    let shutdown = shutdown_signal()?;
    let addr = listener
        .local_addr()
        .context("cannot read the listening address")?;
    tracing::info!(%addr, data_dir = %started.data_dir.display(), "Gatehouse listening.");
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "Gatehouse is listening on http://{addr}")?;
    if let Some(admin_token) = started.admin_token {
        writeln!(
            stdout,
            "Control UI login: http://{}/#token={}",
            browsable(addr),
            admin_token.expose()
        )?;
    }
    stdout.flush()?;
    drop(stdout);
    if !started.chat_connected {
        tracing::warn!("{}", no_route_warning(started.shared_store));
    }
    let (lease_lost, lost) = tokio::sync::oneshot::channel();
    let chat_lease_lost = started.chat_lease_lost;
    let shutdown = async move {
        tokio::select! {
            () = shutdown => {}
            why = chat_lease_lost => {
                let _ = lease_lost.send(why);
            }
        }
    };
    gatehouse_gateway::serve_with_routes(listener, state, channel_routes, shutdown)
        .await
        .context("the server failed")?;
    if let Ok(why) = lost.await {
        bail!(
            "stopped: this gateway lost the chat lease ({why}); another replica takes chat over, \
             and this one, started again, waits for the lease"
        );
    }
    tracing::info!("Gatehouse stopped.");
    Ok(())
}

/// Resolves on SIGTERM or ctrl-c; the handlers are installed before this returns, so a signal
/// that arrives while the listener starts is not lost.
fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => tracing::info!("Received SIGTERM."),
            _ = interrupt.recv() => tracing::info!("Received SIGINT."),
        }
    })
}

/// The address a browser on this host can open: a wildcard listen address is reached via
/// loopback.
fn browsable(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv4Addr::LOCALHOST.into(), addr.port())
        }
        IpAddr::V6(ip) if ip.is_unspecified() => {
            SocketAddr::new(Ipv6Addr::LOCALHOST.into(), addr.port())
        }
        _ => addr,
    }
}

/// Reads the admin token, creating it with mode 0600 on first start. A token file others can
/// read is refused rather than silently fixed: someone may already have copied it.
fn load_or_create_admin_token(path: &Path) -> anyhow::Result<Secret> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut file) => {
            let mut bytes = [0u8; 32];
            rand::rng().fill_bytes(&mut bytes);
            let token = URL_SAFE_NO_PAD.encode(bytes);
            file.write_all(token.as_bytes())
                .and_then(|()| file.write_all(b"\n"))
                .and_then(|()| file.sync_all())
                .with_context(|| format!("cannot write admin token file {}", path.display()))?;
            tracing::info!(path = %path.display(), "Generated the admin token.");
            Ok(Secret::new(token))
        }
        Err(error) if error.kind() == ErrorKind::AlreadyExists => read_admin_token(path),
        Err(error) => {
            Err(error).with_context(|| format!("cannot create admin token file {}", path.display()))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_replica_without_chat_is_told_that_other_replicas_routes_count() {
        let replica = no_route_warning(true);
        assert!(
            replica.contains("another replica of this database"),
            "{replica}"
        );
        let single = no_route_warning(false);
        assert!(!single.contains("replica"), "{single}");
        for warning in [replica, single] {
            assert!(warning.starts_with("No approval route yet"), "{warning}");
            assert!(warning.contains("no-approval-route"), "{warning}");
        }
    }

    #[test]
    fn generates_a_0600_token_once_and_reuses_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ADMIN_TOKEN_FILE);
        let first = load_or_create_admin_token(&path).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(first.expose().len(), 43);
        assert_eq!(load_or_create_admin_token(&path).unwrap(), first);
    }

    #[test]
    fn refuses_a_token_file_readable_by_others() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ADMIN_TOKEN_FILE);
        load_or_create_admin_token(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let error = load_or_create_admin_token(&path).unwrap_err().to_string();
        assert!(
            error.contains("accessible by group or others (mode 644)"),
            "{error}"
        );
    }

    #[test]
    fn refuses_a_short_token_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(ADMIN_TOKEN_FILE);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .unwrap();
        let error = load_or_create_admin_token(&path).unwrap_err().to_string();
        assert!(error.contains("fewer than 16 characters"), "{error}");
    }

    #[test]
    fn refuses_a_second_claim_on_the_data_directory_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::take(dir.path()).unwrap();
        let error = DataDirLock::take(dir.path()).err().unwrap().to_string();
        assert_eq!(
            error,
            format!(
                "data directory {} is in use by another gatehouse serve; stop it first or pass \
                 another --data-dir",
                dir.path().display()
            )
        );
        drop(first);
        DataDirLock::take(dir.path()).unwrap();
        assert_eq!(
            fs::metadata(dir.path().join(LOCK_FILE))
                .unwrap()
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
    }

    #[test]
    fn prints_a_loopback_login_address_for_wildcard_listens() {
        assert_eq!(
            browsable("0.0.0.0:1".parse().unwrap()),
            "127.0.0.1:1".parse().unwrap()
        );
        assert_eq!(
            browsable("[::]:1".parse().unwrap()),
            "[::1]:1".parse().unwrap()
        );
        assert_eq!(
            browsable("10.0.0.1:1".parse().unwrap()),
            "10.0.0.1:1".parse().unwrap()
        );
    }
}
