//! Injected failures (`POST /_fake/faults`): calls of a method (optionally to one chat) fail,
//! are rate limited, slowed, cut without an answer, or take effect while their answer is
//! lost — for a number of calls or for a time window. Each platform renders an error in its
//! own wire format; cutting and stalling happen in [`crate::answer`].

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::answer::{Applied, CallSlot};
use crate::error::FakeError;

const ENDPOINT: &str = "/_fake/faults";

/// Which platform a plan belongs to: some fault fields only make sense on one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Platform {
    Telegram,
    Discord,
    Slack,
    Anthropic,
    OpenAi,
}

/// A fault as posted to `/_fake/faults`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FaultSpec {
    /// Method name as logged under `/_fake/calls` (case-insensitive), or `*` for any.
    method: String,
    /// Only calls addressing this chat or channel (as logged in a call's `chat`).
    chat: Option<Scalar>,
    /// How many calls it applies to; 1 unless `for_ms` is given.
    count: Option<u32>,
    /// Applies to every matching call for this long from now (with `count`: whichever ends
    /// first).
    for_ms: Option<u64>,
    /// Answer with this HTTP status.
    status: Option<u16>,
    /// Rate limit: seconds the client must wait, or `"window"` for the time left in the
    /// `for_ms` window; implies status 429 unless `status` is given.
    retry_after: Option<RetryAfterSpec>,
    /// Wait this long before doing anything (then serve, fail or cut).
    delay_ms: Option<u64>,
    /// Serve the call, then hold the answer back this long (with `lose_answer`: then cut).
    stall_ms: Option<u64>,
    /// Cut the connection without answering and without doing the call.
    #[serde(default)]
    reset: bool,
    /// Do the call, then cut the connection instead of answering: the answer is lost.
    #[serde(default)]
    lose_answer: bool,
    /// Error text in the platform's error field instead of the default one.
    description: Option<String>,
    /// Discord only: rate-limit scope (`user`, `global`, `shared`).
    scope: Option<RateScope>,
}

/// A chat id written as a number (Telegram) or a string.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Int(i64),
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum RetryAfterSpec {
    Seconds(f64),
    Word(WindowWord),
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum WindowWord {
    Window,
}

/// Discord's `X-RateLimit-Scope`: a per-route bucket of the bot, the bot's global limit, or
/// a limit shared by every user of a resource.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RateScope {
    #[default]
    User,
    Global,
    Shared,
}

/// What a validated fault does to each call it takes.
#[derive(Clone, Debug, PartialEq)]
struct Fault {
    delay: Option<Duration>,
    action: Action,
    stall: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq)]
enum Action {
    /// Serve normally (after the delay; then the stall).
    Serve,
    /// Answer with an error instead.
    Fail {
        status: u16,
        retry_after: Option<RetryAfterSpec>,
        description: Option<String>,
        scope: RateScope,
    },
    /// Cut without doing the call.
    Reset,
    /// Do the call, cut instead of answering.
    LoseAnswer,
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
    /// Discord's rate-limit scope.
    pub(crate) scope: RateScope,
}

/// What a handler does with a call after the faults had their say.
#[derive(Debug, PartialEq)]
pub(crate) enum Before {
    /// Serve it (an armed stall or lost answer is applied to the answer afterwards).
    Serve,
    /// Answer with this error instead.
    Fail(FailWith),
    /// Do nothing: the connection is cut, whatever is answered is never sent.
    Unsent,
}

fn refuse(reason: impl Into<String>) -> FakeError {
    FakeError::control(ENDPOINT, reason)
}

impl Fault {
    fn validate(spec: &FaultSpec, platform: Platform) -> Result<Self, FakeError> {
        if let Some(RetryAfterSpec::Seconds(secs)) = spec.retry_after
            && !(secs.is_finite() && secs >= 0.0)
        {
            return Err(refuse(
                "retry_after must be a non-negative number or \"window\"",
            ));
        }
        if spec.retry_after == Some(RetryAfterSpec::Word(WindowWord::Window))
            && spec.for_ms.is_none()
        {
            return Err(refuse("retry_after \"window\" needs for_ms"));
        }
        if let Some(status) = spec.status
            && !(100..=599).contains(&status)
        {
            return Err(refuse(format!("status {status} is not an HTTP status")));
        }
        if spec.scope.is_some() && (platform != Platform::Discord || spec.retry_after.is_none()) {
            return Err(refuse(
                "scope is for Discord rate limits (with retry_after)",
            ));
        }
        let status = spec.status.or(spec.retry_after.map(|_| 429));
        let actions = [status.is_some(), spec.reset, spec.lose_answer];
        if actions.iter().filter(|a| **a).count() > 1 {
            return Err(refuse(
                "give only one of status/retry_after, reset and lose_answer",
            ));
        }
        if spec.stall_ms.is_some() && (status.is_some() || spec.reset) {
            return Err(refuse(
                "stall_ms holds back an answer: not with an error or a reset",
            ));
        }
        let action = match status {
            Some(status) => Action::Fail {
                status,
                retry_after: spec.retry_after,
                description: spec.description.clone(),
                scope: spec.scope.unwrap_or_default(),
            },
            None if spec.reset => Action::Reset,
            None if spec.lose_answer => Action::LoseAnswer,
            None if spec.delay_ms.is_some() || spec.stall_ms.is_some() => Action::Serve,
            None => {
                return Err(refuse(
                    "give at least one of status, retry_after, delay_ms, stall_ms, reset or lose_answer",
                ));
            }
        };
        Ok(Self {
            delay: spec.delay_ms.map(Duration::from_millis),
            action,
            stall: spec.stall_ms.map(Duration::from_millis),
        })
    }
}

#[derive(Debug)]
struct Armed {
    method: String,
    chat: Option<String>,
    /// Calls left; `None` for a pure time window.
    remaining: Option<u32>,
    /// End of the time window, if one was given.
    until: Option<Instant>,
    fault: Fault,
}

impl Armed {
    fn matches(&self, method: &str, chat: Option<&str>) -> bool {
        (self.method == "*" || self.method.eq_ignore_ascii_case(method))
            && self.chat.as_deref().is_none_or(|c| Some(c) == chat)
    }
}

/// Faults waiting to fire, in the order they were posted; the first match wins.
#[derive(Debug)]
pub(crate) struct FaultPlan {
    platform: Platform,
    armed: Mutex<Vec<Armed>>,
}

impl FaultPlan {
    /// An empty plan for one platform.
    pub(crate) fn new(platform: Platform) -> Self {
        Self {
            platform,
            armed: Mutex::new(Vec::new()),
        }
    }

    /// Arms a validated fault.
    pub(crate) fn arm(&self, spec: FaultSpec) -> Result<(), FakeError> {
        if spec.method.trim().is_empty() {
            return Err(refuse("method must not be empty"));
        }
        if spec.count == Some(0) {
            return Err(refuse("count must be at least 1"));
        }
        if spec.for_ms == Some(0) {
            return Err(refuse("for_ms must be at least 1"));
        }
        let fault = Fault::validate(&spec, self.platform)?;
        let remaining = match (spec.count, spec.for_ms) {
            (None, None) => Some(1),
            (count, _) => count,
        };
        let armed = Armed {
            method: spec.method.to_ascii_lowercase(),
            chat: spec.chat.map(|chat| match chat {
                Scalar::Text(text) => text,
                Scalar::Int(n) => n.to_string(),
            }),
            remaining,
            until: spec
                .for_ms
                .map(|ms| Instant::now() + Duration::from_millis(ms)),
            fault,
        };
        self.lock().push(armed);
        Ok(())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Armed>> {
        self.armed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the first armed fault matching the call, counting it down; a fault whose
    /// window ended is dropped on the way. Also returns the end of its window.
    fn take(&self, method: &str, chat: Option<&str>) -> Option<(Fault, Option<Instant>)> {
        let now = Instant::now();
        let mut armed = self.lock();
        armed.retain(|a| a.until.is_none_or(|until| until > now));
        let index = armed.iter().position(|a| a.matches(method, chat))?;
        let entry = &mut armed[index];
        let taken = (entry.fault.clone(), entry.until);
        if let Some(remaining) = &mut entry.remaining {
            *remaining -= 1;
            if *remaining == 0 {
                armed.remove(index);
            }
        }
        Some(taken)
    }

    /// Applies the first matching fault to a call before it is served: waits its delay, and
    /// tells the handler whether to serve, fail or leave the call unanswered. What happens
    /// to the answer afterwards (stall, loss) is noted in `slot` for [`crate::answer`].
    pub(crate) async fn before(&self, method: &str, chat: Option<&str>, slot: &CallSlot) -> Before {
        let Some((fault, until)) = self.take(method, chat) else {
            return Before::Serve;
        };
        if let Some(delay) = fault.delay {
            tokio::time::sleep(delay).await;
        }
        match fault.action {
            Action::Serve => {
                slot.apply(match fault.stall {
                    Some(stall) => Applied::Stalled(stall),
                    None => Applied::Delayed,
                });
                Before::Serve
            }
            Action::Fail {
                status,
                retry_after,
                description,
                scope,
            } => {
                slot.apply(Applied::Error);
                let retry_after = retry_after.map(|spec| match spec {
                    RetryAfterSpec::Seconds(secs) => secs,
                    RetryAfterSpec::Word(WindowWord::Window) => until.map_or(0.0, |until| {
                        until
                            .saturating_duration_since(Instant::now())
                            .as_secs_f64()
                    }),
                });
                Before::Fail(FailWith {
                    status,
                    retry_after,
                    description,
                    scope,
                })
            }
            Action::Reset => {
                slot.apply(Applied::Reset);
                Before::Unsent
            }
            Action::LoseAnswer => {
                slot.apply(Applied::LostAnswer(fault.stall));
                Before::Serve
            }
        }
    }

    /// Number of calls still to be faulted by count-limited faults.
    pub(crate) fn pending(&self) -> u32 {
        let now = Instant::now();
        self.lock()
            .iter()
            .filter(|a| a.until.is_none_or(|until| until > now))
            .filter_map(|a| a.remaining)
            .sum()
    }

    /// The armed faults, for `GET /_fake/faults`.
    pub(crate) fn describe(&self) -> Vec<Value> {
        let now = Instant::now();
        self.lock()
            .iter()
            .filter(|a| a.until.is_none_or(|until| until > now))
            .map(|a| {
                json!({
                    "method": a.method, "chat": a.chat, "remaining": a.remaining,
                    "remaining_ms": a.until.map(|until| {
                        u64::try_from(until.saturating_duration_since(now).as_millis()).unwrap_or(u64::MAX)
                    }),
                })
            })
            .collect()
    }

    /// Disarms everything.
    pub(crate) fn clear(&self) {
        self.lock().clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: &str) -> FaultSpec {
        serde_json::from_str(json).unwrap()
    }

    fn plan(json: &str) -> FaultPlan {
        let plan = FaultPlan::new(Platform::Telegram);
        plan.arm(spec(json)).unwrap();
        plan
    }

    #[test]
    fn fires_exactly_count_times_then_disarms() {
        let plan = plan(r#"{"method":"sendMessage","count":2,"status":400}"#);
        assert!(plan.take("getMe", None).is_none());
        assert!(matches!(
            plan.take("SENDMESSAGE", None).unwrap().0.action,
            Action::Fail { status: 400, .. }
        ));
        assert_eq!(plan.pending(), 1);
        assert!(plan.take("sendmessage", None).is_some());
        assert!(plan.take("sendmessage", None).is_none());
    }

    #[test]
    fn matches_one_chat_only_when_asked() {
        let plan = plan(r#"{"method":"*","chat":42,"status":500}"#);
        assert!(plan.take("sendMessage", Some("7")).is_none());
        assert!(plan.take("sendMessage", None).is_none());
        assert!(plan.take("sendMessage", Some("42")).is_some());
    }

    #[tokio::test(start_paused = true)]
    async fn a_time_window_faults_every_call_until_it_ends() {
        let plan = plan(r#"{"method":"sendMessage","for_ms":1000,"retry_after":"window"}"#);
        let slot = CallSlot::default();
        for _ in 0..5 {
            assert!(matches!(
                plan.before("sendMessage", None, &slot).await,
                Before::Fail(FailWith { status: 429, .. })
            ));
        }
        tokio::time::advance(Duration::from_millis(400)).await;
        let Before::Fail(fail) = plan.before("sendMessage", None, &slot).await else {
            panic!("window ended early");
        };
        assert!((fail.retry_after.unwrap() - 0.6).abs() < 1e-6);
        tokio::time::advance(Duration::from_millis(600)).await;
        assert_eq!(plan.before("sendMessage", None, &slot).await, Before::Serve);
        assert!(plan.describe().is_empty());
    }

    #[test]
    fn count_and_window_end_at_whichever_comes_first() {
        let plan = plan(r#"{"method":"x","count":1,"for_ms":60000,"status":502}"#);
        assert!(plan.take("x", None).is_some());
        assert!(plan.take("x", None).is_none());
    }

    #[test]
    fn retry_after_implies_429() {
        let fault = Fault::validate(
            &spec(r#"{"method":"*","retry_after":1.5}"#),
            Platform::Slack,
        )
        .unwrap();
        assert!(matches!(fault.action, Action::Fail { status: 429, .. }));
    }

    #[test]
    fn refuses_a_fault_that_does_nothing_or_contradicts_itself() {
        let invalid = [
            r#"{"method":"x"}"#,
            r#"{"method":"x","status":99}"#,
            r#"{"method":"x","count":0,"status":400}"#,
            r#"{"method":"x","for_ms":0,"status":400}"#,
            r#"{"method":"x","retry_after":-1}"#,
            r#"{"method":"x","retry_after":"window"}"#,
            r#"{"method":"x","status":500,"reset":true}"#,
            r#"{"method":"x","reset":true,"lose_answer":true}"#,
            r#"{"method":"x","reset":true,"stall_ms":5}"#,
            r#"{"method":"x","retry_after":1,"scope":"global"}"#,
            r#"{"method":" ","status":500}"#,
        ];
        for json in invalid {
            assert!(
                FaultPlan::new(Platform::Telegram).arm(spec(json)).is_err(),
                "{json}"
            );
        }
        FaultPlan::new(Platform::Discord)
            .arm(spec(r#"{"method":"*","retry_after":1,"scope":"global"}"#))
            .unwrap();
    }

    #[tokio::test]
    async fn notes_what_happens_to_the_answer() {
        let cases = [
            (
                r#"{"method":"x","reset":true}"#,
                Before::Unsent,
                Applied::Reset,
            ),
            (
                r#"{"method":"x","lose_answer":true,"stall_ms":5}"#,
                Before::Serve,
                Applied::LostAnswer(Some(Duration::from_millis(5))),
            ),
            (
                r#"{"method":"x","stall_ms":5}"#,
                Before::Serve,
                Applied::Stalled(Duration::from_millis(5)),
            ),
            (
                r#"{"method":"x","delay_ms":1}"#,
                Before::Serve,
                Applied::Delayed,
            ),
        ];
        for (json, before, applied) in cases {
            let slot = CallSlot::default();
            assert_eq!(plan(json).before("x", None, &slot).await, before, "{json}");
            assert_eq!(slot.applied(), Some(applied), "{json}");
        }
    }
}
