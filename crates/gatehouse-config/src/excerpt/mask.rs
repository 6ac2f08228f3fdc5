//! Masking the values of secret-looking keys in config text before a line of it is shown.
//!
//! It reads tokens with `lex` rather than the json5 parser, so that a file with a syntax error
//! (where no tree exists) is masked too. It errs toward masking: a value is hidden when its own key looks
//! like a secret, when it is an element of a list under such a key, or when it lies anywhere
//! under an object under such a key or under OpenClaw's `env` or `secrets` sections.

use crate::lex::{Token, tokens};

/// Words in a key that mark its value as a secret. Keys naming where a secret is kept
/// (`tokenFile`, `tokenEnv`) are not secrets themselves, and are shown.
const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "apikey",
    "api_key",
    "privatekey",
    "private_key",
    "credential",
];

fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    !(key.ends_with("file") || key.ends_with("env"))
        && SECRET_WORDS.iter().any(|word| key.contains(word))
}

/// OpenClaw sections whose every value may be a secret (`env.OPENAI_API_KEY`, `secrets.*`).
fn holds_secrets(key: &str) -> bool {
    key.eq_ignore_ascii_case("env") || key.eq_ignore_ascii_case("secrets")
}

/// An open `{` or `[` and what it says about the values inside.
struct Frame {
    object: bool,
    /// Every value inside is masked.
    hidden: bool,
    /// A list under a secret key: its scalar elements are masked.
    secret_items: bool,
}

/// `text` with the value of every secret-looking key replaced by `*`, character for character,
/// so lines and columns are unchanged.
pub(super) fn mask_secrets(text: &str) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let mut hidden = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut key: Option<String> = None;
    let mut at_key = false;
    for (_, token) in tokens(&chars) {
        match token {
            Token::Open(bracket) => {
                let parent = frames.last();
                let key = key.take();
                let under_secret = key.as_deref().is_some_and(is_secret_key);
                frames.push(Frame {
                    object: bracket == '{',
                    hidden: parent.is_some_and(|frame| frame.hidden)
                        || key.as_deref().is_some_and(holds_secrets)
                        || (bracket == '{' && under_secret),
                    secret_items: bracket == '['
                        && (under_secret
                            || (key.is_none() && parent.is_some_and(|frame| frame.secret_items))),
                });
                at_key = bracket == '{';
            }
            Token::Close => {
                frames.pop();
                key = None;
                at_key = false;
            }
            Token::Comma => {
                at_key = frames.last().is_some_and(|frame| frame.object);
                key = None;
            }
            Token::Colon => {}
            Token::Word(start, end) if at_key => {
                key = Some(unquote(&chars[start..end]));
                at_key = false;
            }
            Token::Word(start, end) => {
                let frame = frames.last();
                let secret = frame
                    .is_some_and(|frame| frame.hidden || (!frame.object && frame.secret_items))
                    || key.take().as_deref().is_some_and(is_secret_key);
                if secret {
                    hidden.push(start..end);
                }
            }
        }
    }
    for word in hidden {
        mask(&mut chars[word]);
    }
    chars.into_iter().collect()
}

fn unquote(token: &[char]) -> String {
    let text: String = token.iter().collect();
    match token.first() {
        Some(&quote @ ('"' | '\'')) => text
            .trim_start_matches(quote)
            .trim_end_matches(quote)
            .to_owned(),
        _ => text,
    }
}

/// Masks a value token, keeping its quotes and any line break inside it.
fn mask(token: &mut [char]) {
    let quote = token.first().copied().filter(|c| matches!(c, '"' | '\''));
    let len = token.len();
    for (at, c) in token.iter_mut().enumerate() {
        let is_quote = quote.is_some_and(|quote| at == 0 || (at == len - 1 && *c == quote));
        if !is_quote && !json5::char::is_json5_line_terminator(*c) {
            *c = '*';
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::lines;
    use super::*;

    #[test]
    fn masks_secret_values_and_nothing_else() {
        let text = "{ botToken: 'abc', tokenFile: '/t', name: 'n', token: 12345,\n  \
                    tokens: ['t1', { name: 'x', token: \"t2\" }], env: { A: 'v', B: { C: 1 } },\n  \
                    // token: 'comment'\n  'apiKey': ok, webhookSecret: 'un\nclosed' }";
        let masked = mask_secrets(text);
        assert_eq!(
            masked,
            "{ botToken: '***', tokenFile: '/t', name: 'n', token: *****,\n  \
             tokens: ['**', { name: 'x', token: \"**\" }], env: { A: '*', B: { C: * } },\n  \
             // token: 'comment'\n  'apiKey': **, webhookSecret: '**\nclosed' }"
        );
        assert_eq!(masked.chars().count(), text.chars().count());
    }

    #[test]
    fn masks_under_secret_objects_and_keeps_every_line_break() {
        let text = "{ apiKeys: { openai: 'sk-1' }, token: 'a\\\u{2028}b', secret: 'x\\\r\ny' }";
        let masked = mask_secrets(text);
        assert!(!masked.contains("sk-1"), "{masked}");
        assert_eq!(lines(&masked).len(), lines(text).len());
    }
}
