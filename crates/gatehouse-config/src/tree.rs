//! The config document as a tree of plain values, read once from the JSON5 text.
//!
//! The typed model is deserialized from this tree rather than from the text, so that a value
//! the model refuses can be set aside and the typed pass run again: the loader then reports
//! every refused value in one run instead of stopping at the first. A list element set aside
//! leaves its siblings' indices as they were written ([`Item::index`]), so every path reported
//! names the element in the file.

use std::cell::Cell;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::keypath::{KeyPath, Segment};

mod deserializer;

/// One JSON5 value.
#[derive(Debug)]
pub(crate) enum Node {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// An integer json5 read as unsigned (any non-negative one).
    Unsigned(u64),
    /// An integer json5 read as signed (a negative one).
    Signed(i64),
    /// Any other number (fractions, exponents, `Infinity`, `NaN`, integers beyond 64 bits).
    Float(f64),
    /// A string.
    Str(String),
    /// A list; elements set aside are gone, the rest keep their written index.
    List(Vec<Item>),
    /// An object, its entries in written order (duplicates kept, so the model refuses them as
    /// it would refuse them in the text).
    Object(Object),
}

/// A list element and its index in the file.
#[derive(Debug)]
pub(crate) struct Item {
    /// The element's index as written, before any sibling was set aside.
    pub(crate) index: usize,
    /// The element.
    pub(crate) node: Node,
}

/// An object's entries, and the keys the model reads from it once a typed pass has visited it
/// (what a misspelt key is compared against).
#[derive(Debug, Default)]
pub(crate) struct Object {
    entries: Vec<(String, Node)>,
    fields: Cell<&'static [&'static str]>,
}

impl Object {
    /// The keys the model reads here, as the last typed pass declared them; empty when the
    /// object is a map (any key) or was not reached.
    pub(crate) fn fields(&self) -> &'static [&'static str] {
        self.fields.get()
    }
}

impl Node {
    /// Reads JSON5 `text`; the error is json5's, with the position of the syntax error.
    pub(crate) fn parse(text: &str) -> Result<Self, json5::Error> {
        json5::from_str(text)
    }

    /// The value at `path` (as the current tree indexes it).
    pub(crate) fn get(&self, path: &[Segment]) -> Option<&Node> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let child = match (self, first) {
            (Node::Object(object), Segment::Key(key)) => object
                .entries
                .iter()
                .find_map(|(name, node)| (name == key).then_some(node)),
            (Node::List(items), Segment::Index(index)) => items.get(*index).map(|item| &item.node),
            _ => None,
        }?;
        child.get(rest)
    }

    /// Sets aside the value at `path`: an object entry (every entry of that key) or a list
    /// element. Returns whether there was one; the root cannot be set aside.
    pub(crate) fn remove(&mut self, path: &[Segment]) -> bool {
        let Some((last, parent)) = path.split_last() else {
            return false;
        };
        match (self.get_mut(parent), last) {
            (Some(Node::Object(object)), Segment::Key(key)) => {
                let before = object.entries.len();
                object.entries.retain(|(name, _)| name != key);
                object.entries.len() != before
            }
            (Some(Node::List(items)), Segment::Index(index)) if *index < items.len() => {
                items.remove(*index);
                true
            }
            _ => false,
        }
    }

    fn get_mut(&mut self, path: &[Segment]) -> Option<&mut Node> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let child = match (self, first) {
            (Node::Object(object), Segment::Key(key)) => object
                .entries
                .iter_mut()
                .find_map(|(name, node)| (name == key).then_some(node)),
            (Node::List(items), Segment::Index(index)) => {
                items.get_mut(*index).map(|item| &mut item.node)
            }
            _ => None,
        }?;
        child.get_mut(rest)
    }

    /// `path` as written in the file: each list index of the current tree replaced by the
    /// element's written index. Steps past the tree are kept as they are.
    pub(crate) fn written_path(&self, path: &KeyPath) -> KeyPath {
        let mut node = Some(self);
        let mut out = Vec::with_capacity(path.segments().len());
        for segment in path.segments() {
            let step = match (node, segment) {
                (Some(Node::List(items)), Segment::Index(index)) => {
                    let item = items.get(*index);
                    node = item.map(|item| &item.node);
                    Segment::Index(item.map_or(*index, |item| item.index))
                }
                (Some(found), segment) => {
                    node = found.get(std::slice::from_ref(segment));
                    segment.clone()
                }
                (None, segment) => segment.clone(),
            };
            out.push(step);
        }
        KeyPath::from_segments(out)
    }

    /// The object at `path`, if that is one.
    pub(crate) fn object(&self, path: &[Segment]) -> Option<&Object> {
        match self.get(path)? {
            Node::Object(object) => Some(object),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON5 value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<Node, E> {
        Ok(Node::Bool(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Node, E> {
        Ok(Node::Unsigned(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Node, E> {
        Ok(Node::Signed(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Node, E> {
        Ok(Node::Float(value))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Node, E> {
        Ok(Node::Str(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Node, E> {
        Ok(Node::Str(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(node) = seq.next_element()? {
            items.push(Item {
                index: items.len(),
                node,
            });
        }
        Ok(Node::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(Node::Object(Object {
            entries,
            fields: Cell::new(&[]),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(written: &str) -> KeyPath {
        KeyPath::parse(written).unwrap()
    }

    #[test]
    fn keeps_written_indices_after_an_element_is_set_aside() {
        let mut tree = Node::parse("{ a: [ 1, 'x', 3, 4 ] }").unwrap();
        assert!(tree.remove(path("a[1]").segments()));
        assert_eq!(tree.written_path(&path("a[1]")).to_string(), "a[2]");
        assert_eq!(tree.written_path(&path("a[2]")).to_string(), "a[3]");
        assert!(matches!(
            tree.get(path("a[1]").segments()),
            Some(Node::Unsigned(3))
        ));
    }

    #[test]
    fn sets_aside_every_entry_of_a_duplicated_key() {
        let mut tree = Node::parse("{ a: 1, b: 2, a: 3 }").unwrap();
        assert!(tree.remove(path("a").segments()));
        assert!(tree.get(path("a").segments()).is_none());
        assert!(tree.get(path("b").segments()).is_some());
        assert!(!tree.remove(path("a").segments()));
        assert!(!tree.remove(&[]));
    }
}
