//! Per-token request budgets (token buckets).
//!
//! Keys are token names, which are validated unique and bounded by configuration, so the map
//! cannot grow with traffic. The clock is a parameter to keep the arithmetic testable.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use crate::error::Error;
use crate::settings::RateLimit;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    refilled_at: Instant,
}

/// The buckets of every token that has made a request.
#[derive(Debug)]
pub(crate) struct RateLimiter {
    limit: Option<RateLimit>,
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl RateLimiter {
    pub(crate) fn new(limit: Option<RateLimit>) -> Self {
        Self {
            limit,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request from `token`'s bucket, or says when one will be available.
    pub(crate) fn check(&self, token: &str, now: Instant) -> Result<(), Error> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let burst = f64::from(limit.burst);
        let rate = f64::from(limit.per_second);
        let mut buckets = self.buckets.lock().map_err(|_| Error::Internal {
            reason: "rate limiter lock poisoned".into(),
        })?;
        let bucket = buckets.entry(token.to_owned()).or_insert(Bucket {
            tokens: burst,
            refilled_at: now,
        });
        let elapsed = now
            .saturating_duration_since(bucket.refilled_at)
            .as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
        bucket.refilled_at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        // Rounded up so a client that waits exactly this long is admitted; `Limits::validate`
        // guarantees a non-zero rate.
        let retry_after_ms =
            ((1.0 - bucket.tokens) / rate.max(f64::MIN_POSITIVE) * 1000.0).ceil() as u64;
        Err(Error::RateLimited {
            token: token.to_owned(),
            retry_after_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn allows_a_burst_then_refuses_with_a_retry_delay() {
        let limiter = RateLimiter::new(Some(RateLimit {
            burst: 3,
            per_second: 10,
        }));
        let now = Instant::now();
        for _ in 0..3 {
            limiter.check("a", now).unwrap();
        }
        match limiter.check("a", now).unwrap_err() {
            Error::RateLimited {
                token,
                retry_after_ms,
            } => {
                assert_eq!(token, "a");
                assert_eq!(retry_after_ms, 100);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn refills_at_the_configured_rate_up_to_the_burst() {
        let limiter = RateLimiter::new(Some(RateLimit {
            burst: 2,
            per_second: 10,
        }));
        let start = Instant::now();
        limiter.check("a", start).unwrap();
        limiter.check("a", start).unwrap();
        assert!(limiter.check("a", start).is_err());
        limiter
            .check("a", start + Duration::from_millis(100))
            .unwrap();
        let later = start + Duration::from_secs(60);
        limiter.check("a", later).unwrap();
        limiter.check("a", later).unwrap();
        assert!(limiter.check("a", later).is_err());
    }

    #[test]
    fn keeps_one_bucket_per_token() {
        let limiter = RateLimiter::new(Some(RateLimit {
            burst: 1,
            per_second: 1,
        }));
        let now = Instant::now();
        limiter.check("a", now).unwrap();
        limiter.check("b", now).unwrap();
        assert!(limiter.check("a", now).is_err());
    }

    #[test]
    fn allows_everything_without_a_limit() {
        let limiter = RateLimiter::new(None);
        let now = Instant::now();
        for _ in 0..10_000 {
            limiter.check("a", now).unwrap();
        }
    }
}
