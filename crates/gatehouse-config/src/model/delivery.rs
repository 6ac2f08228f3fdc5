//! `channels.<name>.delivery` and `channels.<name>.retry`: how fast and how persistently
//! Gatehouse calls a chat platform. `retry` is OpenClaw's key; `delivery` is Gatehouse's own
//! (OpenClaw has no pacing keys). Unset keys keep the platform's documented limits.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::de::opt_parsed;

/// `channels.<name>.delivery`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelDeliveryConfig {
    /// Calls into one chat, e.g. `"1/s"` (Telegram's documented limit).
    #[serde(default, deserialize_with = "opt_parsed")]
    pub chat_rate: Option<Rate>,
    /// Calls into one group chat, on top of `chatRate`, e.g. `"20/min"`.
    #[serde(default, deserialize_with = "opt_parsed")]
    pub group_rate: Option<Rate>,
    /// Every call of the bot, e.g. `"30/s"`.
    #[serde(default, deserialize_with = "opt_parsed")]
    pub bot_rate: Option<Rate>,
    /// Edits and deletes across the bot, e.g. `"50/min"` (Slack's `chat.update` tier).
    #[serde(default, deserialize_with = "opt_parsed")]
    pub edit_rate: Option<Rate>,
    /// A chat with more approval messages waiting than this gets one digest instead.
    pub digest_after: Option<u32>,
    /// Calls (and so connections) to the platform at once.
    pub max_connections: Option<u32>,
}

/// `channels.<name>.retry`, as OpenClaw spells it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelRetryConfig {
    /// Attempts per reply or answer; approval cards are retried until delivered and edited.
    pub attempts: Option<u32>,
    /// The first delay, doubled after each further failure, ms.
    pub min_delay_ms: Option<u64>,
    /// The cap on a delay, ms.
    pub max_delay_ms: Option<u64>,
    /// How far each delay is moved at random either way, 0 to 1.
    #[serde(default, deserialize_with = "fraction")]
    pub jitter: Option<Fraction>,
}

/// A rate limit as written: `"off"`, or `<calls>/<span>` with the span `s`, `min`, `h` (also
/// `second`, `minute`, `hour`), optionally counted (`"5/5s"`, `"20/60s"`, `"1/500ms"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// No limit.
    Off,
    /// At most `calls` in any span of `per_ms`.
    Limit {
        /// Calls allowed in the span; at least 1.
        calls: u32,
        /// The span, ms; at least 1.
        per_ms: u64,
    },
}

impl FromStr for Rate {
    type Err = String;

    fn from_str(text: &str) -> Result<Rate, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("off") {
            return Ok(Rate::Off);
        }
        let expected = || {
            format!(
                "{text:?} is not a rate: write \"off\" or calls per span, such as \"1/s\", \
                 \"20/min\" or \"5/5s\""
            )
        };
        let (calls, span) = text.split_once('/').ok_or_else(expected)?;
        let calls: u32 = calls.trim().parse().map_err(|_| expected())?;
        let span = span.trim();
        let digits = span.bytes().take_while(u8::is_ascii_digit).count();
        let (count, unit) = span.split_at(digits);
        let count: u64 = if count.is_empty() {
            1
        } else {
            count.parse().map_err(|_| expected())?
        };
        let unit_ms = match unit.trim() {
            "ms" => 1,
            "s" | "sec" | "second" => 1000,
            "m" | "min" | "minute" => 60_000,
            "h" | "hour" => 3_600_000,
            _ => return Err(expected()),
        };
        if calls == 0 || count == 0 {
            return Err(format!(
                "{text:?}: a rate must allow at least one call in a span longer than zero; \
                 write \"off\" for no limit"
            ));
        }
        Ok(Rate::Limit {
            calls,
            per_ms: count.saturating_mul(unit_ms),
        })
    }
}

/// A number from 0 to 1, kept exactly as millionths so the config stays comparable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fraction {
    millionths: u32,
}

impl Fraction {
    /// The value, 0 to 1.
    pub fn value(self) -> f64 {
        f64::from(self.millionths) / 1_000_000.0
    }
}

fn fraction<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Fraction>, D::Error> {
    deserializer.deserialize_any(FractionVisitor)
}

struct FractionVisitor;

impl<'de> Visitor<'de> for FractionVisitor {
    type Value = Option<Fraction>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number from 0 to 1")
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        if !(0.0..=1.0).contains(&value) {
            return Err(E::custom(format!("must be from 0 to 1, got {value}")));
        }
        // In range, so the product fits.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let millionths = (value * 1_000_000.0).round() as u32;
        Ok(Some(Fraction { millionths }))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        match value {
            0 => Ok(Some(Fraction { millionths: 0 })),
            1 => Ok(Some(Fraction {
                millionths: 1_000_000,
            })),
            other => Err(E::custom(format!("must be from 0 to 1, got {other}"))),
        }
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        u64::try_from(value).map_or_else(
            |_| Err(E::custom(format!("must be from 0 to 1, got {value}"))),
            |value| self.visit_u64(value),
        )
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rates_as_operators_write_them() {
        let limit = |calls, per_ms| Ok(Rate::Limit { calls, per_ms });
        assert_eq!("1/s".parse(), limit(1, 1000));
        assert_eq!(" 20 / min ".parse(), limit(20, 60_000));
        assert_eq!("5/5s".parse(), limit(5, 5000));
        assert_eq!("1/500ms".parse(), limit(1, 500));
        assert_eq!("100/hour".parse(), limit(100, 3_600_000));
        assert_eq!("OFF".parse(), Ok(Rate::Off));
        for bad in ["", "1", "0/s", "1/0s", "x/s", "1/fortnight", "-1/s"] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }
}
