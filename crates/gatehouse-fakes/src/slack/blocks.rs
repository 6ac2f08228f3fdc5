//! Block Kit validation for the blocks the approval cards use, with Slack's limits and its
//! `[json-pointer:…]` error messages.

use std::collections::HashSet;

use serde_json::Value;

use super::reply::SlError;

const KNOWN_BLOCKS: [&str; 12] = [
    "section",
    "actions",
    "context",
    "header",
    "divider",
    "image",
    "input",
    "rich_text",
    "markdown",
    "file",
    "video",
    "context_actions",
];

fn problem(what: &str, pointer: &str) -> SlError {
    SlError::invalid_blocks(format!("{what} [json-pointer:{pointer}]"))
}

fn max_len(value: Option<&Value>, max: usize, pointer: &str) -> Result<(), SlError> {
    let len = value
        .and_then(Value::as_str)
        .map_or(0, |s| s.chars().count());
    if len > max {
        return Err(problem(
            &format!("must be less than {} characters", max + 1),
            pointer,
        ));
    }
    Ok(())
}

/// Validates `blocks`: an array of at most 50 known blocks with valid elements.
pub(crate) fn validate(blocks: &Value) -> Result<(), SlError> {
    let blocks = blocks
        .as_array()
        .ok_or_else(|| SlError::api("invalid_blocks_format"))?;
    if blocks.len() > 50 {
        return Err(problem("no more than 50 items allowed", "/blocks"));
    }
    for (i, block) in blocks.iter().enumerate() {
        let at = format!("/blocks/{i}");
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
        if !KNOWN_BLOCKS.contains(&kind) {
            return Err(problem(
                &format!("unsupported type: {kind}"),
                &format!("{at}/type"),
            ));
        }
        max_len(block.get("block_id"), 255, &format!("{at}/block_id"))?;
        match kind {
            "section" => {
                if block.get("text").is_none() && block.get("fields").is_none() {
                    return Err(problem("must provide either text or fields", &at));
                }
                max_len(
                    block.pointer("/text/text"),
                    3000,
                    &format!("{at}/text/text"),
                )?;
            }
            "header" => max_len(block.pointer("/text/text"), 150, &format!("{at}/text/text"))?,
            "actions" => validate_elements(block, &at, 25)?,
            "context" => validate_elements(block, &at, 10)?,
            _ => {}
        }
    }
    Ok(())
}

fn validate_elements(block: &Value, at: &str, max: usize) -> Result<(), SlError> {
    let elements = block
        .get("elements")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if elements.is_empty() || elements.len() > max {
        return Err(problem(
            &format!("must provide between 1 and {max} elements"),
            &format!("{at}/elements"),
        ));
    }
    let mut action_ids = HashSet::new();
    for (j, element) in elements.iter().enumerate() {
        let at = format!("{at}/elements/{j}");
        if element.get("type").and_then(Value::as_str) != Some("button") {
            continue;
        }
        let label = element
            .pointer("/text/text")
            .and_then(Value::as_str)
            .unwrap_or("");
        if label.is_empty() {
            return Err(problem("must provide a text", &format!("{at}/text")));
        }
        max_len(
            element.pointer("/text/text"),
            75,
            &format!("{at}/text/text"),
        )?;
        max_len(element.get("action_id"), 255, &format!("{at}/action_id"))?;
        max_len(element.get("value"), 2000, &format!("{at}/value"))?;
        max_len(element.get("url"), 3000, &format!("{at}/url"))?;
        if let Some(style) = element.get("style").and_then(Value::as_str)
            && style != "primary"
            && style != "danger"
        {
            return Err(problem(
                "must be one of primary, danger",
                &format!("{at}/style"),
            ));
        }
        if let Some(id) = element.get("action_id").and_then(Value::as_str)
            && !action_ids.insert(id.to_owned())
        {
            return Err(problem(
                &format!("{id} already exists"),
                &format!("{at}/action_id"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card(value: &str) -> Value {
        json!([{"type": "section", "text": {"type": "mrkdwn", "text": "Approve?"}},
               {"type": "actions", "elements": [{"type": "button", "action_id": "allow",
                "text": {"type": "plain_text", "text": "Allow"}, "value": value}]}])
    }

    #[test]
    fn accepts_an_approval_card() {
        assert_eq!(validate(&card("tok")), Ok(()));
    }

    #[test]
    fn denies_button_value_over_2000_chars() {
        let error = validate(&card(&"v".repeat(2001))).unwrap_err();
        assert_eq!(error.error(), "invalid_blocks");
        assert_eq!(
            error,
            SlError::invalid_blocks(
                "must be less than 2001 characters [json-pointer:/blocks/1/elements/0/value]"
                    .into()
            )
        );
    }

    #[test]
    fn denies_unknown_blocks_and_duplicate_action_ids() {
        assert!(validate(&json!([{"type": "buttons"}])).is_err());
        let twice = json!([{"type": "actions", "elements": [
            {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "A"}},
            {"type": "button", "action_id": "a", "text": {"type": "plain_text", "text": "B"}}]}]);
        assert!(validate(&twice).is_err());
        assert_eq!(
            validate(&json!("x")).unwrap_err().error(),
            "invalid_blocks_format"
        );
    }
}
