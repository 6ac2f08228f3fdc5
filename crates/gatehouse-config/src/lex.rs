//! A light JSON5 lexer for the two jobs the parser cannot do: it works on text that does not
//! parse (to mask secrets on the line of a syntax error) and it never recurses (to refuse
//! nesting too deep to parse before the parser's recursion overflows the stack).

/// One lexical token; positions are character indices into the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    /// `{` or `[`.
    Open(char),
    /// `}` or `]`.
    Close,
    /// `,`.
    Comma,
    /// `:`.
    Colon,
    /// A key or value: a quoted string (to its closing quote, or to an unescaped line end),
    /// or a run of other characters (an identifier, a number, `true`, `null`).
    Word(usize, usize),
}

/// The tokens of `chars` with the index each starts at; whitespace and comments are skipped.
pub(crate) fn tokens(chars: &[char]) -> impl Iterator<Item = (usize, Token)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        loop {
            let c = *chars.get(i)?;
            let start = i;
            let next = chars.get(i + 1).copied();
            let token = match c {
                '/' if next == Some('/') => {
                    while chars
                        .get(i)
                        .is_some_and(|&c| !json5::char::is_json5_line_terminator(c))
                    {
                        i += 1;
                    }
                    continue;
                }
                '/' if next == Some('*') => {
                    i += 2;
                    while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                        i += 1;
                    }
                    i += 2;
                    continue;
                }
                c if c.is_whitespace() || c == '\u{feff}' => {
                    i += 1;
                    continue;
                }
                '{' | '[' => Token::Open(c),
                '}' | ']' => Token::Close,
                ',' => Token::Comma,
                ':' => Token::Colon,
                _ => Token::Word(start, word_end(chars, start).max(start + 1)),
            };
            i = match token {
                Token::Word(_, end) => end,
                _ => start + 1,
            };
            return Some((start, token));
        }
    })
}

/// End of the word at `start`.
fn word_end(chars: &[char], start: usize) -> usize {
    let quote = chars[start];
    if quote == '"' || quote == '\'' {
        let mut i = start + 1;
        while let Some(&c) = chars.get(i) {
            match c {
                '\\' => i += 2,
                c if c == quote => return i + 1,
                '\n' | '\r' => return i,
                _ => i += 1,
            }
        }
        return chars.len();
    }
    let mut i = start;
    while chars
        .get(i)
        .is_some_and(|&c| !c.is_whitespace() && !",:[]{}'\"/".contains(c))
    {
        i += 1;
    }
    i
}

/// Deepest nesting of objects and lists a config may have. Real configs nest a few levels;
/// the parser recurses once per level, so a file nesting thousands deep would overflow the
/// stack instead of being refused.
pub(crate) const MAX_DEPTH: usize = 128;

/// The character index of the first `{` or `[` nested deeper than [`MAX_DEPTH`], if any.
pub(crate) fn too_deep(chars: &[char]) -> Option<usize> {
    let mut depth = 0usize;
    for (at, token) in tokens(chars) {
        match token {
            Token::Open(_) if depth == MAX_DEPTH => return Some(at),
            Token::Open(_) => depth += 1,
            Token::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Token> {
        let chars: Vec<char> = text.chars().collect();
        tokens(&chars).map(|(_, token)| token).collect()
    }

    #[test]
    fn skips_comments_and_keeps_strings_whole() {
        assert_eq!(
            kinds("{ a: 'x, // y', /* } */ b: [1] } // ]"),
            [
                Token::Open('{'),
                Token::Word(2, 3),
                Token::Colon,
                Token::Word(5, 14),
                Token::Comma,
                Token::Word(24, 25),
                Token::Colon,
                Token::Open('['),
                Token::Word(28, 29),
                Token::Close,
                Token::Close,
            ]
        );
    }

    #[test]
    fn finds_nesting_deeper_than_the_limit() {
        let deep = |levels: usize| -> Vec<char> {
            format!("{}{}", "[".repeat(levels), "]".repeat(levels))
                .chars()
                .collect()
        };
        assert_eq!(too_deep(&deep(MAX_DEPTH)), None);
        assert_eq!(too_deep(&deep(MAX_DEPTH + 1)), Some(MAX_DEPTH));
        let strings: Vec<char> = format!("'{}'", "[".repeat(500)).chars().collect();
        assert_eq!(too_deep(&strings), None);
    }
}
