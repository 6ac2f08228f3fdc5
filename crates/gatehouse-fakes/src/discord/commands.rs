//! Application commands per guild and global: bulk overwrite, create (upsert by name), list.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::APP_ID;
use super::messages::Snowflakes;
use super::reply::DcError;

const MAX_NAME_CHARS: usize = 32;
const MAX_DESCRIPTION_CHARS: usize = 100;
const MAX_OPTIONS: usize = 25;

/// Registered commands; the key is the guild, `None` for global commands.
#[derive(Debug, Default)]
pub(crate) struct Commands {
    scopes: HashMap<Option<u64>, Vec<Value>>,
}

impl Commands {
    /// `PUT …/commands`: replaces the whole set, keeping ids of commands that stay.
    pub(crate) fn overwrite(
        &mut self,
        ids: &mut Snowflakes,
        guild: Option<u64>,
        body: &Value,
    ) -> Result<Value, DcError> {
        let list = body
            .as_array()
            .ok_or_else(|| DcError::invalid_form(&[], "BASE_TYPE_ARRAY", "Must be an array."))?;
        let old = self.scopes.remove(&guild).unwrap_or_default();
        let mut new = Vec::with_capacity(list.len());
        for (index, command) in list.iter().enumerate() {
            let existing = find(&old, command);
            new.push(normalize(
                ids,
                guild,
                command,
                existing,
                &[index.to_string()],
            )?);
        }
        self.scopes.insert(guild, new.clone());
        Ok(Value::Array(new))
    }

    /// `POST …/commands`: creates, or replaces the command with the same name and type.
    pub(crate) fn create(
        &mut self,
        ids: &mut Snowflakes,
        guild: Option<u64>,
        body: &Value,
    ) -> Result<Value, DcError> {
        let scope = self.scopes.entry(guild).or_default();
        let existing = find(scope, body);
        let command = normalize(ids, guild, body, existing, &[])?;
        scope.retain(|c| c.get("id") != command.get("id"));
        scope.push(command.clone());
        Ok(command)
    }

    /// `GET …/commands`.
    pub(crate) fn list(&self, guild: Option<u64>) -> Value {
        Value::Array(self.scopes.get(&guild).cloned().unwrap_or_default())
    }
}

fn kind(command: &Value) -> u64 {
    command.get("type").and_then(Value::as_u64).unwrap_or(1)
}

fn find(scope: &[Value], command: &Value) -> Option<String> {
    scope
        .iter()
        .find(|c| c.get("name") == command.get("name") && kind(c) == kind(command))
        .and_then(|c| c.get("id")?.as_str().map(str::to_owned))
}

fn normalize(
    ids: &mut Snowflakes,
    guild: Option<u64>,
    command: &Value,
    existing: Option<String>,
    prefix: &[String],
) -> Result<Value, DcError> {
    let at = |field: &str| [prefix, &[field.to_owned()]].concat();
    let kind = kind(command);
    let name = command.get("name").and_then(Value::as_str).unwrap_or("");
    let valid_name = (1..=MAX_NAME_CHARS).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c == '-' || c == '_' || c.is_alphanumeric())
        && (kind != 1 || !name.chars().any(char::is_uppercase));
    if !valid_name {
        return Err(DcError::invalid_form(
            &at("name"),
            "APPLICATION_COMMAND_INVALID_NAME",
            "Command name is invalid",
        ));
    }
    let description = command
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let description_ok = if kind == 1 {
        (1..=MAX_DESCRIPTION_CHARS).contains(&description.chars().count())
    } else {
        description.is_empty()
    };
    if !description_ok {
        return Err(DcError::invalid_form(
            &at("description"),
            "BASE_TYPE_BAD_LENGTH",
            "Must be between 1 and 100 in length.",
        ));
    }
    if command
        .get("options")
        .and_then(Value::as_array)
        .is_some_and(|o| o.len() > MAX_OPTIONS)
    {
        return Err(DcError::invalid_form(
            &at("options"),
            "BASE_TYPE_MAX_LENGTH",
            "Must be 25 or fewer in length.",
        ));
    }
    let mut stored = command.clone();
    let id = existing.unwrap_or_else(|| ids.next().to_string());
    stored["id"] = json!(id);
    stored["application_id"] = json!(APP_ID.to_string());
    stored["type"] = json!(kind);
    stored["version"] = json!(ids.next().to_string());
    stored["description"] = json!(description);
    stored["default_member_permissions"] = command
        .get("default_member_permissions")
        .cloned()
        .unwrap_or(Value::Null);
    stored["nsfw"] = json!(false);
    if let Some(guild) = guild {
        stored["guild_id"] = json!(guild.to_string());
    }
    Ok(stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overwrite_keeps_ids_and_replaces_the_set() {
        let mut ids = Snowflakes::default();
        let mut commands = Commands::default();
        let first = commands
            .overwrite(
                &mut ids,
                Some(1),
                &json!([{"name": "approve", "description": "Decide"}]),
            )
            .unwrap();
        let second = commands
            .overwrite(
                &mut ids,
                Some(1),
                &json!([{"name": "approve", "description": "Decide!"},
                {"name": "elevated", "description": "Level"}]),
            )
            .unwrap();
        assert_eq!(first[0]["id"], second[0]["id"]);
        assert_eq!(commands.list(Some(1)).as_array().unwrap().len(), 2);
        assert_eq!(commands.list(None), json!([]));
    }

    #[test]
    fn denies_uppercase_names_and_missing_descriptions() {
        let mut ids = Snowflakes::default();
        let mut commands = Commands::default();
        assert!(
            commands
                .create(
                    &mut ids,
                    None,
                    &json!({"name": "Approve", "description": "x"})
                )
                .is_err()
        );
        assert!(
            commands
                .create(&mut ids, None, &json!({"name": "approve"}))
                .is_err()
        );
        assert!(
            commands
                .create(
                    &mut ids,
                    None,
                    &json!({"name": "approve", "description": "x"})
                )
                .is_ok()
        );
    }
}
