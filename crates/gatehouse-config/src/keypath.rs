//! Dotted key paths (`agents.list[1].tools.deny`) as data, so errors, warnings and the
//! table of ignored OpenClaw keys all speak the same path language.

use std::fmt;

/// One step into a config document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// A path from the document root to one value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyPath(Vec<Segment>);

impl KeyPath {
    /// The path of the document root.
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// This path extended by an object key.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Key(key.to_owned()));
        next
    }

    /// This path extended by an array index.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Index(index));
        next
    }

    /// Reads the path's own written form (`approvals.exec.targets[1].channel`); `None` for text
    /// that is not one.
    pub(crate) fn parse(dotted: &str) -> Option<Self> {
        let mut path = Self::root();
        for part in dotted.split('.') {
            let (key, mut indexes) = match part.split_once('[') {
                Some((key, rest)) => (key, Some(rest)),
                None => (part, None),
            };
            if key.is_empty() {
                return None;
            }
            path = path.key(key);
            while let Some(rest) = indexes {
                let (number, after) = rest.split_once(']')?;
                path = path.index(number.parse().ok()?);
                indexes = match after {
                    "" => None,
                    more => Some(more.strip_prefix('[')?),
                };
            }
        }
        Some(path)
    }

    /// The steps, root first.
    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }

    /// The path of the value holding this one; the root is its own parent.
    pub(crate) fn parent(&self) -> Self {
        Self(
            self.0
                .split_last()
                .map_or_else(Vec::new, |(_, rest)| rest.to_vec()),
        )
    }

    /// The final object key, if the path ends in one.
    pub(crate) fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Segment::Key(key)) => Some(key),
            _ => None,
        }
    }

    /// Whether this path is `ancestor` or lies below it.
    pub(crate) fn starts_with(&self, ancestor: &Self) -> bool {
        self.0.starts_with(&ancestor.0)
    }

    /// The path made of these steps.
    pub(crate) fn from_segments(segments: Vec<Segment>) -> Self {
        Self(segments)
    }

    /// Whether this path matches a pattern such as `agents.list[].model` or `channels.*`:
    /// `*` stands for any one key, `[]` for any index.
    pub(crate) fn matches(&self, pattern: &str) -> bool {
        let mut steps = self.0.iter();
        for part in pattern_parts(pattern) {
            match (part, steps.next()) {
                (PatternPart::AnyKey, Some(Segment::Key(_))) => {}
                (PatternPart::Key(want), Some(Segment::Key(have))) if want == have => {}
                (PatternPart::AnyIndex, Some(Segment::Index(_))) => {}
                _ => return false,
            }
        }
        steps.next().is_none()
    }

    pub(crate) fn from_ignored(path: &serde_ignored::Path<'_>) -> Self {
        let mut out = match path {
            serde_ignored::Path::Root => return Self::root(),
            serde_ignored::Path::Seq { parent, .. }
            | serde_ignored::Path::Map { parent, .. }
            | serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => Self::from_ignored(parent),
        };
        match path {
            serde_ignored::Path::Seq { index, .. } => out.0.push(Segment::Index(*index)),
            serde_ignored::Path::Map { key, .. } => out.0.push(Segment::Key(key.clone())),
            _ => {}
        }
        out
    }

    pub(crate) fn from_path_to_error(path: &serde_path_to_error::Path) -> Self {
        let mut out = Self::root();
        for segment in path.iter() {
            match segment {
                serde_path_to_error::Segment::Seq { index } => out.0.push(Segment::Index(*index)),
                serde_path_to_error::Segment::Map { key } => out.0.push(Segment::Key(key.clone())),
                serde_path_to_error::Segment::Enum { .. }
                | serde_path_to_error::Segment::Unknown => {}
            }
        }
        out
    }
}

enum PatternPart<'a> {
    Key(&'a str),
    AnyKey,
    AnyIndex,
}

fn pattern_parts(pattern: &str) -> impl Iterator<Item = PatternPart<'_>> {
    pattern.split('.').flat_map(|part| {
        let (name, indexed) = match part.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (part, false),
        };
        let key = match name {
            "*" => PatternPart::AnyKey,
            name => PatternPart::Key(name),
        };
        std::iter::once(key).chain(indexed.then_some(PatternPart::AnyIndex))
    })
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("(root)");
        }
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_keys_and_indices() {
        let path = KeyPath::root().key("agents").key("list").index(1).key("id");
        assert_eq!(path.to_string(), "agents.list[1].id");
    }

    #[test]
    fn parses_what_it_displays_and_nothing_else() {
        for written in [
            "agents.list[1].id",
            "approvals.exec.targets[0]",
            "a[2][3].b",
            "tools",
        ] {
            let parsed = KeyPath::parse(written).unwrap();
            assert_eq!(parsed.to_string(), written);
        }
        for broken in ["", "a..b", "a[x]", "a[1", "[1]", "a[1]b"] {
            assert_eq!(KeyPath::parse(broken), None, "{broken}");
        }
    }

    #[test]
    fn matches_wildcards_and_indices() {
        let path = KeyPath::root()
            .key("agents")
            .key("list")
            .index(3)
            .key("model");
        assert!(path.matches("agents.list[].model"));
        assert!(!path.matches("agents.list[].tools"));
        assert!(!path.matches("agents.list"));
        assert!(
            KeyPath::root()
                .key("channels")
                .key("signal")
                .matches("channels.*")
        );
        assert!(
            !KeyPath::root()
                .key("channels")
                .key("signal")
                .key("x")
                .matches("channels.*")
        );
    }
}
