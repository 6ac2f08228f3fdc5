//! Injected failures (`POST /_fake/faults`): the next N calls of a method fail, are rate
//! limited or are slowed down. Each platform renders the failure in its own wire format.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;

use crate::error::FakeError;

const ENDPOINT: &str = "/_fake/faults";

/// A fault as posted to `/_fake/faults`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultSpec {
    /// Method name as logged under `/_fake/calls` (case-insensitive), or `*` for any.
    pub(crate) method: String,
    /// How many calls it applies to; at least one.
    #[serde(default = "one")]
    pub(crate) count: u32,
    /// Answer with this HTTP status.
    pub(crate) status: Option<u16>,
    /// Rate limit: seconds the client must wait; implies status 429 unless `status` is given.
    pub(crate) retry_after: Option<f64>,
    /// Wait this long before answering (normally, or with the fault).
    pub(crate) delay_ms: Option<u64>,
    /// Error text in the platform's error field instead of the default one.
    pub(crate) description: Option<String>,
}

fn one() -> u32 {
    1
}

/// What to do with one call, after validation.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Fault {
    /// Status to answer with; `None` means answer normally (after `delay`).
    pub(crate) status: Option<u16>,
    /// Seconds to wait, for rate-limit faults.
    pub(crate) retry_after: Option<f64>,
    /// Delay before answering.
    pub(crate) delay: Option<Duration>,
    /// Error text override.
    pub(crate) description: Option<String>,
}

impl Fault {
    /// Waits the delay, then says whether the call must fail instead of being served.
    pub(crate) async fn delay_then_failure(&self) -> Option<FailWith> {
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        let status = self.status?;
        Some(FailWith {
            status,
            retry_after: self.retry_after,
            description: self.description.clone(),
        })
    }
}

/// A failure a platform module turns into its own error body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct FailWith {
    /// HTTP status (a Telegram fault may carry 429 in the body only).
    pub(crate) status: u16,
    /// Seconds to wait, when rate limited.
    pub(crate) retry_after: Option<f64>,
    /// Error text override.
    pub(crate) description: Option<String>,
}

impl TryFrom<FaultSpec> for Fault {
    type Error = FakeError;

    fn try_from(spec: FaultSpec) -> Result<Self, FakeError> {
        if spec.method.trim().is_empty() {
            return Err(FakeError::control(ENDPOINT, "method must not be empty"));
        }
        if spec.count == 0 {
            return Err(FakeError::control(ENDPOINT, "count must be at least 1"));
        }
        if let Some(secs) = spec.retry_after
            && !(secs.is_finite() && secs >= 0.0)
        {
            return Err(FakeError::control(
                ENDPOINT,
                "retry_after must be a non-negative number",
            ));
        }
        if let Some(status) = spec.status
            && !(100..=599).contains(&status)
        {
            return Err(FakeError::control(
                ENDPOINT,
                format!("status {status} is not an HTTP status"),
            ));
        }
        let status = spec.status.or(spec.retry_after.map(|_| 429));
        if status.is_none() && spec.delay_ms.is_none() {
            return Err(FakeError::control(
                ENDPOINT,
                "give at least one of status, retry_after or delay_ms",
            ));
        }
        Ok(Self {
            status,
            retry_after: spec.retry_after,
            delay: spec.delay_ms.map(Duration::from_millis),
            description: spec.description,
        })
    }
}

#[derive(Debug)]
struct Armed {
    method: String,
    remaining: u32,
    fault: Fault,
}

/// Faults waiting to fire, in the order they were posted.
#[derive(Debug, Default)]
pub(crate) struct FaultPlan {
    armed: Mutex<Vec<Armed>>,
}

impl FaultPlan {
    /// Arms a validated fault for the next `count` calls of `method`.
    pub(crate) fn arm(&self, spec: FaultSpec) -> Result<(), FakeError> {
        let method = spec.method.to_ascii_lowercase();
        let remaining = spec.count;
        let fault = Fault::try_from(spec)?;
        self.armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Armed {
                method,
                remaining,
                fault,
            });
        Ok(())
    }

    /// Takes the first armed fault matching `method`, counting it down.
    pub(crate) fn take(&self, method: &str) -> Option<Fault> {
        let mut armed = self.armed.lock().unwrap_or_else(PoisonError::into_inner);
        let index = armed
            .iter()
            .position(|a| a.method == "*" || a.method.eq_ignore_ascii_case(method))?;
        let entry = &mut armed[index];
        entry.remaining -= 1;
        let fault = entry.fault.clone();
        if entry.remaining == 0 {
            armed.remove(index);
        }
        Some(fault)
    }

    /// Number of calls still to be faulted, for the control endpoint's answer.
    pub(crate) fn pending(&self) -> u32 {
        self.armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|a| a.remaining)
            .sum()
    }

    /// Disarms everything.
    pub(crate) fn clear(&self) {
        self.armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> FaultSpec {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn fires_exactly_count_times_then_disarms() {
        let plan = FaultPlan::default();
        plan.arm(spec(r#"{"method":"sendMessage","count":2,"status":400}"#))
            .unwrap();
        assert!(plan.take("getMe").is_none());
        assert_eq!(plan.take("SENDMESSAGE").unwrap().status, Some(400));
        assert_eq!(plan.pending(), 1);
        assert!(plan.take("sendmessage").is_some());
        assert!(plan.take("sendmessage").is_none());
    }

    #[test]
    fn retry_after_implies_429() {
        let fault = Fault::try_from(spec(r#"{"method":"*","retry_after":1.5}"#)).unwrap();
        assert_eq!(fault.status, Some(429));
        assert_eq!(fault.retry_after, Some(1.5));
    }

    #[test]
    fn refuses_a_fault_that_does_nothing() {
        assert!(Fault::try_from(spec(r#"{"method":"x"}"#)).is_err());
        assert!(Fault::try_from(spec(r#"{"method":"x","status":99}"#)).is_err());
        assert!(Fault::try_from(spec(r#"{"method":"x","count":0,"status":400}"#)).is_err());
        assert!(Fault::try_from(spec(r#"{"method":"x","retry_after":-1}"#)).is_err());
    }
}
