//! Server-sent events as both model APIs stream them: `event: <name>` and one `data:` line of
//! JSON per event, a blank line after each.

use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// The size of the pieces text and tool input are streamed in, so a host's reassembly of
/// deltas is exercised as against the real APIs.
pub(crate) const DELTA_CHARS: usize = 24;

/// An event stream being written.
#[derive(Debug, Default)]
pub(crate) struct Sse(String);

impl Sse {
    /// Appends one event.
    pub(crate) fn event(&mut self, name: &str, data: &Value) {
        self.0.push_str("event: ");
        self.0.push_str(name);
        self.0.push_str("\ndata: ");
        self.0.push_str(&data.to_string());
        self.0.push_str("\n\n");
    }
}

impl IntoResponse for Sse {
    fn into_response(self) -> Response {
        (
            [
                (CONTENT_TYPE, "text/event-stream; charset=utf-8"),
                (CACHE_CONTROL, "no-cache"),
            ],
            self.0,
        )
            .into_response()
    }
}

/// `text` cut into pieces of at most `DELTA_CHARS` characters (never inside a character);
/// empty text is one empty piece.
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars
        .chunks(DELTA_CHARS)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_on_character_boundaries() {
        let text = "é".repeat(DELTA_CHARS + 1);
        let cut = pieces(&text);
        assert_eq!(cut.len(), 2);
        assert_eq!(cut.concat(), text);
        assert_eq!(pieces(""), [""]);
    }
}
