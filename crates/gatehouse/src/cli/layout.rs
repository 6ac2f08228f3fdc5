//! Where `serve` listens and keeps its state, and how the service is set up from it: shared by
//! `serve`, which starts the service, and the offline commands (`doctor`, `audit`), which read
//! the same files without the server.
//!
//! The data directory holds `exec-approvals.json`, the approvals database, the audit log, the
//! session bindings and (without configured tokens) the generated admin token.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, bail};
use gatehouse_approvals::ApprovalStore;
use gatehouse_config::model::{StoreConfig, StoreKind};
use gatehouse_config::{Config, SecretSource};
use gatehouse_policy::files::ProtectedPath;
use gatehouse_sandbox::HostContext;
use gatehouse_service::{ExecLimits, ServiceError, ServiceSetup};
use gatehouse_store::approvals_db::{
    PendingCaps, PgApprovalStore, PgOptions, SqliteApprovalStore, SqliteOptions,
};
use gatehouse_store::approvals_file::{EXEC_APPROVALS_DOCUMENT, Snapshot};

/// Where the embedded default listens: loopback only, so a fresh install is not reachable from
/// the network.
pub(crate) const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 18790);

/// The admin token's file name inside the data directory.
pub(crate) const ADMIN_TOKEN_FILE: &str = "admin.token";
/// `exec-approvals.json` inside the data directory.
pub(crate) const APPROVALS_FILE: &str = "exec-approvals.json";
/// Session bindings and `/elevated` levels inside the data directory.
pub(crate) const SESSIONS_FILE: &str = "sessions.json";
/// The approvals database inside the data directory.
const DATABASE_FILE: &str = "approvals.db";
/// The file a running `serve` holds an exclusive `flock` on, inside the data directory.
pub(crate) const LOCK_FILE: &str = "gatehouse.lock";

/// The service's state in `data_dir`, as `serve` starts it and `doctor` checks it, with the
/// host facts a sandboxed run needs.
pub(crate) fn service_setup(
    config: Config,
    config_file: Option<&Path>,
    data_dir: &Path,
    limits: ExecLimits,
    sandbox_host: Option<HostContext>,
) -> ServiceSetup {
    let protected = protected_paths(&config, config_file, data_dir);
    ServiceSetup {
        config,
        approvals_file: data_dir.join(APPROVALS_FILE),
        audit_log: data_dir.join(gatehouse_store::audit::LOG_FILE_NAME),
        limits,
        sandbox_host,
        protected,
    }
}

/// The gateway's own files, which no tool call may read or write and no sandboxed run may
/// see: the config file (it holds the policy and perhaps secrets) and every secret file the
/// config names. One list for the tool gate and the sandbox, so neither can miss a file the
/// other hides.
pub(crate) fn own_files(config: &Config, config_file: Option<&Path>) -> Vec<ProtectedPath> {
    let config_file = config_file.map(|path| ProtectedPath {
        path: std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
        what: "the gateway's config file".to_owned(),
    });
    let secret_files = config
        .secrets()
        .into_iter()
        .filter_map(|secret| match secret.source {
            SecretSource::File(path) => Some(ProtectedPath {
                path,
                what: format!("the secret file of {}", secret.key),
            }),
            SecretSource::Inline(_) | SecretSource::Env(_) => None,
        });
    config_file.into_iter().chain(secret_files).collect()
}

/// What no tool call may read or write: the data directory and [`own_files`].
pub(crate) fn protected_paths(
    config: &Config,
    config_file: Option<&Path>,
    data_dir: &Path,
) -> Vec<ProtectedPath> {
    let data_dir = ProtectedPath {
        path: data_dir.to_path_buf(),
        what: "the gateway's data directory".to_owned(),
    };
    std::iter::once(data_dir)
        .chain(own_files(config, config_file))
        .collect()
}

/// The approvals store `gateway.store` chose, opened: what `serve` hands the service.
pub(crate) enum OpenedStore {
    /// SQLite (the default), whose write batches `GET /metrics` reports.
    Sqlite(Arc<SqliteApprovalStore>),
    /// A PostgreSQL database other gateways may share.
    Postgres(Arc<PgApprovalStore>),
}

impl OpenedStore {
    /// The store, as the service takes it.
    pub(crate) fn store(&self) -> Arc<dyn ApprovalStore> {
        match self {
            OpenedStore::Sqlite(store) => Arc::clone(store) as Arc<dyn ApprovalStore>,
            OpenedStore::Postgres(store) => Arc::clone(store) as Arc<dyn ApprovalStore>,
        }
    }
}

/// Opens the approvals database `gateway.store` names (absent: SQLite in `data_dir`); a
/// PostgreSQL database is migrated on the way.
pub(crate) async fn open_store(
    store: Option<&StoreConfig>,
    data_dir: &Path,
    pending_caps: PendingCaps,
) -> Result<OpenedStore, ServiceError> {
    match store {
        Some(store) if store.kind == StoreKind::Postgres => {
            let url = postgres_url(store)?;
            let options = PgOptions {
                max_connections: store
                    .max_connections
                    .unwrap_or(StoreConfig::DEFAULT_MAX_CONNECTIONS)
                    .try_into()
                    .unwrap_or(usize::MAX),
                // Each gateway counts its own; on a shared database the caps must hold over all.
                pending_caps: Some(pending_caps),
                ..PgOptions::default()
            };
            let opened = PgApprovalStore::connect(url.expose(), options)
                .await
                .map_err(ServiceError::store)?;
            Ok(OpenedStore::Postgres(Arc::new(opened)))
        }
        _ => SqliteApprovalStore::open(sqlite_path(store, data_dir), SqliteOptions::default())
            .map(|opened| OpenedStore::Sqlite(Arc::new(opened)))
            .map_err(ServiceError::store),
    }
}

/// The SQLite database file: `gateway.store.path` (relative to `data_dir`), else
/// [`DATABASE_FILE`] in it.
fn sqlite_path(store: Option<&StoreConfig>, data_dir: &Path) -> PathBuf {
    let configured = store.and_then(|store| store.path.as_deref());
    data_dir.join(configured.unwrap_or(Path::new(DATABASE_FILE)))
}

/// The PostgreSQL URL from `url`, `urlFile` or `urlEnv`; a loosely readable file is logged,
/// as every secret file is.
fn postgres_url(store: &StoreConfig) -> Result<gatehouse_config::Secret, ServiceError> {
    let source = store.url_source().ok_or_else(|| {
        ServiceError::store(
            "gateway.store: `kind: \"postgres\"` needs `url`, `urlFile` or `urlEnv`",
        )
    })?;
    let key = format!(
        "gateway.store.{}",
        source.key_name(["url", "urlFile", "urlEnv"])
    );
    let resolved = source.resolve(&key).map_err(ServiceError::store)?;
    if let Some(warning) = &resolved.warning {
        tracing::warn!("{warning}");
    }
    Ok(resolved.secret)
}

/// What [`open_store`] would refuse in `data_dir`'s SQLite approvals database (a file that is
/// no database, a schema newer than this build), found without writing anything, worded as
/// `serve`'s refusal. A PostgreSQL store is not checked here yet.
pub(crate) fn check_store(
    store: Option<&StoreConfig>,
    data_dir: &Path,
) -> Result<(), ServiceError> {
    if store.is_some_and(|store| store.kind == StoreKind::Postgres) {
        return Ok(());
    }
    SqliteApprovalStore::check(&sqlite_path(store, data_dir))
        .map(drop)
        .map_err(ServiceError::store)
}

/// How far the database's clock may be from this host's before `doctor` warns: each replica
/// dates approvals and their expiries by its own clock.
const CLOCK_SKEW_WARN_MS: i64 = 1_000;

/// What `doctor` says of a PostgreSQL store: a line to print, and a risk, or why `serve`
/// would refuse it (unreachable, a bad URL, a schema newer than this build). `None` for
/// SQLite, which [`check_store`] covers.
pub(crate) fn review_database(
    store: Option<&StoreConfig>,
) -> Option<Result<(String, Option<String>), ServiceError>> {
    let store = store.filter(|store| store.kind == StoreKind::Postgres)?;
    Some(review_postgres(store))
}

fn review_postgres(store: &StoreConfig) -> Result<(String, Option<String>), ServiceError> {
    let url = postgres_url(store)?;
    let checked = offline_runtime()?
        .block_on(PgApprovalStore::check(url.expose(), PgOptions::default()))
        .map_err(ServiceError::store)?;
    let skew_ms = checked.server_now_ms - i64::try_from(super::now_ms()).unwrap_or(i64::MAX);
    let line = match checked.schema_version {
        0 => "approvals database (PostgreSQL): reachable, not migrated yet (serve migrates it)"
            .to_owned(),
        version => format!(
            "approvals database (PostgreSQL): reachable, schema version {version} of {}",
            checked.supported_version
        ),
    };
    let skew = (skew_ms.abs() > CLOCK_SKEW_WARN_MS).then(|| {
        format!(
            "the approvals database's clock is {skew_ms} ms off this host's: replicas date \
             approvals and expire them by their own clocks; keep every replica and the database \
             on NTP"
        )
    });
    let upgrade = checked.stop_every_replica.map(|(migration, brings)| {
        format!(
            "this build's first start migrates the approvals database across migration \
             {migration} ({brings}), which replicas of the previous build cannot run across: \
             stop every replica, then start the upgraded ones (a start waits {} s for the \
             others to disconnect, then refuses)",
            PgOptions::DEFAULT_UPGRADE_WAIT.as_secs()
        )
    });
    let warning = [skew, upgrade]
        .into_iter()
        .flatten()
        .reduce(|first, second| format!("{first}; {second}"));
    Ok((line, warning))
}

/// The allowlists replicas share, read once from a PostgreSQL store for `doctor` (writing
/// nothing); `None` for SQLite, where they are the data directory's file.
pub(crate) fn shared_approvals(
    store: Option<&StoreConfig>,
) -> Option<Result<Snapshot, ServiceError>> {
    let store = store.filter(|store| store.kind == StoreKind::Postgres)?;
    let read = || {
        let url = postgres_url(store)?;
        let bytes = offline_runtime()?
            .block_on(PgApprovalStore::read_document(
                url.expose(),
                PgOptions::default(),
                EXEC_APPROVALS_DOCUMENT,
            ))
            .map_err(ServiceError::store)?;
        Snapshot::of_shared_document(bytes.as_deref()).map_err(ServiceError::store)
    };
    Some(read())
}

/// A runtime for an offline command's one database call.
fn offline_runtime() -> Result<tokio::runtime::Runtime, ServiceError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServiceError::store)
}

/// The address to listen on: the flag, else `gateway.listen`, else [`DEFAULT_LISTEN`]; `doctor`
/// reports the same error for an address this refuses.
pub(crate) fn listen_address(
    flag: Option<SocketAddr>,
    configured: Option<&str>,
) -> anyhow::Result<SocketAddr> {
    match (flag, configured) {
        (Some(listen), _) => Ok(listen),
        (None, Some(text)) => text.parse().with_context(|| {
            format!("`gateway.listen`: {text:?} is not an address like 127.0.0.1:18790")
        }),
        (None, None) => Ok(DEFAULT_LISTEN),
    }
}

/// The data directory when none is given: `$XDG_STATE_HOME/gatehouse`, else
/// `~/.local/state/gatehouse`.
pub(crate) fn default_data_dir() -> anyhow::Result<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    if let Some(state) = absolute("XDG_STATE_HOME") {
        return Ok(state.join("gatehouse"));
    }
    if let Some(home) = absolute("HOME") {
        return Ok(home.join(".local/state/gatehouse"));
    }
    bail!("cannot find a data directory: neither XDG_STATE_HOME nor HOME is set; pass --data-dir")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listens_on_the_flag_then_gateway_listen_then_the_default() {
        let flag: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let check = |flag, configured, expected: SocketAddr| {
            assert_eq!(listen_address(flag, configured).unwrap(), expected);
        };
        check(Some(flag), Some("127.0.0.1:2"), flag);
        check(None, Some("127.0.0.1:2"), "127.0.0.1:2".parse().unwrap());
        check(None, None, DEFAULT_LISTEN);
        let error = listen_address(None, Some("nowhere"))
            .unwrap_err()
            .to_string();
        assert_eq!(
            error,
            "`gateway.listen`: \"nowhere\" is not an address like 127.0.0.1:18790"
        );
    }
}
