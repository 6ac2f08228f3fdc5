//! One cluster per test process, one database per test: `initdb` costs about a second, a
//! database a few tens of milliseconds.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use super::cluster::TempCluster;
use super::error::ClusterError;

/// The process's shared cluster, or why it could not start. It is never dropped; its
/// guardian stops it and removes its files when the process exits.
static SHARED: OnceLock<Result<TempCluster, String>> = OnceLock::new();

/// Numbers the databases of this process.
static NEXT_DATABASE: AtomicU32 = AtomicU32::new(1);

/// A fresh, empty database of its own on the process's shared cluster (started on first
/// use), dropped again when the returned value is. The default way for a test to get a
/// database; tests that stop, crash or restart the server need a [`TempCluster`] of their
/// own instead, which is why this gives no access to the server's life.
pub fn database() -> Result<TempDatabase, ClusterError> {
    let cluster = shared_cluster()?;
    let name = format!("test_{}", NEXT_DATABASE.fetch_add(1, Ordering::Relaxed));
    let url = cluster.create_database(&name)?;
    Ok(TempDatabase { cluster, name, url })
}

/// The process's shared cluster, started by the first caller (the others wait for it).
pub fn shared_cluster() -> Result<&'static TempCluster, ClusterError> {
    match SHARED.get_or_init(|| TempCluster::start().map_err(|error| error.to_string())) {
        Ok(cluster) => Ok(cluster),
        Err(error) => Err(ClusterError::SharedCluster(error.clone())),
    }
}

/// One test's database on the shared cluster; dropped (connections and all) on drop.
#[derive(Debug)]
pub struct TempDatabase {
    cluster: &'static TempCluster,
    name: String,
    url: String,
}

impl TempDatabase {
    /// `postgres://postgres:<password>@127.0.0.1:<port>/<name>`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name (`test_<n>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The shared cluster it lives on, for its port, socket and log.
    pub fn cluster(&self) -> &'static TempCluster {
        self.cluster
    }
}

impl Drop for TempDatabase {
    fn drop(&mut self) {
        if let Err(error) = self.cluster.drop_database(&self.name) {
            tracing::warn!(database = %self.name, %error, "Could not drop a test database.");
        }
    }
}
