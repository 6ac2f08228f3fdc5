//! Every measured approval's moments as CSV, for the question a percentile cannot answer: did
//! the slow ones come together (a stall: the disk, the host) or spread out (queueing)?
//!
//! One row per approval, in schedule order, times in ms: `scheduled` from the phase's start,
//! then `latency` (scheduled → decision), `send_lag` (scheduled → sent), `announce`, `decide`
//! and `answer` (see [`crate::Stages`]; empty when the operator did not see it).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::open_loop::{Phase, Sample};
use crate::operator::Seen;

pub(crate) fn write(path: &Path, phase: &Phase, seen: &HashMap<String, Seen>) {
    let mut samples: Vec<&Sample> = phase.samples.iter().collect();
    samples.sort_by_key(|sample| sample.scheduled);
    let ms = |d: Duration| format!("{:.3}", d.as_secs_f64() * 1e3);
    let mut csv = String::from("scheduled,latency,send_lag,announce,decide,answer\n");
    for sample in samples {
        let stages = crate::Stages::of(sample, seen);
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{}",
            ms(sample.scheduled.saturating_duration_since(phase.started)),
            ms(sample.done.saturating_duration_since(sample.scheduled)),
            ms(sample.sent.saturating_duration_since(sample.scheduled)),
            stages.as_ref().map_or(String::new(), |s| ms(s.announce)),
            stages
                .as_ref()
                .and_then(|s| s.decide)
                .map_or(String::new(), ms),
            stages.as_ref().map_or(String::new(), |s| ms(s.answer)),
        );
    }
    // After the measurement: a file that cannot be written costs the dump, not the report.
    match std::fs::write(path, csv) {
        Ok(()) => println!("  dumped to {}", path.display()),
        Err(error) => eprintln!("  LOAD_DUMP: cannot write {}: {error}", path.display()),
    }
}
