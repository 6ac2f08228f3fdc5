//! From the URL an operator writes to a connection pool: libpq's TLS settings mapped onto
//! tokio-postgres and rustls (docs/high-availability.md, "Client choice").
//!
//! tokio-postgres refuses libpq's `sslmode=verify-ca`/`verify-full` and `sslrootcert`, so they
//! are taken out of the URL here. rustls always verifies the server's chain and name, so every
//! mode but `disable` verifies: `require` and both `verify-*` modes insist on TLS, `prefer` (the
//! default, as in libpq) uses it when the server offers it. The roots are the `sslrootcert`
//! file's certificates, else the system's.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_postgres::config::SslMode;
use tokio_postgres::{AsyncMessage, Config, NoTls};

use crate::error::StoreError;

/// How to open a connection to the database a URL names: its settings and TLS, for the pool
/// and for the change feed's own connection.
#[derive(Clone)]
pub(super) enum Connector {
    /// `sslmode=disable`.
    Plain(Config),
    /// Every other mode: TLS through rustls, verified.
    Tls(Config, tokio_postgres_rustls::MakeRustlsConnect),
}

/// Names only the kind of connection: the settings hold the password.
impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Connector::Plain(_) => "Connector::Plain",
            Connector::Tls(..) => "Connector::Tls",
        })
    }
}

impl Connector {
    /// Reads `url` (a libpq URL; see the module's comment for its TLS settings).
    pub(super) fn from_url(url: &str, connect_timeout: Duration) -> Result<Connector, StoreError> {
        let settings = LibpqTls::take_from(url)?;
        let mut config: Config = settings
            .url
            .parse()
            .map_err(|error| StoreError::PostgresConfig(format!("{error}")))?;
        config.ssl_mode(settings.mode);
        config.connect_timeout(connect_timeout);
        if config.get_application_name().is_none() {
            config.application_name("gatehouse");
        }
        Ok(if settings.mode == SslMode::Disable {
            Connector::Plain(config)
        } else {
            let roots = roots(settings.root_cert.as_deref())?;
            Connector::Tls(config, rustls_connector(roots)?)
        })
    }

    /// A pool of at most `max_connections` connections, each waited for at most
    /// `connect_timeout`.
    pub(super) fn pool(
        &self,
        max_connections: usize,
        connect_timeout: Duration,
    ) -> Result<Pool, StoreError> {
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = match self.clone() {
            Connector::Plain(config) => Manager::from_config(config, NoTls, manager_config),
            Connector::Tls(config, tls) => Manager::from_config(config, tls, manager_config),
        };
        Pool::builder(manager)
            .max_size(max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(connect_timeout))
            .create_timeout(Some(connect_timeout))
            .build()
            .map_err(|error| StoreError::PostgresConfig(error.to_string()))
    }

    /// A connection of its own, whose notifications (`LISTEN`) arrive on the returned
    /// receiver; the receiver closes when the connection is lost.
    pub(super) async fn listening(
        &self,
    ) -> Result<
        (
            tokio_postgres::Client,
            mpsc::UnboundedReceiver<(String, String)>,
        ),
        StoreError,
    > {
        match self {
            Connector::Plain(config) => notifications(config.connect(NoTls).await?),
            Connector::Tls(config, tls) => notifications(config.connect(tls.clone()).await?),
        }
    }

    /// A connection of its own holding a lease, named `application_name` (so
    /// `pg_stat_activity` shows who holds it), with TCP keepalives on both ends: a holder whose
    /// host vanished is dropped by the server, and its lease released, within
    /// [`LEASE_KEEPALIVE`]'s bound rather than the kernel's two hours. The task driving it ends
    /// when the connection is lost.
    pub(super) async fn leasing(
        &self,
        application_name: &str,
    ) -> Result<(tokio_postgres::Client, tokio::task::JoinHandle<()>), StoreError> {
        let mut config = match self {
            Connector::Plain(config) | Connector::Tls(config, _) => config.clone(),
        };
        config
            .application_name(application_name)
            .options(LEASE_KEEPALIVE)
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(5))
            .keepalives_interval(Duration::from_secs(2))
            .keepalives_retries(3);
        match self {
            Connector::Plain(_) => Ok(driven(config.connect(NoTls).await?)),
            Connector::Tls(_, tls) => Ok(driven(config.connect(tls.clone()).await?)),
        }
    }
}

/// The server's side of a lease connection's keepalives: a silent peer is probed after 5 s
/// idle, every 2 s, and dropped after 3 unanswered probes (about 11 s), or when sent data
/// stays unacknowledged for 10 s.
const LEASE_KEEPALIVE: &str = "-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=2 \
     -c tcp_keepalives_count=3 -c tcp_user_timeout=10000";

/// Drives `connection` on a task of its own, ignoring what it says besides its end.
fn driven<S, T>(
    (client, connection): (tokio_postgres::Client, tokio_postgres::Connection<S, T>),
) -> (tokio_postgres::Client, tokio::task::JoinHandle<()>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let driving = tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "A chat lease's database connection failed.");
        }
    });
    (client, driving)
}

/// Drives `connection` on a task of its own, forwarding each notification's channel and
/// payload.
fn notifications<S, T>(
    (client, mut connection): (tokio_postgres::Client, tokio_postgres::Connection<S, T>),
) -> Result<
    (
        tokio_postgres::Client,
        mpsc::UnboundedReceiver<(String, String)>,
    ),
    StoreError,
>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (payloads, received) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(notice))) => {
                    let notice = (notice.channel().to_owned(), notice.payload().to_owned());
                    if payloads.send(notice).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => {
                    tracing::warn!(%error, "The approvals database's notification connection failed.");
                    return;
                }
                None => return,
            }
        }
    });
    Ok((client, received))
}

/// libpq's TLS settings, taken out of a URL tokio-postgres is then given.
#[derive(Debug, PartialEq, Eq)]
struct LibpqTls {
    url: String,
    mode: SslMode,
    root_cert: Option<String>,
}

impl LibpqTls {
    /// Splits `sslmode` and `sslrootcert` off a `postgres://` URL's query; any other form is
    /// passed on as written (tokio-postgres reads `key=value` strings itself).
    fn take_from(url: &str) -> Result<LibpqTls, StoreError> {
        let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let (base, query) = match url.split_once('?') {
            Some((base, query)) if is_url => (base, query),
            _ => {
                return Ok(LibpqTls {
                    url: url.to_owned(),
                    mode: SslMode::Prefer,
                    root_cert: None,
                });
            }
        };
        let mut mode = SslMode::Prefer;
        let mut root_cert = None;
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|pair| !pair.is_empty()) {
            match pair.split_once('=') {
                Some(("sslmode", value)) => {
                    mode = match value {
                        "disable" => SslMode::Disable,
                        "allow" | "prefer" => SslMode::Prefer,
                        "require" | "verify-ca" | "verify-full" => SslMode::Require,
                        other => {
                            return Err(StoreError::PostgresConfig(format!(
                                "unknown sslmode {other:?} (disable, prefer, require, \
                                 verify-ca or verify-full)"
                            )));
                        }
                    }
                }
                Some(("sslrootcert", value)) => root_cert = Some(percent_decode(value)?),
                _ => kept.push(pair),
            }
        }
        let url = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok(LibpqTls {
            url,
            mode,
            root_cert,
        })
    }
}

/// A URL query value with its `%XX` escapes decoded (paths with spaces are written so).
fn percent_decode(value: &str) -> Result<String, StoreError> {
    let invalid = || StoreError::PostgresConfig(format!("sslrootcert {value:?} is not valid"));
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte == b'%' {
            let hex = value.get(at + 1..at + 3).ok_or_else(invalid)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| invalid())?);
            at += 3;
        } else {
            out.push(byte);
            at += 1;
        }
    }
    String::from_utf8(out).map_err(|_| invalid())
}

/// The certificates a server's chain may end in: the `sslrootcert` file's, else the system's.
fn roots(root_cert: Option<&str>) -> Result<rustls::RootCertStore, StoreError> {
    let certificates: Vec<CertificateDer<'static>> = match root_cert {
        Some(path) => CertificateDer::pem_file_iter(Path::new(path))
            .and_then(|certificates| certificates.collect::<Result<_, _>>())
            .map_err(|error| StoreError::PostgresConfig(format!("sslrootcert {path}: {error}")))?,
        None => rustls_native_certs::load_native_certs().certs,
    };
    let mut roots = rustls::RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(certificates);
    if added == 0 {
        return Err(StoreError::PostgresConfig(match root_cert {
            Some(path) => format!("sslrootcert {path} holds no usable CA certificate"),
            None => "no system CA certificates to verify the server with; set sslrootcert or \
                     sslmode=disable"
                .to_owned(),
        }));
    }
    Ok(roots)
}

fn rustls_connector(
    roots: rustls::RootCertStore,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, StoreError> {
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|error| StoreError::PostgresConfig(error.to_string()))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_libpq_tls_settings_out_of_the_url() {
        let taken = LibpqTls::take_from(
            "postgres://gh:pw@db:5432/gatehouse?sslmode=verify-full&sslrootcert=/etc/ca%20x.pem&application_name=a",
        )
        .unwrap();
        assert_eq!(
            taken,
            LibpqTls {
                url: "postgres://gh:pw@db:5432/gatehouse?application_name=a".to_owned(),
                mode: SslMode::Require,
                root_cert: Some("/etc/ca x.pem".to_owned()),
            }
        );
        let plain = LibpqTls::take_from("postgres://db/gatehouse?sslmode=disable").unwrap();
        assert_eq!(plain.url, "postgres://db/gatehouse");
        assert_eq!(plain.mode, SslMode::Disable);
        assert_eq!(
            LibpqTls::take_from("postgres://db/g").unwrap().mode,
            SslMode::Prefer
        );
    }

    #[test]
    fn refuses_an_sslmode_it_does_not_know_rather_than_connecting_without_tls() {
        let refused = LibpqTls::take_from("postgres://db/g?sslmode=verify").unwrap_err();
        assert!(refused.to_string().contains("unknown sslmode"), "{refused}");
    }
}
