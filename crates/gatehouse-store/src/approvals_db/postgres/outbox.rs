//! The chat outbox and the button tokens on PostgreSQL: the SQLite store's rows and steps
//! (`approvals_db::outbox`), each step one conditional `UPDATE` that the server serializes per
//! row, so two gateways never both own an attempt; rows are decoded by the SQLite store's
//! code.

use std::sync::LazyLock;

use deadpool_postgres::Transaction;
use gatehouse_approvals::{
    DeliveredMessage, OutboxEntry, OutboxMessage, OutboxStep, StepOutcome, StoredButton,
};
use tokio_postgres::Row;

use super::super::outbox::{COLUMNS, RawEntry};
use super::super::rows::{limit_param, sql_ms};
use super::ops::Queries;
use crate::error::StoreError;

/// Records each message as queued; a key already stored is left alone.
pub(super) async fn plan(
    tx: &Transaction<'_>,
    messages: &[OutboxMessage],
    at_ms: u64,
) -> Result<(), StoreError> {
    for message in messages {
        let route = &message.route;
        tx.rows(
            "INSERT INTO chat_outbox (key, approval_id, kind, channel, account_id, direct, \
             target, thread_id, state, attempts, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'queued', 0, $9, $9) \
             ON CONFLICT (key) DO NOTHING",
            &[
                &message.key,
                &message.approval_id,
                &message.kind,
                &route.channel,
                &route.account_id,
                &route.direct,
                &route.target,
                &route.thread_id,
                &sql_ms(at_ms),
            ],
        )
        .await?;
    }
    Ok(())
}

/// Applies `step` to `key` if it is in the state the step starts from.
pub(super) async fn record(
    tx: &Transaction<'_>,
    key: &str,
    step: &OutboxStep,
    at_ms: u64,
) -> Result<StepOutcome, StoreError> {
    let at = sql_ms(at_ms);
    let changed = match step {
        OutboxStep::Sending {
            attempt,
            claimant,
            lease_until_ms,
        } => {
            tx.rows(
                "UPDATE chat_outbox SET state = 'sending', attempts = $2::bigint, claimed_by = $3, \
                 lease_until_ms = $4, updated_at_ms = $5 \
                 WHERE key = $1 AND attempts = $2::bigint - 1 AND (state = 'queued' OR (state = 'sending' \
                 AND (lease_until_ms < $5 OR claimed_by = $3))) RETURNING 1",
                &[
                    &key,
                    &i64::from(*attempt),
                    claimant,
                    &sql_ms(*lease_until_ms),
                    &at,
                ],
            )
            .await?
        }
        OutboxStep::Delivered { attempt, message } => {
            let changed = tx
                .rows(
                    "UPDATE chat_outbox SET state = 'delivered', chat_id = $3, message_id = $4, \
                     last_error = NULL, last_error_at_ms = NULL, retry_at_ms = NULL, \
                     claimed_by = NULL, lease_until_ms = NULL, updated_at_ms = $5 \
                     WHERE key = $1 AND state = 'sending' AND attempts = $2 RETURNING 1",
                    &[
                        &key,
                        &i64::from(*attempt),
                        &message.chat_id,
                        &message.message_id,
                        &at,
                    ],
                )
                .await?;
            if !changed.is_empty() {
                remember_with_approval(tx, key, message).await?;
            }
            changed
        }
        OutboxStep::SendFailed {
            attempt,
            error,
            retry_at_ms,
        } => {
            tx.rows(
                "UPDATE chat_outbox SET state = 'queued', last_error = $3, last_error_at_ms = $4, \
                 retry_at_ms = $5, claimed_by = NULL, lease_until_ms = NULL, updated_at_ms = $4 \
                 WHERE key = $1 AND state = 'sending' AND attempts = $2 RETURNING 1",
                &[
                    &key,
                    &i64::from(*attempt),
                    error,
                    &at,
                    &sql_ms(*retry_at_ms),
                ],
            )
            .await?
        }
        OutboxStep::Skipped => {
            tx.rows(
                "UPDATE chat_outbox SET state = 'skipped', claimed_by = NULL, \
                 lease_until_ms = NULL, retry_at_ms = NULL, updated_at_ms = $2 \
                 WHERE key = $1 AND state IN ('queued', 'sending') RETURNING 1",
                &[&key, &at],
            )
            .await?
        }
        OutboxStep::Lost { reason } => {
            tx.rows(
                "UPDATE chat_outbox SET state = 'lost', last_error = $2, last_error_at_ms = $3, \
                 claimed_by = NULL, lease_until_ms = NULL, retry_at_ms = NULL, \
                 updated_at_ms = $3 \
                 WHERE key = $1 AND state IN ('queued', 'sending', 'delivered') RETURNING 1",
                &[&key, reason, &at],
            )
            .await?
        }
        OutboxStep::Finished => {
            tx.rows(
                "UPDATE chat_outbox SET state = 'finished', last_error = NULL, \
                 last_error_at_ms = NULL, retry_at_ms = NULL, updated_at_ms = $2 \
                 WHERE key = $1 AND state = 'delivered' RETURNING 1",
                &[&key, &at],
            )
            .await?
        }
        OutboxStep::FinishFailed { error, retry_at_ms } => {
            tx.rows(
                "UPDATE chat_outbox SET last_error = $2, last_error_at_ms = $3, retry_at_ms = $4, \
                 updated_at_ms = $3 WHERE key = $1 AND state = 'delivered' RETURNING 1",
                &[&key, error, &at, &sql_ms(*retry_at_ms)],
            )
            .await?
        }
    };
    Ok(if changed.len() == 1 {
        StepOutcome::Applied
    } else {
        StepOutcome::Refused
    })
}

/// A delivered approval message is kept with its approval too, as on SQLite; origin notices
/// are not (they show no command, and a record's messages say where an approval was shown).
async fn remember_with_approval(
    tx: &Transaction<'_>,
    key: &str,
    message: &DeliveredMessage,
) -> Result<(), StoreError> {
    tx.rows(
        "INSERT INTO approval_messages (approval_id, channel, account_id, chat_id, message_id, \
         thread_id) SELECT approval_id, $2, $3, $4, $5, $6 FROM chat_outbox \
         WHERE key = $1 AND approval_id IS NOT NULL AND kind <> 'notice' \
         ON CONFLICT DO NOTHING",
        &[
            &key,
            &message.channel,
            &message.account_id,
            &message.chat_id,
            &message.message_id,
            &message.thread_id,
        ],
    )
    .await?;
    Ok(())
}

/// Every message not done, oldest first.
pub(super) async fn open(q: &impl Queries) -> Result<Vec<OutboxEntry>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {COLUMNS} FROM chat_outbox \
             WHERE state IN ('queued', 'sending', 'delivered') ORDER BY seq"
        )
    });
    entries(&q.rows(&SQL, &[]).await?)
}

/// Messages not done whose last step failed, and those lost since `lost_since_ms`, newest
/// change first.
pub(super) async fn troubled(
    q: &impl Queries,
    lost_since_ms: u64,
    limit: usize,
) -> Result<Vec<OutboxEntry>, StoreError> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "SELECT {COLUMNS} FROM chat_outbox WHERE last_error IS NOT NULL \
             AND (state IN ('queued', 'sending', 'delivered') \
                  OR (state = 'lost' AND updated_at_ms >= $1)) \
             ORDER BY updated_at_ms DESC, seq DESC LIMIT $2"
        )
    });
    let rows = q
        .rows(&SQL, &[&sql_ms(lost_since_ms), &limit_param(limit)])
        .await?;
    entries(&rows)
}

fn entries(rows: &[Row]) -> Result<Vec<OutboxEntry>, StoreError> {
    rows.iter().map(entry).collect()
}

fn entry(row: &Row) -> Result<OutboxEntry, StoreError> {
    RawEntry {
        key: row.try_get(0)?,
        approval_id: row.try_get(1)?,
        kind: row.try_get(2)?,
        channel: row.try_get(3)?,
        account_id: row.try_get(4)?,
        direct: row.try_get(5)?,
        target: row.try_get(6)?,
        thread_id: row.try_get(7)?,
        state: row.try_get(8)?,
        attempts: row.try_get(9)?,
        chat_id: row.try_get(10)?,
        message_id: row.try_get(11)?,
        last_error: row.try_get(12)?,
        last_error_at_ms: row.try_get(13)?,
        retry_at_ms: row.try_get(14)?,
        claimed_by: row.try_get(15)?,
        lease_until_ms: row.try_get(16)?,
        created_at_ms: row.try_get(17)?,
        updated_at_ms: row.try_get(18)?,
    }
    .decode()
}

/// Records `button`, replacing an earlier record of its key (its delivery bound later).
pub(super) async fn save_button(
    tx: &Transaction<'_>,
    button: &StoredButton,
) -> Result<(), StoreError> {
    let delivered = button.delivered_in.as_ref();
    tx.rows(
        "INSERT INTO chat_buttons (key, secret, approval_id, decision, channel, expires_at_ms, \
         in_channel, in_account_id, in_chat_id, in_message_id, in_thread_id) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) \
         ON CONFLICT (key) DO UPDATE SET in_channel = excluded.in_channel, \
         in_account_id = excluded.in_account_id, in_chat_id = excluded.in_chat_id, \
         in_message_id = excluded.in_message_id, in_thread_id = excluded.in_thread_id",
        &[
            &button.key,
            &button.secret,
            &button.approval_id,
            &button.decision,
            &button.channel,
            &sql_ms(button.expires_at_ms),
            &delivered.map(|message| message.channel.as_str()),
            &delivered.and_then(|message| message.account_id.as_deref()),
            &delivered.map(|message| message.chat_id.as_str()),
            &delivered.map(|message| message.message_id.as_str()),
            &delivered.and_then(|message| message.thread_id.as_deref()),
        ],
    )
    .await?;
    Ok(())
}

/// The buttons of approvals still pending, as [`button`] reads them.
const LIVE_BUTTONS: &str = "SELECT b.key, b.secret, b.approval_id, b.decision, b.channel, \
     b.expires_at_ms, b.in_channel, b.in_account_id, b.in_chat_id, b.in_message_id, \
     b.in_thread_id FROM chat_buttons b JOIN approvals a ON a.id = b.approval_id \
     WHERE a.state = 'pending'";

/// Every button of an approval still pending.
pub(super) async fn live_buttons(q: &impl Queries) -> Result<Vec<StoredButton>, StoreError> {
    let rows = q
        .rows(&format!("{LIVE_BUTTONS} ORDER BY b.key"), &[])
        .await?;
    rows.iter().map(button).collect()
}

/// The button `key`, if its approval is still pending.
pub(super) async fn live_button(
    q: &impl Queries,
    key: &str,
) -> Result<Option<StoredButton>, StoreError> {
    let rows = q
        .rows(&format!("{LIVE_BUTTONS} AND b.key = $1"), &[&key])
        .await?;
    rows.first().map(button).transpose()
}

/// The pending approval whose copy was delivered as `message`. Read through the pending
/// approvals (few) and each one's messages by the unique index it leads.
pub(super) async fn pending_card_approval(
    q: &impl Queries,
    message: &DeliveredMessage,
) -> Result<Option<String>, StoreError> {
    let rows = q
        .rows(
            "SELECT m.approval_id FROM approvals a JOIN approval_messages m \
             ON m.approval_id = a.id WHERE a.state = 'pending' AND m.channel = $1 \
             AND coalesce(m.account_id, '') = coalesce($2, '') AND m.chat_id = $3 \
             AND m.message_id = $4 LIMIT 1",
            &[
                &message.channel,
                &message.account_id,
                &message.chat_id,
                &message.message_id,
            ],
        )
        .await?;
    Ok(rows
        .first()
        .map(|row| row.try_get::<_, String>(0))
        .transpose()?)
}

fn button(row: &Row) -> Result<StoredButton, StoreError> {
    let in_channel: Option<String> = row.try_get(6)?;
    let in_chat_id: Option<String> = row.try_get(8)?;
    let in_message_id: Option<String> = row.try_get(9)?;
    let delivered_in = match (in_channel, in_chat_id, in_message_id) {
        (Some(channel), Some(chat_id), Some(message_id)) => Some(DeliveredMessage {
            channel,
            account_id: row.try_get(7)?,
            chat_id,
            message_id,
            thread_id: row.try_get(10)?,
        }),
        _ => None,
    };
    let expires_at_ms: i64 = row.try_get(5)?;
    Ok(StoredButton {
        key: row.try_get(0)?,
        secret: row.try_get(1)?,
        approval_id: row.try_get(2)?,
        decision: row.try_get(3)?,
        channel: row.try_get(4)?,
        expires_at_ms: u64::try_from(expires_at_ms).unwrap_or(0),
        delivered_in,
    })
}
