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

/// RFC 3339 timestamp with microseconds, as Discord writes `timestamp` fields.
pub(crate) fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let micros = (ms % 1000) * 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micros:06}+00:00",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), after Howard Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn formats_discord_timestamps() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000000+00:00");
        assert_eq!(
            iso8601(1_709_251_199_123),
            "2024-02-29T23:59:59.123000+00:00"
        );
    }
}
