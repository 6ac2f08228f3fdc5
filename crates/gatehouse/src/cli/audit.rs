//! `gatehouse audit verify|tail`: check the hash-chained audit log, or show its last records.
//!
//! Exit status: 0 when the chain is intact, 1 when `verify` found a problem, 2 when no verdict
//! could be reached (bad flags, missing or unreadable files).

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use gatehouse_chat::sanitize::one_line;
use gatehouse_store::StoreError;
use gatehouse_store::approvals_db::PgAuditLog;
use gatehouse_store::audit::{
    self, AuditError, LOG_FILE_NAME, Problem, SharedAuditLog as _, VerifyReport,
};
use serde_json::json;

use super::listing::{Table, when};

/// Exit status when the log fails verification.
const EXIT_INVALID: u8 = 1;

/// Subcommands of `gatehouse audit`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum AuditCommand {
    /// Check every record's hash, the chain between records and the head anchor
    /// (exit 0 intact, 1 tampered or damaged, 2 error).
    #[command(after_help = "\
Examples:
  gatehouse audit verify                                  # the default data directory
  gatehouse audit verify --data-dir /var/lib/gatehouse --json
  gatehouse audit verify --config /etc/gatehouse/config.json5   # PostgreSQL: the database's chain")]
    Verify {
        #[command(flatten)]
        log: LogLocation,
        /// Print the verdict as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Print the last records of the active log file (or the database's chain), unchecked
    /// (run `verify` for that).
    #[command(after_help = "\
Examples:
  gatehouse audit tail -n 20
  gatehouse audit tail --json | jq 'select(.kind == \"decision\")'")]
    Tail {
        #[command(flatten)]
        log: LogLocation,
        /// How many records.
        #[arg(short = 'n', long = "lines", default_value_t = 10)]
        lines: usize,
        /// Print the records as they are stored, one JSON object a line.
        #[arg(long)]
        json: bool,
    },
}

/// Which log to read: an explicit file, the database's chain when the config's store is
/// PostgreSQL, else `audit.jsonl` in the data directory.
#[derive(Debug, clap::Args)]
pub(crate) struct LogLocation {
    /// The audit log file.
    #[arg(long, value_name = "PATH", conflicts_with = "data_dir")]
    file: Option<PathBuf>,
    /// State directory [default: $XDG_STATE_HOME/gatehouse or ~/.local/state/gatehouse].
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The gateway's config file: with `gateway.store` PostgreSQL, the chain is the
    /// database's, which every replica appends to.
    #[arg(long, value_name = "FILE", env = "GATEHOUSE_CONFIG")]
    config: Option<PathBuf>,
}

/// Where the chain to read is.
enum Source {
    File(PathBuf),
    Database(PgAuditLog),
}

impl LogLocation {
    fn source(self) -> anyhow::Result<Source> {
        if let Some(file) = self.file {
            return Ok(Source::File(file));
        }
        let config = super::config::load(self.config.as_deref())?;
        if let Some(database) = super::layout::database_audit(config.gateway.store.as_ref()) {
            return Ok(Source::Database(database?));
        }
        let dir = match self.data_dir {
            Some(dir) => dir,
            None => super::layout::default_data_dir()?,
        };
        Ok(Source::File(dir.join(LOG_FILE_NAME)))
    }
}

/// Runs an `audit` subcommand.
pub(crate) fn run(command: AuditCommand) -> anyhow::Result<ExitCode> {
    match command {
        AuditCommand::Verify { log, json } => {
            let report =
                match log.source()? {
                    Source::File(path) => verify_file(&path)?,
                    Source::Database(log) => super::layout::offline_runtime()?
                        .block_on(log.verify())
                        .context("cannot verify the audit log in the approvals database")?,
                };
            Ok(print_verdict(&report, json))
        }
        AuditCommand::Tail { log, lines, json } => {
            let data = match log.source()? {
                Source::File(path) => std::fs::read(&path)
                    .with_context(|| format!("cannot read {}", path.display()))?,
                Source::Database(log) => super::layout::offline_runtime()?
                    .block_on(log.tail(lines))
                    .context("cannot read the audit log in the approvals database")?
                    .into_iter()
                    .flat_map(|mut line| {
                        line.push(b'\n');
                        line
                    })
                    .collect(),
            };
            tail(&data, lines, json)
        }
    }
}

fn verify_file(path: &Path) -> anyhow::Result<VerifyReport> {
    match audit::verify(path) {
        Ok(report) => Ok(report),
        Err(AuditError::Store(StoreError::Io { source, .. }))
            if source.kind() == io::ErrorKind::NotFound =>
        {
            anyhow::bail!("no audit log at {}", path.display())
        }
        Err(error) => Err(error).context("cannot verify the audit log"),
    }
}

fn print_verdict(report: &VerifyReport, as_json: bool) -> ExitCode {
    let text = if as_json {
        json_verdict(report).to_string()
    } else {
        human_verdict(report)
    };
    println!("{text}");
    if report.is_valid() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID)
    }
}

fn human_verdict(report: &VerifyReport) -> String {
    let mut out = String::new();
    match &report.problem {
        None => {
            let _ = write!(out, "audit log intact: {} records", report.records);
            if report.records > 0 {
                let _ = write!(out, " (seq 1 to {})", report.last_seq);
            }
            match report.anchored_seq {
                Some(seq) if seq < report.last_seq => {
                    let _ = write!(
                        out,
                        "; head anchors seq {seq}, later records are not yet synced"
                    );
                }
                Some(seq) => {
                    let _ = write!(out, "; head anchors seq {seq}");
                }
                None => {}
            }
        }
        Some(problem) => {
            let _ = write!(
                out,
                "audit log INVALID: {problem}\nrecords verified before the problem: {}",
                report.records
            );
        }
    }
    for file in &report.files {
        let _ = write!(out, "\n  checked {}", file.display());
    }
    out
}

fn json_verdict(report: &VerifyReport) -> serde_json::Value {
    json!({
        "valid": report.is_valid(),
        "files": report.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "records": report.records,
        "lastSeq": report.last_seq,
        "anchoredSeq": report.anchored_seq,
        "problem": report.problem.as_ref().map(json_problem),
    })
}

fn json_problem(problem: &Problem) -> serde_json::Value {
    json!({
        "file": problem.file.display().to_string(),
        "line": problem.line,
        "seq": problem.seq,
        "kind": problem.kind.code(),
        "message": problem.kind.to_string(),
    })
}

/// The last `count` complete lines of `data`: as stored with `json` (made terminal-safe), else
/// under a header with each record's seq, time (relative and exact), kind, approval and details.
fn tail(data: &[u8], count: usize, json: bool) -> anyhow::Result<ExitCode> {
    let lines: Vec<&[u8]> = data
        .split_inclusive(|&b| b == b'\n')
        .filter(|line| line.ends_with(b"\n"))
        .collect();
    let last = &lines[lines.len().saturating_sub(count)..];
    let mut stdout = io::stdout().lock();
    if json {
        for line in last {
            writeln!(stdout, "{}", terminal_safe(line)).context("cannot write to stdout")?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let now = super::now_ms();
    let mut table = Table::new(["SEQ", "TIME", "KIND", "APPROVAL", "DETAILS"]);
    for line in last {
        let Ok(record) = serde_json::from_slice::<serde_json::Value>(line) else {
            table.row([
                "?".into(),
                "-".into(),
                "unreadable".into(),
                "-".into(),
                terminal_safe(line),
            ]);
            continue;
        };
        let text = |key: &str| {
            record[key]
                .as_str()
                .map_or_else(|| "-".to_owned(), |t| one_line(t, 80))
        };
        table.row([
            record["seq"].to_string(),
            record["atMs"]
                .as_u64()
                .map_or_else(|| "-".to_owned(), |ms| when(ms, now)),
            text("kind"),
            text("approvalId"),
            one_line(&record["payload"].to_string(), DETAILS_CHARS),
        ]);
    }
    write!(stdout, "{table}").context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}

/// The most characters of a record's payload a `tail` row shows; `--json` shows it whole.
const DETAILS_CHARS: usize = 120;

/// The line with control characters and bidi overrides shown as escapes: the writer never
/// produces them raw, so any that are present were put there to mislead a terminal reader.
fn terminal_safe(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line.strip_suffix(b"\n").unwrap_or(line));
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        if c.is_control() || bidi {
            let _ = write!(out, "\\u{{{:04x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_control_characters_and_bidi_overrides_as_escapes() {
        let shown = terminal_safe("echo \u{1b}[31mhi\u{202e}txt.exe\n".as_bytes());
        assert_eq!(shown, "echo \\u{001b}[31mhi\\u{202e}txt.exe");
    }
}
