//! Exhaustive property: one wrong value anywhere in the example config is reported once, at its
//! path, and nothing else is. The loader sets refused values aside to find every problem in one load; a
//! removal that broke a rule (a token left without its source, a timeout compared with a
//! default) or left a struct without a field it had would show up here as a second problem.

use std::path::Path;

use gatehouse_config::{ConfigError, load_str};
use serde_json::Value;

const EXAMPLE: &str = include_str!("../../../../config.example.json5");

/// One step into the example document.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every value of `value` with its path, parents before children.
fn paths(value: &Value, prefix: &[Step], out: &mut Vec<Vec<Step>>) {
    let children: Vec<(Step, &Value)> = match value {
        Value::Object(map) => map
            .iter()
            .map(|(key, child)| (Step::Key(key.clone()), child))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(index, child)| (Step::Index(index), child))
            .collect(),
        _ => return,
    };
    for (step, child) in children {
        let mut path = prefix.to_vec();
        path.push(step);
        out.push(path.clone());
        paths(child, &path, out);
    }
}

fn value_at<'a>(value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(value, |value, step| match step {
        Step::Key(key) => &mut value[key.as_str()],
        Step::Index(index) => &mut value[*index],
    })
}

/// The path as the loader writes it: `agents.list[1].tools`.
fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => out.push_str(&format!(".{key}")),
            Step::Index(index) => out.push_str(&format!("[{index}]")),
        }
    }
    out
}

/// `[[]]` is refused by every key the example sets: no setting is a list of lists, and a list
/// of strings or ids refuses its first element. Every value of the example is tried in turn.
#[test]
fn one_wrong_value_anywhere_in_the_example_is_one_problem_at_its_path() {
    let example: Value = json5::from_str(EXAMPLE).unwrap();
    let mut all = Vec::new();
    paths(&example, &[], &mut all);
    assert!(all.len() > 100, "{} values", all.len());
    for path in &all {
        let mut broken = example.clone();
        *value_at(&mut broken, path) = serde_json::json!([[]]);
        let text = serde_json::to_string_pretty(&broken).unwrap();
        let written = dotted(path);
        let Err(ConfigError::Invalid { diagnostics, .. }) =
            load_str(&text, Path::new("example.json5"))
        else {
            panic!("{written}: loaded");
        };
        let keys: Vec<String> = diagnostics
            .iter()
            .map(|found| found.key.clone().unwrap_or_default())
            .collect();
        let at_path = [written.clone()] == *keys || [format!("{written}[0]")] == *keys;
        assert!(at_path, "{written}: {keys:?}");
    }
}
