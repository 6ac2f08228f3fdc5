//! Deserialization helpers for values parsed with `FromStr` (the policy crate's modes are
//! not `Deserialize`: the core stays free of wire formats).

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};

/// An optional value parsed from a string; `null` or absence is `None`. Errors are raised
/// while the string is visited, so the parser reports the value's own line and column.
pub(crate) fn opt_parsed<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: fmt::Display,
{
    deserializer.deserialize_any(Parsed(PhantomData))
}

struct Parsed<T>(PhantomData<T>);

impl<'de, T> Visitor<'de> for Parsed<T>
where
    T: FromStr,
    T::Err: fmt::Display,
{
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<T>, E> {
        value.parse().map(Some).map_err(E::custom)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
}

/// A list of chat ids, each written as a string or a number (Telegram and Discord ids are
/// often pasted as numbers); numbers are kept as their decimal text.
pub(crate) fn ids<'de, D>(deserializer: D) -> Result<Vec<String>, D::Error>
where
    D: Deserializer<'de>,
{
    deserializer.deserialize_seq(Ids)
}

struct Ids;

impl<'de> Visitor<'de> for Ids {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of ids (strings or integers)")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
        let mut out = Vec::new();
        while let Some(id) = seq.next_element::<Id>()? {
            out.push(id.0);
        }
        Ok(out)
    }
}

/// One id, as a string or an integer.
pub(crate) struct Id(pub(crate) String);

impl<'de> de::Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(IdVisitor)
    }
}

struct IdVisitor;

impl<'de> Visitor<'de> for IdVisitor {
    type Value = Id;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an integer id")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Id, E> {
        Ok(Id(value.to_owned()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Id, E> {
        Ok(Id(value.to_string()))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Id, E> {
        Ok(Id(value.to_string()))
    }
}

/// A duration written as a number of seconds (`300`) or as text with a unit (`"1500ms"`,
/// `"90s"`, `"30m"`, `"2h"`); zero and anything else are refused at the value itself.
pub(crate) fn opt_duration<'de, D>(deserializer: D) -> Result<Option<std::time::Duration>, D::Error>
where
    D: Deserializer<'de>,
{
    deserializer.deserialize_any(DurationVisitor).map(Some)
}

/// A map of durations, each as [`opt_duration`] reads one.
pub(crate) fn durations<'de, D>(
    deserializer: D,
) -> Result<std::collections::BTreeMap<String, std::time::Duration>, D::Error>
where
    D: Deserializer<'de>,
{
    struct Entry(std::time::Duration);
    impl<'de> de::Deserialize<'de> for Entry {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_any(DurationVisitor).map(Entry)
        }
    }
    let raw = std::collections::BTreeMap::<String, Entry>::deserialize(deserializer)?;
    Ok(raw.into_iter().map(|(key, entry)| (key, entry.0)).collect())
}

use serde::Deserialize as _;

struct DurationVisitor;

impl DurationVisitor {
    fn seconds<E: de::Error>(seconds: u64) -> Result<std::time::Duration, E> {
        if seconds == 0 {
            return Err(E::custom(
                "a timeout of 0 would expire every approval at once",
            ));
        }
        Ok(std::time::Duration::from_secs(seconds))
    }
}

impl Visitor<'_> for DurationVisitor {
    type Value = std::time::Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number of seconds, or a duration such as \"90s\", \"30m\" or \"2h\"")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Self::seconds(value)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        u64::try_from(value)
            .map_err(|_| E::custom(format!("a duration cannot be negative, got {value}")))
            .and_then(Self::seconds)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        let text = value.trim();
        let split = text
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: u64 = number.parse().map_err(|_| {
            E::custom(format!(
                "{value:?} is not a duration (expected a number with ms, s, m or h)"
            ))
        })?;
        let millis = match unit.trim() {
            "ms" => Some(number),
            "s" | "" => number.checked_mul(1_000),
            "m" => number.checked_mul(60_000),
            "h" => number.checked_mul(3_600_000),
            other => {
                return Err(E::custom(format!(
                    "unknown unit {other:?} in {value:?} (expected ms, s, m or h)"
                )));
            }
        };
        match millis {
            Some(0) => Err(E::custom(
                "a timeout of 0 would expire every approval at once",
            )),
            Some(ms) => Ok(std::time::Duration::from_millis(ms)),
            None => Err(E::custom(format!("{value:?} is too long"))),
        }
    }
}
