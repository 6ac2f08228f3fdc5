//! `gateway.limits` from the config file, laid over the built-in defaults: the transport's
//! limits (the exec limits are the service's, `ExecLimits::configured`).
//!
//! The config crate has already refused zeros and a default run timeout above the maximum (with
//! line and column); this module only maps keys to settings, so an unset key keeps its default.

use gatehouse_config::model::GatewayLimitsConfig;

use crate::settings::{Limits, RateLimit};

/// The connection limits `config` asks for; defaults where it is silent.
pub fn configured_limits(config: Option<&GatewayLimitsConfig>) -> Limits {
    let mut limits = Limits::default();
    let Some(config) = config else {
        return limits;
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
    limits
}

/// A byte or count limit; one beyond the address space saturates, which is no limit in effect.
fn set_usize(target: &mut usize, value: Option<u64>) {
    if let Some(value) = value {
        *target = usize::try_from(value).unwrap_or(usize::MAX);
    }
}

#[cfg(test)]
mod tests {
    use gatehouse_config::model::RateLimitConfig;

    use super::*;

    #[test]
    fn keeps_every_default_without_a_limits_section() {
        let limits = configured_limits(None);
        assert_eq!(limits.max_frame_bytes, Limits::default().max_frame_bytes);
    }

    #[test]
    fn maps_each_configured_connection_key_and_keeps_the_rest() {
        let config = GatewayLimitsConfig {
            max_frame_bytes: Some(4_096),
            max_body_bytes: Some(8_192),
            rate_limit: Some(RateLimitConfig {
                enabled: true,
                burst: Some(10),
                per_second: None,
            }),
            ..GatewayLimitsConfig::default()
        };
        let limits = configured_limits(Some(&config));
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
        assert_eq!(configured_limits(Some(&config)).rate, None);
    }
}
