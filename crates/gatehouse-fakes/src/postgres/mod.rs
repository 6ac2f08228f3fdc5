//! A real PostgreSQL server that tests start themselves, for the replicated approval store
//! (issue 34): nothing to install beyond Debian's `postgresql` package, nothing to configure.
//!
//! [`database`] gives a test a fresh database on a cluster shared by the whole test process
//! (started on first use); [`TempCluster::start`] gives a test a cluster of its own, whose
//! server it can stop, kill (SIGKILL, as in a crash) and start again with its data kept.
//!
//! **Invariants.** A cluster listens only on 127.0.0.1 and a Unix socket in its own
//! temporary directory, on a port nobody else was using. It never runs as root: as root, its
//! programs run as Debian's `postgres` account (or `nobody`). It leaves nothing behind — no
//! process, directory or shared memory — when it is dropped, when a test panics, or when the
//! test process exits without dropping it (a guardian process cleans up). It trades
//! durability for speed (`fsync = off`): a crash of the server keeps committed data, a crash
//! of the machine may not.
//!
//! ```no_run
//! # fn demo() -> Result<(), gatehouse_fakes::postgres::ClusterError> {
//! let db = gatehouse_fakes::postgres::database()?; // a fresh database, shared server
//! let url = db.url(); // postgres://postgres:<password>@127.0.0.1:<port>/test_1
//! # drop(url);
//! let mut cluster = gatehouse_fakes::postgres::TempCluster::start()?; // a server of its own
//! cluster.kill()?; // the database crashed
//! cluster.start_again()?; // and came back, same port, same data
//! # Ok(()) }
//! ```

mod account;
mod binaries;
mod cluster;
mod error;
mod guardian;
mod processes;
mod shared;

pub use cluster::{DATABASE, SUPERUSER, TempCluster};
pub use error::ClusterError;
pub use shared::{TempDatabase, database, shared_cluster};
