//! Finding the line and column of a key path in JSON5 text.
//!
//! The json5 parser attaches a position to any error raised while it visits a key or value,
//! but exposes no positions otherwise. So to locate a key we walk the document along the
//! path and fail on purpose at the target; the position on that error is the answer.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::keypath::{KeyPath, Segment};

const FOUND: &str = "\u{0}gatehouse-located";

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Location {
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
}

impl From<json5::Position> for Location {
    fn from(position: json5::Position) -> Self {
        Self {
            line: position.line + 1,
            column: position.column + 1,
        }
    }
}

/// The position of the key at `path` (or of the array element, for an index), or the
/// deepest existing ancestor when the path does not exist; 1:1 when nothing matches. Unknown
/// keys and broken rules point here: the key is what the operator fixes.
pub(crate) fn locate(text: &str, path: &KeyPath) -> Location {
    walk(text, path, false)
}

/// Like [`locate`], but the position of the value at `path` rather than of its key: a value of
/// the wrong type points here.
pub(crate) fn locate_value(text: &str, path: &KeyPath) -> Location {
    walk(text, path, true)
}

fn walk(text: &str, path: &KeyPath, to_value: bool) -> Location {
    let mut deserializer = json5::Deserializer::from_str(text);
    let seed = Walk {
        rest: path.segments(),
        to_value,
    };
    match seed.deserialize(&mut deserializer) {
        Err(error) => error
            .position()
            .map_or(Location { line: 1, column: 1 }, Location::from),
        Ok(()) => Location { line: 1, column: 1 },
    }
}

/// Walks toward `rest`; returns `Err(FOUND)` raised at the target (a final key itself, unless
/// `to_value`).
struct Walk<'p> {
    rest: &'p [Segment],
    to_value: bool,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Some((Segment::Key(target), rest)) = self.rest.split_first() else {
            return Err(de::Error::custom(FOUND));
        };
        while let Some(matched) = map.next_key_seed(Key {
            target,
            is_last: rest.is_empty() && !self.to_value,
        })? {
            if matched {
                return map.next_value_seed(Walk {
                    rest,
                    to_value: self.to_value,
                });
            }
            map.next_value::<IgnoredAny>()?;
        }
        // The target is missing: point at the end of this object's parent key instead.
        Err(de::Error::custom(FOUND))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Some((Segment::Index(target), rest)) = self.rest.split_first() else {
            return Err(de::Error::custom(FOUND));
        };
        for _ in 0..*target {
            if seq.next_element::<IgnoredAny>()?.is_none() {
                return Err(de::Error::custom(FOUND));
            }
        }
        match seq.next_element_seed(Walk {
            rest,
            to_value: self.to_value,
        })? {
            Some(()) | None => Err(de::Error::custom(FOUND)),
        }
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Err(E::custom(FOUND))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Err(E::custom(FOUND))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(E::custom(FOUND))
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(FOUND))
    }
}

/// Reads one object key; fails at the key itself when it is the final target.
struct Key<'p> {
    target: &'p str,
    is_last: bool,
}

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        match (key == self.target, self.is_last) {
            (true, true) => Err(E::custom(FOUND)),
            (matched, _) => Ok(matched),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "{\n  tools: {\n    exec: { security: 'full' },\n  },\n  agents: { list: [ { id: 'a' },\n    { id: 'b', model: 'x' } ] },\n}\n";

    fn at(path: &KeyPath) -> (usize, usize) {
        let location = locate(TEXT, path);
        (location.line, location.column)
    }

    #[test]
    fn locates_nested_keys() {
        let root = KeyPath::root();
        assert_eq!(at(&root.key("tools")), (2, 3));
        assert_eq!(at(&root.key("tools").key("exec").key("security")), (3, 13));
    }

    #[test]
    fn locates_keys_inside_array_elements() {
        let path = KeyPath::root()
            .key("agents")
            .key("list")
            .index(1)
            .key("model");
        assert_eq!(at(&path), (6, 16));
    }

    #[test]
    fn locates_values_after_their_keys() {
        let path = KeyPath::root().key("tools").key("exec").key("security");
        let at = locate_value(TEXT, &path);
        assert_eq!((at.line, at.column), (3, 23));
        let at = locate_value(TEXT, &KeyPath::root().key("tools"));
        assert_eq!((at.line, at.column), (2, 10));
    }

    #[test]
    fn locates_array_elements() {
        let path = KeyPath::root().key("agents").key("list").index(1);
        assert_eq!(at(&path), (6, 5));
    }
}
