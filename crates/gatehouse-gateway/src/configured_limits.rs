//! `gateway.limits` from the config file, laid over the built-in defaults.
//!
//! The config crate has already refused zeros and a default run timeout above the maximum (with
//! line and column); this module only maps keys to settings, so an unset key keeps its default.

use std::time::Duration;

use gatehouse_config::model::GatewayLimitsConfig;

use crate::exec::ExecLimits;
use crate::settings::{Limits, RateLimit};

/// The connection and exec limits `config` asks for; defaults where it is silent.
pub fn configured_limits(config: Option<&GatewayLimitsConfig>) -> (Limits, ExecLimits) {
    let mut limits = Limits::default();
    let mut exec = ExecLimits::default();
    let Some(config) = config else {
        return (limits, exec);
    };
    set_usize(&mut limits.max_frame_bytes, config.max_frame_bytes);
    set_usize(&mut limits.max_body_bytes, config.max_body_bytes);
    if let Some(rate) = config.rate_limit {
        limits.rate = if rate.enabled {
            let default = limits.rate.unwrap_or(RateLimit {
                burst: 2_000,
                per_second: 1_000,
            });
            Some(RateLimit {
                burst: rate.burst.unwrap_or(default.burst),
                per_second: rate.per_second.unwrap_or(default.per_second),
            })
        } else {
            None
        };
    }
    set_usize(
        &mut exec.max_pending_per_agent,
        config.max_pending_per_agent,
    );
    set_usize(
        &mut exec.max_pending_per_token,
        config.max_pending_per_token,
    );
    set_usize(&mut exec.max_output_bytes, config.max_output_bytes);
    set_ms(&mut exec.run_timeout, config.run_timeout_ms);
    set_ms(&mut exec.max_run_timeout, config.max_run_timeout_ms);
    set_ms(&mut exec.running_event_after, config.running_event_after_ms);
    if let Some(days) = config.history_days {
        exec.history = Duration::from_secs(days.saturating_mul(24 * 60 * 60));
    }
    (limits, exec)
}

/// A byte or count limit; one beyond the address space saturates, which is no limit in effect.
fn set_usize(target: &mut usize, value: Option<u64>) {
    if let Some(value) = value {
        *target = usize::try_from(value).unwrap_or(usize::MAX);
    }
}

fn set_ms(target: &mut Duration, value: Option<u64>) {
    if let Some(value) = value {
        *target = Duration::from_millis(value);
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_config::model::RateLimitConfig;

    use super::*;

    #[test]
    fn keeps_every_default_without_a_limits_section() {
        let (limits, exec) = configured_limits(None);
        assert_eq!(limits.max_frame_bytes, Limits::default().max_frame_bytes);
        assert_eq!(exec.run_timeout, ExecLimits::default().run_timeout);
    }

    #[test]
    fn maps_each_configured_key_and_keeps_the_rest() {
        let config = GatewayLimitsConfig {
            max_frame_bytes: Some(4_096),
            max_body_bytes: Some(8_192),
            rate_limit: Some(RateLimitConfig {
                enabled: true,
                burst: Some(10),
                per_second: None,
            }),
            max_pending_per_agent: Some(3),
            max_pending_per_token: Some(9),
            max_output_bytes: Some(100),
            run_timeout_ms: Some(2_000),
            max_run_timeout_ms: Some(5_000),
            running_event_after_ms: Some(250),
            history_days: Some(7),
        };
        let (limits, exec) = configured_limits(Some(&config));
        assert_eq!(
            (limits.max_frame_bytes, limits.max_body_bytes),
            (4_096, 8_192)
        );
        assert_eq!(
            limits.rate,
            Some(RateLimit {
                burst: 10,
                per_second: 1_000
            })
        );
        assert_eq!(
            (
                exec.max_pending_per_agent,
                exec.max_pending_per_token,
                exec.max_output_bytes
            ),
            (3, 9, 100)
        );
        assert_eq!(exec.run_timeout, Duration::from_secs(2));
        assert_eq!(exec.max_run_timeout, Duration::from_secs(5));
        assert_eq!(exec.running_event_after, Duration::from_millis(250));
        assert_eq!(exec.history, Duration::from_secs(7 * 24 * 60 * 60));
        assert_eq!(
            exec.approval_timeout,
            ExecLimits::default().approval_timeout
        );
    }

    #[test]
    fn switches_rate_limiting_off_only_when_asked() {
        let config = GatewayLimitsConfig {
            rate_limit: Some(RateLimitConfig {
                enabled: false,
                burst: None,
                per_second: None,
            }),
            ..GatewayLimitsConfig::default()
        };
        assert_eq!(configured_limits(Some(&config)).0.rate, None);
    }
}
