//! The audit log on disk: tampering of every kind is named at its line, crash residue is
//! repaired on open, the chain continues across reopen and rotation, and files are private.

use std::fs;
use std::num::NonZeroU32;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gatehouse_store::audit::{
    AuditError, AuditEvent, AuditKind, AuditLog, AuditOptions, ProblemKind, SyncPolicy,
    VerifyReport, verify,
};
use pretty_assertions::assert_eq;
use serde_json::json;
use sha2::{Digest as _, Sha256};

struct Log {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Log {
    /// A log holding `n` records, closed (so fully synced and anchored).
    fn with_records(n: u64) -> Self {
        Self::with_records_and(n, AuditOptions::default())
    }

    fn with_records_and(n: u64, options: AuditOptions) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join("audit.jsonl");
        let (log, _) = AuditLog::open(&path, options).unwrap();
        for i in 1..=n {
            log.append(1_700_000_000_000 + i, event(i)).unwrap();
        }
        log.sync().unwrap();
        Log { _dir: dir, path }
    }

    fn head(&self) -> PathBuf {
        self.path.with_file_name("audit.jsonl.head")
    }

    fn lines(&self) -> Vec<Vec<u8>> {
        let data = fs::read(&self.path).unwrap();
        data.split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn rewrite(&self, edit: impl FnOnce(&mut Vec<Vec<u8>>)) {
        let mut lines = self.lines();
        edit(&mut lines);
        fs::write(&self.path, lines.concat()).unwrap();
    }

    fn verify(&self) -> VerifyReport {
        verify(&self.path).unwrap()
    }

    /// `(line, seq, kind)` of the first problem.
    fn problem(&self) -> (Option<u64>, Option<u64>, ProblemKind) {
        let problem = self.verify().problem.expect("a problem");
        (problem.line, problem.seq, problem.kind)
    }

    fn open(&self) -> Result<AuditLog, AuditError> {
        AuditLog::open(&self.path, AuditOptions::default()).map(|(log, _)| log)
    }
}

fn event(i: u64) -> AuditEvent {
    AuditEvent::new(
        AuditKind::Request,
        json!({ "command": format!("echo {i}") }),
    )
    .with_approval_id(format!("approval-{i}"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn broken_kind(result: Result<AuditLog, AuditError>) -> ProblemKind {
    match result {
        Err(AuditError::BrokenChain { problem, .. }) => problem.kind,
        other => panic!("expected a broken chain, got {other:?}"),
    }
}

#[test]
fn accepts_an_untouched_log_and_reports_its_extent() {
    let log = Log::with_records(5);
    let report = log.verify();
    assert_eq!(report.problem, None);
    assert_eq!((report.records, report.last_seq), (5, 5));
    assert_eq!(report.anchored_seq, Some(5));
    assert_eq!(report.files, vec![log.path.clone()]);
}

#[test]
fn writes_one_json_object_per_line_with_seq_prev_and_hash() {
    let log = Log::with_records(2);
    let lines = log.lines();
    let first: serde_json::Value = serde_json::from_slice(&lines[0]).unwrap();
    let second: serde_json::Value = serde_json::from_slice(&lines[1]).unwrap();
    assert_eq!(first["seq"], 1);
    assert_eq!(first["atMs"], 1_700_000_000_001u64);
    assert_eq!(first["kind"], "request");
    assert_eq!(first["approvalId"], "approval-1");
    assert_eq!(first["prev"], "0".repeat(64));
    let first_line = &lines[0][..lines[0].len() - 1];
    assert_eq!(second["prev"], sha256_hex(first_line));
}

#[test]
fn denies_a_one_byte_edit_in_the_middle_at_the_edited_line() {
    let log = Log::with_records(5);
    log.rewrite(|lines| {
        let at = lines[2].windows(6).position(|w| w == b"echo 3").unwrap();
        lines[2][at + 5] = b'7';
    });
    assert_eq!(log.problem(), (Some(3), None, ProblemKind::ContentEdited));
}

#[test]
fn denies_an_edit_with_a_recomputed_record_hash_at_the_next_line() {
    let log = Log::with_records(5);
    log.rewrite(|lines| {
        let text = String::from_utf8(lines[2].clone()).unwrap();
        let (body, _) = text.rsplit_once(r#","hash":""#).unwrap();
        let body = body.replace("echo 3", "echo 7");
        let hash = sha256_hex(format!("{body}}}").as_bytes());
        lines[2] = format!("{body},\"hash\":\"{hash}\"}}\n").into_bytes();
    });
    assert_eq!(log.problem(), (Some(4), Some(4), ProblemKind::PrevMismatch));
}

#[test]
fn denies_a_deleted_middle_line_naming_the_missing_seq() {
    let log = Log::with_records(5);
    log.rewrite(|lines| {
        lines.remove(2);
    });
    let expected = ProblemKind::SeqMismatch {
        expected: 3,
        found: 4,
    };
    assert_eq!(log.problem(), (Some(3), Some(4), expected));
}

#[test]
fn denies_a_deleted_last_line_through_the_head_anchor() {
    let log = Log::with_records(5);
    log.rewrite(|lines| {
        lines.pop();
    });
    let expected = ProblemKind::TailMissing {
        last_seq: 4,
        anchored_seq: 5,
    };
    assert_eq!(log.problem(), (None, None, expected.clone()));
    assert_eq!(broken_kind(log.open()), expected);
}

#[test]
fn denies_a_deleted_log_when_its_head_remains() {
    let log = Log::with_records(3);
    fs::remove_file(&log.path).unwrap();
    let expected = ProblemKind::TailMissing {
        last_seq: 0,
        anchored_seq: 3,
    };
    assert_eq!(log.problem(), (None, None, expected));
}

#[test]
fn denies_a_deleted_head_when_the_log_has_records() {
    let log = Log::with_records(3);
    fs::remove_file(log.head()).unwrap();
    assert_eq!(log.problem(), (None, None, ProblemKind::HeadMissing));
    assert_eq!(broken_kind(log.open()), ProblemKind::HeadMissing);
}

#[test]
fn denies_swapped_lines() {
    let log = Log::with_records(5);
    log.rewrite(|lines| lines.swap(1, 3));
    let expected = ProblemKind::SeqMismatch {
        expected: 2,
        found: 4,
    };
    assert_eq!(log.problem(), (Some(2), Some(4), expected));
}

#[test]
fn denies_a_log_cut_inside_a_synced_record_as_a_removed_tail() {
    let log = Log::with_records(5);
    log.rewrite(|lines| {
        let last = lines.last_mut().unwrap();
        last.truncate(last.len() / 2);
    });
    let expected = ProblemKind::TailMissing {
        last_seq: 4,
        anchored_seq: 5,
    };
    assert_eq!(log.problem(), (None, None, expected.clone()));
    assert_eq!(broken_kind(log.open()), expected);
}

#[test]
fn reports_then_repairs_a_torn_line_left_by_a_crash() {
    let log = Log::with_records(3);
    let partial = br#"{"seq":4,"atMs":17000000"#;
    let mut data = fs::read(&log.path).unwrap();
    let intact_len = data.len() as u64;
    data.extend_from_slice(partial);
    fs::write(&log.path, data).unwrap();
    let bytes = partial.len();
    assert_eq!(
        log.problem(),
        (Some(4), None, ProblemKind::TornLine { bytes })
    );

    let (writer, report) = AuditLog::open(&log.path, AuditOptions::default()).unwrap();
    let torn = report.torn_tail.expect("torn tail reported");
    assert_eq!((torn.line, torn.offset), (4, intact_len));
    assert_eq!(torn.dropped, partial.to_vec());
    assert_eq!(report.last_seq, 3);
    assert_eq!(writer.append(1, event(4)).unwrap(), 4);
    drop(writer);
    let report = log.verify();
    assert_eq!((report.problem, report.records), (None, 4));
}

#[test]
fn refuses_to_open_an_edited_log() {
    let log = Log::with_records(4);
    log.rewrite(|lines| lines.swap(0, 1));
    assert!(matches!(
        broken_kind(log.open()),
        ProblemKind::SeqMismatch { .. }
    ));
}

#[test]
fn continues_the_seq_and_chain_after_reopening() {
    let log = Log::with_records(3);
    let (writer, report) = AuditLog::open(&log.path, AuditOptions::default()).unwrap();
    assert_eq!((report.last_seq, report.torn_tail), (3, None));
    assert_eq!(writer.append(10, event(4)).unwrap(), 4);
    drop(writer);
    let report = log.verify();
    assert_eq!((report.problem, report.last_seq), (None, 4));
}

#[test]
fn keeps_one_valid_chain_under_concurrent_appenders() {
    let options = AuditOptions {
        sync: SyncPolicy::Batched {
            max_unsynced: NonZeroU32::new(16).unwrap(),
        },
        rotate_at_bytes: None,
    };
    let log = Log::with_records_and(0, options.clone());
    let (writer, _) = AuditLog::open(&log.path, options).unwrap();
    let writer = Arc::new(writer);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let writer = Arc::clone(&writer);
            std::thread::spawn(move || {
                (0..50)
                    .map(|i| writer.append(t * 1000 + i, event(i)).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seqs: Vec<u64> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=400).collect::<Vec<_>>());
    writer.sync().unwrap();
    let report = log.verify();
    assert_eq!((report.problem, report.records), (None, 400));
    assert_eq!(report.anchored_seq, Some(400));
}

#[test]
fn leaves_batched_records_unanchored_until_synced_without_failing_verification() {
    let options = AuditOptions {
        sync: SyncPolicy::Batched {
            max_unsynced: NonZeroU32::new(100).unwrap(),
        },
        rotate_at_bytes: None,
    };
    let log = Log::with_records(2);
    let (writer, _) = AuditLog::open(&log.path, options).unwrap();
    writer.append(3, event(3)).unwrap();
    let report = log.verify();
    assert_eq!((report.problem, report.last_seq), (None, 3));
    assert_eq!(report.anchored_seq, Some(2));
    writer.sync().unwrap();
    assert_eq!(log.verify().anchored_seq, Some(3));
}

#[test]
fn creates_the_log_and_head_with_mode_0600() {
    let log = Log::with_records(1);
    assert_eq!(mode(&log.path), 0o600);
    assert_eq!(mode(&log.head()), 0o600);
}

#[test]
fn refuses_to_append_to_a_log_others_can_read() {
    let log = Log::with_records(1);
    fs::set_permissions(&log.path, fs::Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(
        log.open(),
        Err(AuditError::LoosePermissions { mode: 0o644, .. })
    ));
}

#[test]
fn refuses_to_open_a_log_through_a_symlink() {
    let log = Log::with_records(1);
    let link = log.path.with_file_name("link.jsonl");
    std::os::unix::fs::symlink(&log.path, &link).unwrap();
    let result = AuditLog::open(&link, AuditOptions::default());
    assert!(matches!(result, Err(AuditError::Store(_))), "{result:?}");
}

fn rotating() -> AuditOptions {
    AuditOptions {
        sync: SyncPolicy::EveryRecord,
        rotate_at_bytes: Some(1000),
    }
}

#[test]
fn rotates_by_size_and_verifies_the_chain_across_files() {
    let log = Log::with_records_and(20, rotating());
    let report = log.verify();
    assert_eq!((report.problem, report.records), (None, 20));
    assert!(report.files.len() >= 3, "{:?}", report.files);
    for file in &report.files {
        assert_eq!(mode(file), 0o600, "{}", file.display());
        assert!(fs::metadata(file).unwrap().len() <= 1000);
    }
    // The active file starts where the newest rotated file ends.
    let first: serde_json::Value = serde_json::from_slice(&log.lines()[0]).unwrap();
    assert_ne!(first["seq"], 1);
    assert_ne!(first["prev"], "0".repeat(64));
}

#[test]
fn continues_the_chain_across_rotation_after_reopening() {
    let log = Log::with_records_and(20, rotating());
    let (writer, report) = AuditLog::open(&log.path, rotating()).unwrap();
    assert_eq!(report.last_seq, 20);
    for i in 21..=30 {
        assert_eq!(writer.append(i, event(i)).unwrap(), i);
    }
    drop(writer);
    let report = log.verify();
    assert_eq!((report.problem, report.records), (None, 30));
}

#[test]
fn denies_a_deleted_rotated_file() {
    let log = Log::with_records_and(20, rotating());
    let files = log.verify().files;
    fs::remove_file(&files[1]).unwrap();
    let problem = log.verify().problem.expect("a problem");
    assert!(
        matches!(problem.kind, ProblemKind::SeqMismatch { .. }),
        "{problem}"
    );
    assert_eq!(problem.line, Some(1));
}

#[test]
fn denies_a_chain_whose_oldest_records_were_removed() {
    let log = Log::with_records(4);
    log.rewrite(|lines| {
        lines.remove(0);
    });
    let expected = ProblemKind::SeqMismatch {
        expected: 1,
        found: 2,
    };
    assert_eq!(log.problem(), (Some(1), Some(2), expected));
}

#[test]
fn fails_without_a_verdict_when_there_is_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let result = verify(&dir.path().join("audit.jsonl"));
    assert!(matches!(result, Err(AuditError::Io { .. })), "{result:?}");
}

#[test]
fn names_the_problem_in_words_a_person_can_act_on() {
    let log = Log::with_records(5);
    log.rewrite(|lines| {
        lines.remove(2);
    });
    let text = log.verify().problem.unwrap().to_string();
    assert!(
        text.ends_with(
            "audit.jsonl:3 (seq 4): seq 4 where 3 was expected: records 3..=3 are missing"
        ),
        "{text}"
    );
}
