//! Wall-clock helpers: the fakes stamp calls and messages like the platforms do.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Time since the Unix epoch; a clock before 1970 counts as the epoch itself.
pub(crate) fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    u64::try_from(since_epoch().as_millis()).unwrap_or(u64::MAX)
}

/// Whole seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    since_epoch().as_secs()
}
