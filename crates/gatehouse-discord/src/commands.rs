//! The application commands `/approve`, `/elevated`, `/start` and `/help`: their definitions for
//! registration, and
//! their translation back into the text form, so the core's grammar, approver check and replies
//! treat them exactly like a typed command.

use serenity::all::{
    CommandData, CommandDataOptionValue, CommandOptionType, CreateCommand, CreateCommandOption,
};

const DECISIONS: [&str; 3] = ["allow-once", "allow-always", "deny"];
const LEVELS: [&str; 4] = ["off", "on", "ask", "full"];

/// The commands registered in each configured guild.
pub(crate) fn definitions() -> Vec<CreateCommand> {
    let decision = DECISIONS.iter().fold(
        CreateCommandOption::new(CommandOptionType::String, "decision", "What to decide")
            .required(true),
        |option, choice| option.add_string_choice(*choice, *choice),
    );
    let level = LEVELS.iter().fold(
        CreateCommandOption::new(
            CommandOptionType::String,
            "level",
            "The level to set; leave out to see the current one",
        ),
        |option, choice| option.add_string_choice(*choice, *choice),
    );
    vec![
        CreateCommand::new("approve")
            .description("Decide a pending exec approval")
            .add_option(
                CreateCommandOption::new(
                    CommandOptionType::String,
                    "id",
                    "The approval id, or its first 8 characters",
                )
                .required(true),
            )
            .add_option(decision),
        CreateCommand::new("elevated")
            .description("Show or set elevated mode for the session bound to this channel")
            .add_option(level),
        CreateCommand::new("start")
            .description("Show your Discord user id and whether you are a Gatehouse approver"),
        CreateCommand::new("help").description("What you can do with Gatehouse here"),
    ]
}

/// The command as the text a person would type, or `None` for a command that is not ours.
/// Option values are untrusted: they are joined as typed, and the core's grammar refuses
/// anything malformed (an id with spaces becomes extra words).
pub(crate) fn command_text(data: &CommandData) -> Option<String> {
    let option = |name: &str| {
        data.options.iter().find_map(|option| match &option.value {
            CommandDataOptionValue::String(value) if option.name == name => Some(value.as_str()),
            _ => None,
        })
    };
    match data.name.as_str() {
        "approve" => {
            let words = [option("id").unwrap_or(""), option("decision").unwrap_or("")];
            Some(join("/approve", &words))
        }
        "elevated" => Some(join("/elevated", &[option("level").unwrap_or("")])),
        "start" => Some("/start".to_owned()),
        "help" => Some("/help".to_owned()),
        _ => None,
    }
}

fn join(command: &str, words: &[&str]) -> String {
    words
        .iter()
        .map(|word| word.trim())
        .filter(|word| !word.is_empty())
        .fold(command.to_owned(), |text, word| format!("{text} {word}"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn data(value: serde_json::Value) -> CommandData {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn joins_approve_options_into_the_typed_form() {
        let approve = data(json!({"id": "1", "name": "approve", "type": 1, "options": [
            {"name": "decision", "type": 3, "value": "deny"},
            {"name": "id", "type": 3, "value": "0f3c9a1e"}]}));
        assert_eq!(
            command_text(&approve).as_deref(),
            Some("/approve 0f3c9a1e deny")
        );
    }

    #[test]
    fn keeps_untrusted_spaces_for_the_grammar_to_refuse() {
        let approve = data(json!({"id": "1", "name": "approve", "type": 1, "options": [
            {"name": "id", "type": 3, "value": "0f3c 9a1e"},
            {"name": "decision", "type": 3, "value": "deny"}]}));
        assert_eq!(
            command_text(&approve).as_deref(),
            Some("/approve 0f3c 9a1e deny")
        );
    }

    #[test]
    fn reads_elevated_with_and_without_a_level() {
        let set = data(
            json!({"id": "1", "name": "elevated", "type": 1, "options": [
            {"name": "level", "type": 3, "value": "ask"}]}),
        );
        assert_eq!(command_text(&set).as_deref(), Some("/elevated ask"));
        let query = data(json!({"id": "1", "name": "elevated", "type": 1}));
        assert_eq!(command_text(&query).as_deref(), Some("/elevated"));
        let other = data(json!({"id": "1", "name": "ban", "type": 1}));
        assert_eq!(command_text(&other), None);
    }

    #[test]
    fn defines_valid_slash_commands() {
        let defined = serde_json::to_value(definitions()).unwrap();
        assert_eq!(defined[0]["name"], "approve");
        assert_eq!(
            defined[0]["options"][1]["choices"][1]["value"],
            "allow-always"
        );
        assert_eq!(defined[1]["name"], "elevated");
        assert_eq!(defined[1]["options"][0]["required"], false);
        assert_eq!(defined[2]["name"], "start");
        assert_eq!(defined[3]["name"], "help");
    }

    #[test]
    fn reads_start_and_help_as_their_typed_form() {
        let start = data(json!({"id": "1", "name": "start", "type": 1}));
        assert_eq!(command_text(&start).as_deref(), Some("/start"));
        let help = data(json!({"id": "1", "name": "help", "type": 1}));
        assert_eq!(command_text(&help).as_deref(), Some("/help"));
    }
}
