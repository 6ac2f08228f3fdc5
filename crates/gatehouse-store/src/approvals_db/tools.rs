//! Tool approvals and the grants their allow-always answers made: how a [`ToolRequest`] is kept
//! in the `tool_json` column, the `tool_grants` rows, and the writes and reads of grants.
//!
//! The JSON is this store's own format (the policy's types are not `Serialize`), decoded
//! strictly: a value this build cannot read is a corrupt row, never a guess.

use std::collections::BTreeSet;
use std::path::PathBuf;

use gatehouse_approvals::{ApprovalRecord, Severity, StoredGrant, ToolRequest};
use gatehouse_policy::ApprovalDecision;
use gatehouse_policy::tool_call::{Grant, GrantScope};
use rusqlite::{Connection, Row, params};
use serde::{Deserialize, Serialize};

use super::rows::{sql_ms, stored_ms};
use crate::error::StoreError;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ToolJson {
    tool: String,
    call_id: Option<String>,
    params: Vec<(String, String)>,
    title: Option<String>,
    description: Option<String>,
    severity: String,
    reasons: Vec<String>,
    grant: Option<GrantJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrantJson {
    tool: String,
    scope: String,
    values: Vec<String>,
}

/// The `tool_json` of a request (`None` for exec approvals).
pub(super) fn encode_tool(tool: Option<&ToolRequest>) -> Result<Option<String>, StoreError> {
    let Some(tool) = tool else {
        return Ok(None);
    };
    let json = ToolJson {
        tool: tool.tool.clone(),
        call_id: tool.call_id.clone(),
        params: tool.params.clone(),
        title: tool.title.clone(),
        description: tool.description.clone(),
        severity: tool.severity.as_str().to_owned(),
        reasons: tool.reasons.clone(),
        grant: tool.grant.as_ref().map(grant_json).transpose()?,
    };
    serde_json::to_string(&json)
        .map(Some)
        .map_err(|source| StoreError::Encode {
            what: "tool request",
            source,
        })
}

/// A stored `tool_json` read back; the error says what is wrong with it.
pub(super) fn decode_tool(text: &str) -> Result<ToolRequest, String> {
    let json: ToolJson = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(ToolRequest {
        tool: json.tool,
        call_id: json.call_id,
        params: json.params,
        title: json.title,
        description: json.description,
        severity: json
            .severity
            .parse::<Severity>()
            .map_err(|e| e.to_string())?,
        reasons: json.reasons,
        grant: json.grant.map(grant_from_json).transpose()?,
    })
}

fn grant_json(grant: &Grant) -> Result<GrantJson, StoreError> {
    let (scope, values) = scope_values(&grant.scope)?;
    Ok(GrantJson {
        tool: grant.tool.clone(),
        scope: scope.to_owned(),
        values,
    })
}

fn grant_from_json(json: GrantJson) -> Result<Grant, String> {
    Ok(Grant {
        tool: json.tool,
        scope: scope_from(&json.scope, json.values)?,
    })
}

/// A scope as its kind and its values (paths or hosts, none for the tool alone).
fn scope_values(scope: &GrantScope) -> Result<(&'static str, Vec<String>), StoreError> {
    Ok(match scope {
        GrantScope::Tool => ("tool", Vec::new()),
        GrantScope::Hosts(hosts) => ("hosts", hosts.iter().cloned().collect()),
        GrantScope::Paths(paths) => (
            "paths",
            paths
                .iter()
                .map(|path| {
                    // The file checks refuse names that are not UTF-8, so no grant holds one.
                    path.to_str()
                        .map(str::to_owned)
                        .ok_or_else(|| StoreError::Encode {
                            what: "grant path",
                            source: serde::ser::Error::custom(format!(
                                "{} is not UTF-8",
                                path.display()
                            )),
                        })
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn scope_from(kind: &str, values: Vec<String>) -> Result<GrantScope, String> {
    match kind {
        "tool" if values.is_empty() => Ok(GrantScope::Tool),
        "paths" if !values.is_empty() => Ok(GrantScope::Paths(
            values
                .into_iter()
                .map(PathBuf::from)
                .collect::<BTreeSet<_>>(),
        )),
        "hosts" if !values.is_empty() => Ok(GrantScope::Hosts(values.into_iter().collect())),
        other => Err(format!(
            "grant scope {other:?} with {} values",
            values.len()
        )),
    }
}

/// Stores the grant an applied allow-always of a tool approval carries, in the transaction of
/// the decision; any other record stores nothing.
pub(super) fn store_grant(conn: &Connection, record: &ApprovalRecord) -> Result<(), StoreError> {
    if record.decision != Some(ApprovalDecision::AllowAlways) {
        return Ok(());
    }
    let Some(tool) = &record.request.tool else {
        return Ok(());
    };
    let (Some(grant), Some(agent_id)) = (&tool.grant, &record.request.agent_id) else {
        return Ok(());
    };
    let (scope, values) = scope_values(&grant.scope)?;
    let values = serde_json::to_string(&values).map_err(|source| StoreError::Encode {
        what: "grant scope",
        source,
    })?;
    conn.prepare_cached(
        "INSERT OR IGNORE INTO tool_grants \
         (id, agent_id, tool, scope, scope_json, created_at_ms, granted_by) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        record.id,
        agent_id,
        grant.tool,
        scope,
        values,
        sql_ms(record.resolved_at_ms.unwrap_or(record.created_at_ms)),
        record.resolved_by,
    ])?;
    Ok(())
}

const GRANT_COLUMNS: &str = "id, agent_id, tool, scope, scope_json, created_at_ms, granted_by";

/// Deletes a grant and returns it as it was.
pub(super) fn revoke_grant(conn: &Connection, id: &str) -> Result<Option<StoredGrant>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "DELETE FROM tool_grants WHERE id = ?1 RETURNING {GRANT_COLUMNS}"
    ))?;
    let mut rows = stmt.query(params![id])?;
    let Some(row) = rows.next()? else {
        return Ok(None);
    };
    read_grant(row).map(Some)
}

/// Every grant, oldest first.
pub(super) fn grants(conn: &Connection) -> Result<Vec<StoredGrant>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {GRANT_COLUMNS} FROM tool_grants ORDER BY created_at_ms, id"
    ))?;
    let mut rows = stmt.query([])?;
    let mut grants = Vec::new();
    while let Some(row) = rows.next()? {
        grants.push(read_grant(row)?);
    }
    Ok(grants)
}

fn read_grant(row: &Row<'_>) -> Result<StoredGrant, StoreError> {
    let id: String = row.get(0)?;
    let corrupt = |column: &'static str, detail: String| StoreError::CorruptRow {
        approval_id: id.clone(),
        column,
        detail,
    };
    let scope: String = row.get(3)?;
    let values: String = row.get(4)?;
    let values: Vec<String> =
        serde_json::from_str(&values).map_err(|e| corrupt("scope_json", e.to_string()))?;
    let created: i64 = row.get(5)?;
    Ok(StoredGrant {
        agent_id: row.get(1)?,
        grant: Grant {
            tool: row.get(2)?,
            scope: scope_from(&scope, values).map_err(|e| corrupt("scope", e))?,
        },
        created_at_ms: stored_ms(
            u64::try_from(created).map_err(|_| corrupt("created_at_ms", created.to_string()))?,
        ),
        granted_by: row.get(6)?,
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_request_reads_back_as_it_was_written() {
        let tool = ToolRequest {
            tool: "write".into(),
            call_id: Some("toolu_1".into()),
            params: vec![("path".into(), "/ws/a.rs".into())],
            title: Some("Claude Code on box: Write".into()),
            description: Some("Project: /ws\nSession: s".into()),
            severity: Severity::Warning,
            reasons: vec!["always-ask: …".into()],
            grant: Some(Grant {
                tool: "write".into(),
                scope: GrantScope::Paths([PathBuf::from("/ws/a.rs")].into()),
            }),
        };
        let text = encode_tool(Some(&tool)).unwrap().unwrap();
        assert_eq!(decode_tool(&text).unwrap(), tool);
        assert_eq!(encode_tool(None).unwrap(), None);
    }

    #[test]
    fn refuses_a_scope_it_cannot_read_rather_than_widening_it() {
        assert!(scope_from("tool", vec!["/x".into()]).is_err());
        assert!(scope_from("paths", Vec::new()).is_err());
        assert!(scope_from("everything", Vec::new()).is_err());
        assert!(decode_tool(r#"{"tool":"x","callId":null,"params":[],"title":null,"description":null,"severity":"loud","reasons":[],"grant":null}"#).is_err());
    }
}
