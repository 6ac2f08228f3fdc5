//! Warning de-duplication with bounded memory: a misconfigured list is evaluated on every tool
//! call, and its warning must neither flood the log nor grow memory without limit.

use std::collections::{HashSet, VecDeque};

/// Most distinct warnings one evaluation keeps; the rest are counted in a final line.
const MAX_WARNINGS_PER_EVALUATION: usize = 64;

/// The warnings of one evaluation, each kept once, in first-seen order.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    kept: Vec<String>,
    suppressed: usize,
}

impl Warnings {
    /// Records a warning unless an identical one was already recorded.
    pub(crate) fn push(&mut self, message: String) {
        if self.kept.contains(&message) {
            return;
        }
        if self.kept.len() >= MAX_WARNINGS_PER_EVALUATION {
            self.suppressed += 1;
            return;
        }
        self.kept.push(message);
    }

    /// The recorded warnings, plus a count of those dropped over the cap.
    pub(crate) fn into_vec(mut self) -> Vec<String> {
        if self.suppressed > 0 {
            self.kept.push(format!(
                "tools: {} further warnings suppressed",
                self.suppressed
            ));
        }
        self.kept
    }
}

/// Remembers which warnings were already reported across evaluations, forgetting the oldest once
/// `capacity` distinct messages are held; a long-running gateway keeps one to log each config
/// problem once rather than on every tool call.
#[derive(Debug, Clone)]
pub struct WarningLog {
    capacity: usize,
    order: VecDeque<String>,
    seen: HashSet<String>,
}

impl WarningLog {
    /// A log holding at most `capacity` distinct messages (at least one).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            order: VecDeque::new(),
            seen: HashSet::new(),
        }
    }

    /// Returns `true` the first time a message is seen (or again once it has been forgotten).
    pub fn first_time(&mut self, message: &str) -> bool {
        if self.seen.contains(message) {
            return false;
        }
        if self.order.len() >= self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.seen.remove(&oldest);
        }
        self.order.push_back(message.to_owned());
        self.seen.insert(message.to_owned());
        true
    }

    /// Number of messages currently remembered; never above the capacity.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether nothing is remembered yet.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_a_repeated_warning_once_per_evaluation() {
        let mut warnings = Warnings::default();
        warnings.push("a".into());
        warnings.push("b".into());
        warnings.push("a".into());
        assert_eq!(warnings.into_vec(), vec!["a".to_owned(), "b".to_owned()]);
    }

    #[test]
    fn caps_warnings_per_evaluation_and_counts_the_rest() {
        let mut warnings = Warnings::default();
        for i in 0..MAX_WARNINGS_PER_EVALUATION + 3 {
            warnings.push(format!("w{i}"));
        }
        let out = warnings.into_vec();
        assert_eq!(out.len(), MAX_WARNINGS_PER_EVALUATION + 1);
        assert_eq!(out.last().unwrap(), "tools: 3 further warnings suppressed");
    }

    #[test]
    fn warning_log_reports_once_and_stays_bounded() {
        let mut log = WarningLog::new(2);
        assert!(log.first_time("a"));
        assert!(!log.first_time("a"));
        assert!(log.first_time("b"));
        assert!(log.first_time("c"));
        assert_eq!(log.len(), 2);
        // "a" was evicted as the oldest, so it is reported again.
        assert!(log.first_time("a"));
        assert!(!log.first_time("c"));
    }
}
