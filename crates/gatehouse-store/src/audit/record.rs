//! One audit record: what it says, how it is written as a line, and how a line is checked.
//!
//! A line is the record's JSON followed by a `hash` member: `{…,"prev":"…","hash":"<hex>"}`. The
//! `hash` is the sha256 of the line with that member removed, which is exactly the serializer's
//! output, so no canonical JSON form is needed and an edit is caught on the edited line itself.
//! The next record's `prev` is the sha256 of this whole line (without its newline), which chains
//! the records even when an editor recomputes `hash`.

use ring::digest::{Context, SHA256};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `prev` of the first record ever written: there is no earlier line to hash.
pub const GENESIS_PREV: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// Length of a sha256 digest in lower-case hex.
const HASH_HEX_LEN: usize = 64;
/// The text between the record's JSON and its hash.
const HASH_MEMBER_PREFIX: &[u8] = br#","hash":""#;
/// Bytes after the record's JSON body: `,"hash":"` + 64 hex digits + `"}`.
const HASH_SUFFIX_LEN: usize = HASH_MEMBER_PREFIX.len() + HASH_HEX_LEN + 2;

/// What happened, in the order a run goes through them; the gateway chooses the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuditKind {
    /// An agent asked whether a call may run.
    Request,
    /// A decision was reached: by policy, by a person, by timeout or by cancellation.
    Decision,
    /// An approval prompt was delivered to (or failed to reach) an approval surface.
    Delivery,
    /// A bound command was started, finished or refused at run time.
    Execution,
}

/// An event the gateway hands to the log; the log adds the sequence number, the time it is given
/// and the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditEvent {
    /// What happened.
    pub kind: AuditKind,
    /// The approval this event belongs to, so one approval's history can be pulled out.
    pub approval_id: Option<String>,
    /// The run this event belongs to (the gateway uses the approval id as run id).
    pub run_id: Option<String>,
    /// Event details; kept as JSON so the gateway can grow them without a format change here.
    pub payload: Value,
}

impl AuditEvent {
    /// An event with no approval or run attached (for example a policy-only check).
    pub fn new(kind: AuditKind, payload: Value) -> Self {
        AuditEvent {
            kind,
            approval_id: None,
            run_id: None,
            payload,
        }
    }

    /// Attaches the approval id.
    pub fn with_approval_id(mut self, id: impl Into<String>) -> Self {
        self.approval_id = Some(id.into());
        self
    }

    /// Attaches the run id.
    pub fn with_run_id(mut self, id: impl Into<String>) -> Self {
        self.run_id = Some(id.into());
        self
    }
}

/// A record as stored, without its `hash` member; field order here is the order on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditRecord {
    /// Position in the chain, starting at 1 and never reused, across rotated files too.
    pub seq: u64,
    /// When the gateway observed the event, in Unix milliseconds (the log reads no clock).
    pub at_ms: u64,
    /// What happened.
    pub kind: AuditKind,
    /// The approval this record belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The run this record belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Event details.
    pub payload: Value,
    /// sha256 hex of the previous line's bytes, or [`GENESIS_PREV`] for seq 1.
    pub prev: String,
}

impl AuditRecord {
    /// The record `event` becomes when appended after `tip`.
    pub(crate) fn after(tip: &ChainTip, at_ms: u64, event: AuditEvent) -> Self {
        AuditRecord {
            seq: tip.seq + 1,
            at_ms,
            kind: event.kind,
            approval_id: event.approval_id,
            run_id: event.run_id,
            payload: event.payload,
            prev: tip.line_hash.clone(),
        }
    }
}

/// The end of a chain: the last record's seq and the hash the next record must carry as `prev`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChainTip {
    pub(crate) seq: u64,
    pub(crate) line_hash: String,
}

impl ChainTip {
    /// Before the first record.
    pub(crate) fn genesis() -> Self {
        ChainTip {
            seq: 0,
            line_hash: GENESIS_PREV.to_owned(),
        }
    }
}

/// A record as written: its line (without the newline) and the hash the next record's `prev`
/// carries.
#[derive(Debug)]
pub(crate) struct EncodedLine {
    pub(crate) bytes: Vec<u8>,
    pub(crate) line_hash: String,
}

/// The line for `record`. Both of a line's hashes begin with the same bytes (the JSON body up
/// to its closing brace), so the body is hashed once and the hasher forked: every record the
/// gateway writes is hashed here, on a thread that shares the cores with the request path.
pub(crate) fn encode_line(record: &AuditRecord) -> Result<EncodedLine, serde_json::Error> {
    let mut line = serde_json::to_vec(record)?;
    // serde_json writes a struct as one object, so the last byte is its closing brace.
    line.pop();
    let body_len = line.len();
    let body = BodyHasher::new(&line);
    line.extend_from_slice(HASH_MEMBER_PREFIX);
    line.extend_from_slice(body.content_hash().as_bytes());
    line.extend_from_slice(b"\"}");
    let line_hash = body.line_hash(&line[body_len..]);
    Ok(EncodedLine {
        bytes: line,
        line_hash,
    })
}

/// sha256 fed with a line's body (its JSON without the closing brace), which starts both the
/// content hash (body + `}`) and the line hash (body + hash member). `ring`'s assembly, not a
/// portable implementation: this hashes every byte the audit log writes, about half as fast
/// without it on CPUs lacking SHA instructions.
struct BodyHasher(Context);

impl BodyHasher {
    fn new(body: &[u8]) -> Self {
        let mut context = Context::new(&SHA256);
        context.update(body);
        BodyHasher(context)
    }

    /// The `hash` member's value: sha256 of the record's own JSON.
    fn content_hash(&self) -> String {
        let mut content = self.0.clone();
        content.update(b"}");
        hex::encode(content.finish())
    }

    /// The next record's `prev`: sha256 of the whole line, `suffix` being what follows the body.
    fn line_hash(mut self, suffix: &[u8]) -> String {
        self.0.update(suffix);
        hex::encode(self.0.finish())
    }
}

/// True for a sha256 digest written as 64 lower-case hex digits, the only form the writer uses.
pub(crate) fn is_hash_hex(hex: &[u8]) -> bool {
    hex.len() == HASH_HEX_LEN && hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why a line is not a valid record on its own (chain position is checked elsewhere).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LineFault {
    /// Not a record: wrong shape, bad JSON, missing or unknown fields.
    Malformed(String),
    /// A well-formed record whose `hash` does not match its content: it was edited.
    ContentEdited,
}

/// A line that passed its own checks, and the hash the next record's `prev` must carry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecodedLine {
    pub(crate) record: AuditRecord,
    pub(crate) line_hash: String,
}

/// Parses and self-checks one line (without its newline).
pub(crate) fn decode_line(line: &[u8]) -> Result<DecodedLine, LineFault> {
    let Some(split) = line.len().checked_sub(HASH_SUFFIX_LEN) else {
        return Err(LineFault::Malformed("too short to be a record".to_owned()));
    };
    let (body, suffix) = line.split_at(split);
    let Some(hex) = suffix
        .strip_prefix(HASH_MEMBER_PREFIX)
        .and_then(|rest| rest.strip_suffix(b"\"}"))
        .filter(|hex| is_hash_hex(hex))
    else {
        return Err(LineFault::Malformed(
            "does not end with a \"hash\" member of 64 lower-case hex digits".to_owned(),
        ));
    };
    let mut content = Vec::with_capacity(body.len() + 1);
    content.extend_from_slice(body);
    content.push(b'}');
    let record: AuditRecord = serde_json::from_slice(&content)
        .map_err(|error| LineFault::Malformed(error.to_string()))?;
    let hasher = BodyHasher::new(body);
    if hasher.content_hash().as_bytes() != hex {
        return Err(LineFault::ContentEdited);
    }
    // Re-encoding must reproduce the line: otherwise two different lines (say, with extra
    // spaces) could carry the same record and the chain would not pin the bytes down.
    if serde_json::to_vec(&record).map_err(|e| LineFault::Malformed(e.to_string()))? != content {
        return Err(LineFault::Malformed(
            "not in the form the writer produces (spacing, escaping or field order differ)"
                .to_owned(),
        ));
    }
    Ok(DecodedLine {
        record,
        line_hash: hasher.line_hash(suffix),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::approvals_file::hash_bytes;

    fn sample() -> AuditRecord {
        let event = AuditEvent::new(AuditKind::Decision, json!({"decision": "allow-once"}))
            .with_approval_id("a1")
            .with_run_id("a1");
        AuditRecord::after(&ChainTip::genesis(), 1_700_000_000_000, event)
    }

    #[test]
    fn encodes_camel_case_fields_in_fixed_order_with_hash_last() {
        let line = String::from_utf8(encode_line(&sample()).unwrap().bytes).unwrap();
        let expected_prefix = format!(
            r#"{{"seq":1,"atMs":1700000000000,"kind":"decision","approvalId":"a1","runId":"a1","payload":{{"decision":"allow-once"}},"prev":"{GENESIS_PREV}","hash":""#
        );
        assert!(line.starts_with(&expected_prefix), "{line}");
        assert!(line.ends_with("\"}"));
    }

    #[test]
    fn decodes_what_it_encodes() {
        let record = sample();
        let line = encode_line(&record).unwrap();
        let line_hash = line.line_hash.clone();
        assert_eq!(
            decode_line(&line.bytes),
            Ok(DecodedLine { record, line_hash })
        );
    }

    #[test]
    fn forked_hashes_are_the_sha256_of_the_content_and_of_the_whole_line() {
        let line = encode_line(&sample()).unwrap();
        let split = line.bytes.len() - HASH_SUFFIX_LEN;
        let (body, suffix) = line.bytes.split_at(split);
        let content = [body, b"}"].concat();
        let member = [HASH_MEMBER_PREFIX, hash_bytes(&content).as_bytes(), b"\"}"].concat();
        assert_eq!(suffix, member.as_slice());
        assert_eq!(line.line_hash, hash_bytes(&line.bytes));
        assert_eq!(
            decode_line(&line.bytes).unwrap().line_hash,
            hash_bytes(&line.bytes)
        );
    }

    #[test]
    fn denies_a_line_whose_content_was_edited() {
        let line = encode_line(&sample()).unwrap();
        let edited = String::from_utf8(line.bytes)
            .unwrap()
            .replace("allow-once", "allow-twice");
        assert_eq!(
            decode_line(edited.as_bytes()),
            Err(LineFault::ContentEdited)
        );
    }

    #[test]
    fn denies_a_line_with_reformatted_json_even_if_its_hash_matches() {
        let content = br#"{"seq":1, "atMs":1,"kind":"request","payload":null,"prev":"x"}"#;
        let mut line = content[..content.len() - 1].to_vec();
        line.extend_from_slice(HASH_MEMBER_PREFIX);
        line.extend_from_slice(hash_bytes(content).as_bytes());
        line.extend_from_slice(b"\"}");
        assert!(matches!(decode_line(&line), Err(LineFault::Malformed(_))));
    }

    #[test]
    fn denies_unknown_fields_and_kinds() {
        for content in [
            br#"{"seq":1,"atMs":1,"kind":"request","payload":null,"prev":"x","extra":1}"#.to_vec(),
            br#"{"seq":1,"atMs":1,"kind":"reboot","payload":null,"prev":"x"}"#.to_vec(),
        ] {
            let mut line = content[..content.len() - 1].to_vec();
            line.extend_from_slice(HASH_MEMBER_PREFIX);
            line.extend_from_slice(hash_bytes(&content).as_bytes());
            line.extend_from_slice(b"\"}");
            assert!(matches!(decode_line(&line), Err(LineFault::Malformed(_))));
        }
    }

    #[test]
    fn denies_short_and_hashless_lines() {
        assert!(matches!(decode_line(b"{}"), Err(LineFault::Malformed(_))));
        let no_hash = format!("{{\"seq\":1,\"pad\":\"{}\"}}", "x".repeat(100));
        assert!(matches!(
            decode_line(no_hash.as_bytes()),
            Err(LineFault::Malformed(_))
        ));
    }
}
