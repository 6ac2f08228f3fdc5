//! The audit log on disk: tampering of every kind is named at its line, crash residue is
//! repaired on open, the chain continues across reopen and rotation, and files are private.

use std::fs;
use std::num::NonZeroU32;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gatehouse_store::StoreError;
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

/// Edits a line the way a careful forger would: the record's own `hash` is recomputed.
fn recompute_with_edit(line: &mut Vec<u8>, from: &str, to: &str) {
    let text = String::from_utf8(line.clone()).unwrap();
    let (body, _) = text.rsplit_once(r#","hash":""#).unwrap();
    let body = body.replace(from, to);
    let hash = sha256_hex(format!("{body}}}").as_bytes());
    *line = format!("{body},\"hash\":\"{hash}\"}}\n").into_bytes();
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

type Verdict = (Option<u64>, Option<u64>, ProblemKind);

/// The first problem `(line, seq, kind)` after `edit` rewrites the lines of a closed log of five
/// records.
fn check(edit: impl FnOnce(&mut Vec<Vec<u8>>)) -> Verdict {
    let log = Log::with_records(5);
    log.rewrite(edit);
    log.problem()
}

/// Like [`check`], and asserts that the writer refuses to open the edited log for that reason,
/// and that `AuditLog::check` finds the same refusal first.
fn check_refused(edit: impl FnOnce(&mut Vec<Vec<u8>>)) -> Verdict {
    let log = Log::with_records(5);
    log.rewrite(edit);
    let verdict = log.problem();
    assert_eq!(broken_kind(AuditLog::check(&log.path)), verdict.2);
    assert_eq!(broken_kind(log.open()), verdict.2);
    verdict
}

fn tail_missing(last_seq: u64, anchored_seq: u64) -> ProblemKind {
    ProblemKind::TailMissing {
        last_seq,
        anchored_seq,
    }
}

fn seq_mismatch(expected: u64, found: u64) -> ProblemKind {
    ProblemKind::SeqMismatch { expected, found }
}

fn broken_kind<T: std::fmt::Debug>(result: Result<T, AuditError>) -> ProblemKind {
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
    let edit = |lines: &mut Vec<Vec<u8>>| {
        let at = lines[2].windows(6).position(|w| w == b"echo 3").unwrap();
        lines[2][at + 5] = b'7';
    };
    assert_eq!(check(edit), (Some(3), None, ProblemKind::ContentEdited));
}

#[test]
fn denies_an_edit_with_a_recomputed_record_hash_at_the_next_line() {
    let edit = |lines: &mut Vec<Vec<u8>>| recompute_with_edit(&mut lines[2], "echo 3", "echo 7");
    assert_eq!(check(edit), (Some(4), Some(4), ProblemKind::PrevMismatch));
}

#[test]
fn denies_a_rewritten_last_record_through_the_head_anchor() {
    let edit = |lines: &mut Vec<Vec<u8>>| recompute_with_edit(&mut lines[4], "echo 5", "echo 0");
    assert_eq!(check(edit), (Some(5), Some(5), ProblemKind::AnchorMismatch));
}

#[test]
fn denies_a_deleted_middle_line_naming_the_missing_seq() {
    let edit = |lines: &mut Vec<Vec<u8>>| drop(lines.remove(2));
    assert_eq!(check(edit), (Some(3), Some(4), seq_mismatch(3, 4)));
}

#[test]
fn denies_a_deleted_last_line_through_the_head_anchor() {
    let edit = |lines: &mut Vec<Vec<u8>>| drop(lines.pop());
    assert_eq!(check_refused(edit), (None, None, tail_missing(4, 5)));
}

#[test]
fn denies_a_deleted_log_when_its_head_remains() {
    let log = Log::with_records(3);
    fs::remove_file(&log.path).unwrap();
    assert_eq!(log.problem(), (None, None, tail_missing(0, 3)));
}

#[test]
fn denies_a_deleted_head_when_the_log_has_records() {
    let log = Log::with_records(3);
    fs::remove_file(log.head()).unwrap();
    assert_eq!(log.problem(), (None, None, ProblemKind::HeadMissing));
    assert_eq!(
        broken_kind(AuditLog::check(&log.path)),
        ProblemKind::HeadMissing
    );
    assert_eq!(broken_kind(log.open()), ProblemKind::HeadMissing);
}

#[test]
fn denies_swapped_lines() {
    let edit = |lines: &mut Vec<Vec<u8>>| lines.swap(1, 3);
    assert_eq!(check(edit), (Some(2), Some(4), seq_mismatch(2, 4)));
}

#[test]
fn denies_a_log_cut_inside_a_synced_record_as_a_removed_tail() {
    let edit = |lines: &mut Vec<Vec<u8>>| {
        let last = lines.last_mut().unwrap();
        last.truncate(last.len() / 2);
    };
    assert_eq!(check_refused(edit), (None, None, tail_missing(4, 5)));
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

/// `doctor` checks a data directory with `AuditLog::check`: it must find what `open` would do
/// (here, cut a torn line) without doing it.
#[test]
fn checks_a_torn_line_as_open_would_find_it_without_repairing_it() {
    let log = Log::with_records(3);
    let mut data = fs::read(&log.path).unwrap();
    data.extend_from_slice(br#"{"seq":4,"#);
    fs::write(&log.path, &data).unwrap();
    let report = AuditLog::check(&log.path).unwrap();
    assert_eq!(report.last_seq, 3);
    assert_eq!(report.torn_tail.map(|torn| torn.line), Some(4));
    assert_eq!(fs::read(&log.path).unwrap(), data, "the file is untouched");
}

#[test]
fn checks_a_log_that_does_not_exist_yet_without_creating_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let report = AuditLog::check(&path).unwrap();
    assert_eq!((report.last_seq, report.torn_tail), (0, None));
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A running gateway holds the log open, with records appended but not yet synced or anchored.
#[test]
fn checks_a_log_beside_its_writer() {
    let log = Log::with_records(2);
    let options = AuditOptions {
        sync: SyncPolicy::Batched {
            max_unsynced: NonZeroU32::new(100).unwrap(),
        },
        rotate_at_bytes: None,
    };
    let (writer, _) = AuditLog::open(&log.path, options).unwrap();
    writer.append(3, event(3)).unwrap();
    assert_eq!(AuditLog::check(&log.path).unwrap().last_seq, 3);
}

#[test]
fn refuses_to_open_an_edited_log() {
    let edit = |lines: &mut Vec<Vec<u8>>| lines.swap(0, 1);
    assert_eq!(check_refused(edit), (Some(1), Some(2), seq_mismatch(1, 2)));
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
fn moves_the_head_in_place_at_a_fixed_length() {
    use std::os::unix::fs::MetadataExt as _;

    let log = Log::with_records(1);
    let (writer, _) = AuditLog::open(&log.path, AuditOptions::default()).unwrap();
    let inode = fs::metadata(log.head()).unwrap().ino();
    let len = fs::metadata(log.head()).unwrap().len();
    for i in 2..=120 {
        writer.append(i, event(i)).unwrap();
        let head = fs::metadata(log.head()).unwrap();
        assert_eq!((head.ino(), head.len()), (inode, len), "after record {i}");
    }
    assert_eq!(log.verify().anchored_seq, Some(120));
}

#[test]
fn accepts_an_unpadded_head_from_an_earlier_version() {
    let log = Log::with_records(3);
    let head = fs::read_to_string(log.head()).unwrap();
    fs::write(log.head(), format!("{}\n", head.trim_end())).unwrap();
    assert_eq!(log.verify().anchored_seq, Some(3));
    let writer = log.open().unwrap();
    writer.append(4, event(4)).unwrap();
    assert_eq!(log.verify().anchored_seq, Some(4));
}

#[test]
fn verifies_cleanly_while_the_writer_moves_the_head() {
    let log = Log::with_records(1);
    let (writer, _) = AuditLog::open(&log.path, AuditOptions::default()).unwrap();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // Seqs of different lengths and new hashes on every move: a head read half moved
            // would be unparsable or name no record.
            for i in 2..=400 {
                writer.append(i, event(i)).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            let report = log.verify();
            assert_eq!(report.problem, None, "{report:?}");
        }
    });
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
    assert!(matches!(
        AuditLog::check(&log.path),
        Err(AuditError::LoosePermissions { mode: 0o644, .. })
    ));
    fs::set_permissions(&log.path, fs::Permissions::from_mode(0o600)).unwrap();
    fs::set_permissions(log.head(), fs::Permissions::from_mode(0o640)).unwrap();
    assert!(matches!(
        AuditLog::check(&log.path),
        Err(AuditError::LoosePermissions { mode: 0o640, .. })
    ));
}

#[test]
fn refuses_to_open_a_log_through_a_symlink() {
    let log = Log::with_records(1);
    let link = log.path.with_file_name("link.jsonl");
    std::os::unix::fs::symlink(&log.path, &link).unwrap();
    let result = AuditLog::open(&link, AuditOptions::default());
    assert!(
        matches!(
            result,
            Err(AuditError::Store(StoreError::UnsafeDestination { .. }))
        ),
        "{result:?}"
    );
    let result = AuditLog::check(&link);
    assert!(
        matches!(
            result,
            Err(AuditError::Store(StoreError::UnsafeDestination { .. }))
        ),
        "{result:?}"
    );
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
fn denies_a_head_older_than_the_rotated_files() {
    let log = Log::with_records_and(20, rotating());
    let oldest = log.verify().files[0].clone();
    let first_line = fs::read(&oldest).unwrap();
    let first_line = first_line.split(|&b| b == b'\n').next().unwrap();
    let stale = format!(r#"{{"seq":1,"lineHash":"{}"}}"#, sha256_hex(first_line));
    fs::write(log.head(), stale).unwrap();
    let expected = ProblemKind::HeadBehind { anchored_seq: 1 };
    assert_eq!(log.problem(), (None, None, expected.clone()));
    assert_eq!(broken_kind(AuditLog::check(&log.path)), expected);
    let result = AuditLog::open(&log.path, rotating()).map(|(log, _)| log);
    assert_eq!(broken_kind(result), expected);
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
    let edit = |lines: &mut Vec<Vec<u8>>| drop(lines.remove(0));
    assert_eq!(check(edit), (Some(1), Some(2), seq_mismatch(1, 2)));
}

#[test]
fn fails_without_a_verdict_when_there_is_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let result = verify(&dir.path().join("audit.jsonl"));
    assert!(
        matches!(result, Err(AuditError::Store(StoreError::Io { .. }))),
        "{result:?}"
    );
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
            "audit.jsonl:3 (seq 4): seq 4 where 3 was expected: record 3 is missing or out of place"
        ),
        "{text}"
    );
}

#[test]
fn accepts_the_example_in_the_docs() {
    let docs =
        fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/audit.md")).unwrap();
    let blocks: Vec<&str> = docs
        .split("```json\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    fs::write(&path, blocks[0]).unwrap();
    fs::write(path.with_file_name("audit.jsonl.head"), blocks[1]).unwrap();
    let report = verify(&path).unwrap();
    assert_eq!((report.problem, report.records), (None, 2));
    assert_eq!(report.anchored_seq, Some(2));
}

#[test]
fn anchors_batched_records_when_the_writer_is_dropped() {
    let options = AuditOptions {
        sync: SyncPolicy::Batched {
            max_unsynced: NonZeroU32::new(100).unwrap(),
        },
        rotate_at_bytes: None,
    };
    let log = Log::with_records(1);
    let (writer, _) = AuditLog::open(&log.path, options).unwrap();
    writer.append(2, event(2)).unwrap();
    assert_eq!(log.verify().anchored_seq, Some(1));
    drop(writer);
    assert_eq!(log.verify().anchored_seq, Some(2));
}

#[test]
fn lets_a_second_writer_in_only_after_the_first_closes() {
    let log = Log::with_records(1);
    let (first, _) = AuditLog::open(&log.path, AuditOptions::default()).unwrap();
    let (opened_tx, opened_rx) = std::sync::mpsc::channel();
    let path = log.path.clone();
    let second = std::thread::spawn(move || {
        let (second, report) = AuditLog::open(&path, AuditOptions::default()).unwrap();
        opened_tx.send(report.last_seq).unwrap();
        second.append(3, event(3)).unwrap()
    });
    // Blocked on the lock: the first writer may still append without forking the chain.
    let waited = opened_rx.recv_timeout(std::time::Duration::from_millis(200));
    assert!(
        waited.is_err(),
        "second writer opened while the first held the log"
    );
    assert_eq!(first.append(2, event(2)).unwrap(), 2);
    drop(first);
    assert_eq!(opened_rx.recv().unwrap(), 2);
    assert_eq!(second.join().unwrap(), 3);
    let report = log.verify();
    assert_eq!((report.problem, report.records), (None, 3));
}

#[test]
fn stops_appending_after_a_failed_rotation_until_reopened() {
    let log = Log::with_records(0);
    let (writer, _) = AuditLog::open(&log.path, rotating()).unwrap();
    // Directories where the rotated file would go make the rename fail, even for root.
    for last in 1..=50 {
        fs::create_dir(log.path.with_file_name(format!("audit.jsonl.1-{last}"))).unwrap();
    }
    let mut written = 0;
    let mut failure = None;
    for i in 1..=50 {
        match writer.append(i, event(i)) {
            Ok(seq) => written = seq,
            Err(error) => {
                failure = Some(error);
                break;
            }
        }
    }
    let failed = failure.expect("rotation failed within 50 records");
    let rotate_failed = matches!(
        failed,
        AuditError::Store(StoreError::Io { op: "rotate", .. })
    );
    assert!(rotate_failed, "{failed:?}");
    assert!(matches!(
        writer.append(99, event(99)),
        Err(AuditError::WriterStopped { .. })
    ));
    drop(writer);

    for last in 1..=50 {
        fs::remove_dir(log.path.with_file_name(format!("audit.jsonl.1-{last}"))).unwrap();
    }
    let (writer, report) = AuditLog::open(&log.path, rotating()).unwrap();
    assert_eq!(report.last_seq, written);
    writer.append(100, event(100)).unwrap();
    drop(writer);
    let report = log.verify();
    assert_eq!((report.problem, report.records), (None, written + 1));
}
