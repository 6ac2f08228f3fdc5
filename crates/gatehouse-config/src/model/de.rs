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
