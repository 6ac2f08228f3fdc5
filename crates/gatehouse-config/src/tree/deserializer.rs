//! Reading the typed model from a [`Node`] tree.
//!
//! It is as strict as json5's own deserializer: an object is never read as a struct from a list
//! (serde's derived structs would accept one), a string is never a number. Its errors say in
//! the operator's words what was wanted ("a list `[ … ]`"), and a value of the wrong type is
//! named by its kind only: it may be a secret typed in the wrong place.

use std::fmt;

use serde::de::value::{MapDeserializer, SeqDeserializer, StrDeserializer};
use serde::de::{self, Deserializer, Expected, IntoDeserializer, Unexpected, Visitor};
use serde::forward_to_deserialize_any;

use super::{Item, Node, Object};

/// Why the model refused a value.
#[derive(Debug)]
pub(crate) struct ValueError {
    message: String,
    missing_field: Option<&'static str>,
}

impl ValueError {
    /// The field a struct lacked, when that is the refusal; the loader tells a field it set
    /// aside itself from one the file never had.
    pub(crate) fn missing_field(&self) -> Option<&'static str> {
        self.missing_field
    }

    /// The refusal, lower-case, for the operator.
    pub(crate) fn into_message(self) -> String {
        self.message
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ValueError {}

impl de::Error for ValueError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Self {
            message: message.to_string(),
            missing_field: None,
        }
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::custom(format!(
            "wrong type: expected {}, found {}",
            wanted(expected),
            kind(&unexpected)
        ))
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn Expected) -> Self {
        Self::custom(format!(
            "invalid value {}: expected {}",
            value(&unexpected),
            wanted(expected)
        ))
    }

    fn missing_field(field: &'static str) -> Self {
        Self {
            message: format!("missing field `{field}`"),
            missing_field: Some(field),
        }
    }
}

const OBJECT: &str = "an object `{ … }`";

/// What serde's visitors expect, in the words of the config's own documentation.
fn wanted(expected: &dyn Expected) -> String {
    let text = expected.to_string();
    let up_to = |max: u64| format!("a whole number from 0 to {max}");
    match text.as_str() {
        "u8" => up_to(u8::MAX.into()),
        "u16" => up_to(u16::MAX.into()),
        "u32" => up_to(u32::MAX.into()),
        "u64" | "usize" => "a whole number, 0 or more".to_owned(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "a sequence" => "a list `[ … ]`".to_owned(),
        "a map" => OBJECT.to_owned(),
        "a boolean" => "true or false".to_owned(),
        "a string" | "a borrowed string" => "a string".to_owned(),
        "path string" => "a string (a file path)".to_owned(),
        "unit" => "null".to_owned(),
        _ if text.starts_with("struct ") => OBJECT.to_owned(),
        _ => text,
    }
}

/// The kind of a value of the wrong type, never the value itself.
fn kind(unexpected: &Unexpected<'_>) -> String {
    match unexpected {
        Unexpected::Bool(value) => format!("`{value}`"),
        Unexpected::Unsigned(_) | Unexpected::Signed(_) => "a whole number".to_owned(),
        Unexpected::Float(_) => "a floating-point number".to_owned(),
        Unexpected::Str(_) => "a string".to_owned(),
        Unexpected::Unit => "null".to_owned(),
        Unexpected::Seq => "a list".to_owned(),
        Unexpected::Map => "an object".to_owned(),
        other => other.to_string(),
    }
}

/// A value of the right type but out of range or not among the choices: shown, since only
/// settings (never secrets, which take any string) are refused this way.
fn value(unexpected: &Unexpected<'_>) -> String {
    match unexpected {
        Unexpected::Bool(value) => value.to_string(),
        Unexpected::Unsigned(value) => value.to_string(),
        Unexpected::Signed(value) => value.to_string(),
        Unexpected::Float(value) => value.to_string(),
        Unexpected::Str(value) => format!("{value:?}"),
        other => other.to_string(),
    }
}

impl Node {
    fn unexpected(&self) -> Unexpected<'_> {
        match self {
            Node::Null => Unexpected::Unit,
            Node::Bool(value) => Unexpected::Bool(*value),
            Node::Unsigned(value) => Unexpected::Unsigned(*value),
            Node::Signed(value) => Unexpected::Signed(*value),
            Node::Float(value) => Unexpected::Float(*value),
            Node::Str(value) => Unexpected::Str(value),
            Node::List(_) => Unexpected::Seq,
            Node::Object(_) => Unexpected::Map,
        }
    }
}

impl<'de> IntoDeserializer<'de, ValueError> for &'de Node {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

fn visit_list<'de, V: Visitor<'de>>(
    items: &'de [Item],
    visitor: V,
) -> Result<V::Value, ValueError> {
    let mut seq = SeqDeserializer::new(items.iter().map(|item| &item.node));
    let value = visitor.visit_seq(&mut seq)?;
    seq.end()?;
    Ok(value)
}

fn visit_object<'de, V: Visitor<'de>>(
    object: &'de Object,
    visitor: V,
) -> Result<V::Value, ValueError> {
    let entries = object
        .entries
        .iter()
        .map(|(key, node)| (key.as_str(), node));
    let mut map = MapDeserializer::new(entries);
    let value = visitor.visit_map(&mut map)?;
    map.end()?;
    Ok(value)
}

impl<'de> Deserializer<'de> for &'de Node {
    type Error = ValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self {
            Node::Null => visitor.visit_unit(),
            Node::Bool(value) => visitor.visit_bool(*value),
            Node::Unsigned(value) => visitor.visit_u64(*value),
            Node::Signed(value) => visitor.visit_i64(*value),
            Node::Float(value) => visitor.visit_f64(*value),
            Node::Str(value) => visitor.visit_borrowed_str(value),
            Node::List(items) => visit_list(items, visitor),
            Node::Object(object) => visit_object(object, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self {
            Node::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self {
            Node::List(items) => visit_list(items, visitor),
            other => Err(de::Error::invalid_type(other.unexpected(), &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self {
            Node::Object(object) => visit_object(object, visitor),
            other => Err(de::Error::invalid_type(other.unexpected(), &visitor)),
        }
    }

    /// Notes the struct's keys on the object, for "did you mean" on a misspelt one.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        if let Node::Object(object) = self {
            object.fields.set(fields);
        }
        self.deserialize_map(visitor)
    }

    /// The model's enums are all plain words, written as strings.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        match self {
            Node::Str(value) => {
                let variant: StrDeserializer<'_, ValueError> = value.as_str().into_deserializer();
                visitor.visit_enum(variant)
            }
            other => Err(de::Error::invalid_type(other.unexpected(), &"a string")),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ValueError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct identifier
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;

    fn read<T: Deserialize<'static>>(text: &str) -> Result<T, String> {
        let node = Box::leak(Box::new(Node::parse(text).unwrap()));
        T::deserialize(&*node).map_err(ValueError::into_message)
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Limits {
        burst: Option<u32>,
        list: Option<Vec<String>>,
    }

    #[test]
    fn names_the_wanted_type_in_config_words_and_never_the_value() {
        let refused = |text: &str| read::<Limits>(text).unwrap_err();
        assert_eq!(
            refused("{ burst: 'sekrit' }"),
            "wrong type: expected a whole number from 0 to 4294967295, found a string"
        );
        assert_eq!(
            refused("{ list: 'x' }"),
            "wrong type: expected a list `[ … ]`, found a string"
        );
        assert_eq!(
            refused("{ burst: 1.5 }"),
            "wrong type: expected a whole number from 0 to 4294967295, found a floating-point \
             number"
        );
        assert_eq!(
            refused("{ burst: -1 }"),
            "invalid value -1: expected a whole number from 0 to 4294967295"
        );
        assert_eq!(
            refused("[1, 2]"),
            "wrong type: expected an object `{ … }`, found a list"
        );
    }

    #[test]
    fn reads_maps_options_and_numbers_as_json5_does() {
        let map: BTreeMap<String, Option<u64>> = read("{ a: 1, b: null, c: 0x10 }").unwrap();
        assert_eq!(map["a"], Some(1));
        assert_eq!(map["b"], None);
        assert_eq!(map["c"], Some(16));
        assert_eq!(
            read::<String>("5").unwrap_err(),
            "wrong type: expected a string, found a whole number"
        );
    }
}
