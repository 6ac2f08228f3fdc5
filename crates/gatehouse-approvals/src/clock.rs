//! Where the manager reads the time, so expiry and grace can be tested with tokio's paused time.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A wall clock in milliseconds since the Unix epoch: stored timestamps and `expiresAtMs` use it,
/// and timers sleep until its deadlines. The timer re-reads the clock after every wake-up, so a
/// wall clock that jumps forward expires approvals early (fail closed) and one that jumps back
/// delays them by the jump.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The operating system's clock, for production.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, millis)
    }
}

/// A wall clock that advances with tokio's clock, anchored at the wall time of its creation.
/// Under `tokio::time::pause` it moves only when tokio's time does, so tests of timeouts and
/// grace periods advance time instead of sleeping.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    anchor_ms: u64,
    anchor: tokio::time::Instant,
}

impl TokioClock {
    /// Anchors the clock at the current wall time and tokio instant.
    pub fn new() -> TokioClock {
        TokioClock {
            anchor_ms: SystemClock.now_ms(),
            anchor: tokio::time::Instant::now(),
        }
    }
}

impl Default for TokioClock {
    fn default() -> TokioClock {
        TokioClock::new()
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        self.anchor_ms
            .saturating_add(millis(tokio::time::Instant::now() - self.anchor))
    }
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_paused_time() {
        let clock = TokioClock::new();
        let start = clock.now_ms();
        tokio::time::advance(Duration::from_secs(90)).await;
        assert_eq!(clock.now_ms() - start, 90_000);
    }

    #[test]
    fn system_clock_is_after_2020() {
        assert!(SystemClock.now_ms() > 1_577_836_800_000);
    }
}
