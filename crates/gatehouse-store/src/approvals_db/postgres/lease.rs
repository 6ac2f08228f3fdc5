//! Chat leases: a session-level advisory lock held on a connection of its own.
//!
//! The lock lives exactly as long as the session holding it, so the server itself releases
//! it when the holder's process dies (its socket closes at once) or its host vanishes (the
//! lease connection's keepalives drop the session in about 11 s). The holder checks its
//! connection every second and gives the lease up when a check fails or stays unanswered for
//! 3 s — before the server could let another gateway take it over. No row, no clock and no
//! renewal are involved: a lease row with an expiry would have to trust every replica's clock
//! and be renewed by writes. The lock's holder is read from `pg_locks`, named by the lease
//! connection's `application_name`.

use std::time::Duration;

use gatehouse_approvals::HeldLease;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::connect::Connector;
use super::ops::Queries;
use crate::error::StoreError;

/// The first key of every chat lease's lock (`"ghch"`), apart from other applications' keys
/// and from the migration lock.
const LEASE_CLASS: i32 = 0x6768_6368;

/// How a lease connection names itself, before its holder's name.
const HOLDER_PREFIX: &str = "gatehouse lease ";

/// How often a waiting gateway tries the lock again: the failover time once the holder's
/// session is gone.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// How often the holder checks its connection, and how long a check may take.
const CHECK_EVERY: Duration = Duration::from_secs(1);
const CHECK_TIMEOUT: Duration = Duration::from_secs(3);

/// The second key of the lease `name`'s lock (FNV-1a, kept non-negative so `pg_locks` shows
/// it as written). Two names sharing a key share a holder, which is still one at a time.
fn lease_key(name: &str) -> i32 {
    let hash = name.bytes().fold(0x811c_9dc5_u32, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    });
    i32::try_from(hash & 0x7fff_ffff).unwrap_or(0)
}

/// Waits until `holder` holds the lease `name`; see the module docs.
pub(super) async fn acquire(connector: Connector, name: String, holder: String) -> HeldLease {
    let key = lease_key(&name);
    let application_name = format!("{HOLDER_PREFIX}{holder}");
    loop {
        match connector.leasing(&application_name).await {
            Ok((client, driving)) => loop {
                let tried = client
                    .query_one("SELECT pg_try_advisory_lock($1, $2)", &[&LEASE_CLASS, &key])
                    .await;
                match tried.and_then(|row| row.try_get::<_, bool>(0)) {
                    Ok(true) => {
                        tracing::info!(lease = %name, "This gateway holds the chat lease.");
                        return held(client, driving);
                    }
                    Ok(false) if !driving.is_finished() => tokio::time::sleep(RETRY_EVERY).await,
                    Ok(false) => break,
                    Err(error) => {
                        tracing::warn!(lease = %name, %error, "Could not try the chat lease.");
                        break;
                    }
                }
            },
            Err(error) => {
                tracing::warn!(lease = %name, %error, "Could not connect to wait for the chat lease.");
            }
        }
        tokio::time::sleep(RETRY_EVERY).await;
    }
}

/// The lease held on `client`'s session, watched until it is lost or no longer wanted.
fn held(client: tokio_postgres::Client, driving: JoinHandle<()>) -> HeldLease {
    let (lost, hears) = oneshot::channel::<String>();
    tokio::spawn(async move {
        let mut lost = lost;
        tokio::select! {
            why = watch(&client, driving) => {
                let _ = lost.send(why);
            }
            // The holder let go: the session ends with the client, and the lock with it.
            () = lost.closed() => {}
        }
    });
    HeldLease {
        lost: Box::pin(async move {
            hears
                .await
                .unwrap_or_else(|_| "the lease's watcher stopped".to_owned())
        }),
    }
}

/// Checks the lease's session until it fails; answers why.
async fn watch(client: &tokio_postgres::Client, mut driving: JoinHandle<()>) -> String {
    let mut every = tokio::time::interval(CHECK_EVERY);
    loop {
        tokio::select! {
            _ = &mut driving => return "its database connection closed".to_owned(),
            _ = every.tick() => {
                match tokio::time::timeout(CHECK_TIMEOUT, client.simple_query("SELECT 1")).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) => return format!("its database connection failed: {error}"),
                    Err(_) => {
                        return format!(
                            "its database connection did not answer for {} s",
                            CHECK_TIMEOUT.as_secs()
                        );
                    }
                }
            }
        }
    }
}

/// The gateway holding the lease `name` now, by the name it acquired it under.
pub(super) async fn holder(q: &impl Queries, name: &str) -> Result<Option<String>, StoreError> {
    let rows = q
        .rows(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 \
             AND l.classid::bigint = $1 AND l.objid::bigint = $2 \
             AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            &[&i64::from(LEASE_CLASS), &i64::from(lease_key(name))],
        )
        .await?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let application_name: Option<String> = row.try_get(0)?;
    Ok(application_name.map(|named| {
        named
            .strip_prefix(HOLDER_PREFIX)
            .map_or(named.clone(), str::to_owned)
    }))
}

#[cfg(test)]
mod tests {
    use super::lease_key;

    #[test]
    fn lease_keys_are_stable_and_non_negative() {
        assert_eq!(lease_key("chat"), lease_key("chat"));
        assert_ne!(lease_key("telegram"), lease_key("discord"));
        for name in ["", "chat", "telegram", "slack:T0123"] {
            assert!(lease_key(name) >= 0);
        }
    }
}
