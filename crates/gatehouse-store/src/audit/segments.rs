//! Rotated files: `<log file name>.<first seq>-<last seq>` beside the active log.
//!
//! The seq range in the name orders the files without trusting their timestamps; the chain inside
//! still decides validity, so a renamed file cannot pass for another one.

use std::ffi::OsString;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::error::AuditError;

/// One rotated file and the seq range its name claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) path: PathBuf,
    pub(crate) first_seq: u64,
}

/// The name a full active file is renamed to.
pub(crate) fn segment_path(log: &Path, first_seq: u64, last_seq: u64) -> PathBuf {
    let mut name = log.file_name().map(OsString::from).unwrap_or_default();
    name.push(format!(".{first_seq}-{last_seq}"));
    log.with_file_name(name)
}

/// The rotated files of `log`, oldest first.
pub(crate) fn list(log: &Path) -> Result<Vec<Segment>, AuditError> {
    let dir = match log.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let Some(base) = log.file_name() else {
        return Ok(Vec::new());
    };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(AuditError::io(dir, "list directory", e)),
    };
    let mut segments = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| AuditError::io(dir, "list directory", e))?;
        let name = entry.file_name();
        if let Some(first_seq) = parse_range(base.as_encoded_bytes(), name.as_encoded_bytes()) {
            segments.push(Segment {
                path: entry.path(),
                first_seq,
            });
        }
    }
    segments.sort_by_key(|segment| segment.first_seq);
    Ok(segments)
}

/// The first seq of `<base>.<first>-<last>`, or `None` for any other name.
fn parse_range(base: &[u8], name: &[u8]) -> Option<u64> {
    let range = name.strip_prefix(base)?.strip_prefix(b".")?;
    let text = std::str::from_utf8(range).ok()?;
    let (first, last) = text.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(first) || !digits(last) {
        return None;
    }
    first.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_other_siblings_are_ignored() {
        let path = segment_path(Path::new("/d/audit.jsonl"), 7, 12);
        assert_eq!(path, Path::new("/d/audit.jsonl.7-12"));
        assert_eq!(parse_range(b"audit.jsonl", b"audit.jsonl.7-12"), Some(7));
        for other in [
            "audit.jsonl",
            "audit.jsonl.head",
            "audit.jsonl.lock",
            "audit.jsonl.7-",
            "audit.jsonl.-3",
            "audit.jsonl.7-12.bak",
            "audit.jsonl.+7-12",
            "audit.jsonlx.7-12",
        ] {
            assert_eq!(
                parse_range(b"audit.jsonl", other.as_bytes()),
                None,
                "{other}"
            );
        }
    }
}
