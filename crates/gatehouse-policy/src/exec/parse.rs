//! Shell string → segments, with tree-sitter-bash and an explicit allow-list of node kinds.
//!
//! The walker accepts only lists, pipelines and simple commands built from literal words,
//! quoted strings and (outside command position) parameter expansions. Every other node kind,
//! every error or missing node and every operator other than `| && || ; &` ends analysis with a
//! [`Reason`] naming the rule, so a construct the grammar learns tomorrow is refused until it is
//! listed here.
//!
//! The grammar only decides the structure. Two checks make the segments what the shell runs:
//! [`layout`] refuses a command unless every byte belongs to an accepted word, operator or
//! comment, with only blanks and newlines between them where the shell has them, and [`word`]
//! reads each word's value from its own bytes, as bash and dash do, not from the grammar's
//! pieces of it.

mod fast;
mod layout;
mod word;

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::{Node, ParseOptions, ParseState, Parser, Point, Tree};

use self::layout::{Token, TokenKind, check_layout};
use super::evaluation::{Reason, Rule};

/// Longest command text analyzed; longer commands go to a person instead of the parser.
pub(crate) const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// Parser progress callbacks (tree-sitter makes one per 100 operations) before a parse is
/// cancelled; an ordinary command of the maximum length stays well below it (see the tests).
const MAX_PARSE_CALLBACKS: usize = 20_000;

/// One word of a simple command after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    /// The text bash would pass, with parameter expansions left as written (`$HOME`).
    pub(crate) text: String,
    /// The word contains a parameter expansion, so its real value is unknown here.
    pub(crate) has_expansion: bool,
    /// The word starts with an unquoted `~`, which bash expands to `HOME`.
    pub(crate) tilde: bool,
    /// An unquoted part holds `*`, `?` or `[`, so bash may turn it into file names.
    pub(crate) glob: bool,
}

impl Word {
    /// The words of a direct argv: no shell will expand them. Only the program word keeps `~`
    /// as `HOME`, because hosts expand it when they start the program; an argument reaches its
    /// program as written, so `env ~/x` or `bash ~/x.sh` opens `./~/x`, and is judged so.
    pub(crate) fn direct_argv<S: AsRef<str>>(argv: &[S]) -> Vec<Self> {
        argv.iter()
            .enumerate()
            .map(|(index, text)| {
                let text = text.as_ref();
                Word {
                    text: text.to_owned(),
                    has_expansion: false,
                    tilde: index == 0 && text.starts_with('~'),
                    glob: false,
                }
            })
            .collect()
    }
}

/// One simple command of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedSegment {
    /// Leading `NAME=value` assignments, as written.
    pub(crate) assignments: Vec<String>,
    /// The command words, program first.
    pub(crate) words: Vec<Word>,
    /// Its stdin is the previous command's output (`a | b`), so a program that reads code from
    /// stdin when given none runs whatever the previous command prints.
    pub(crate) stdin_piped: bool,
    /// Where its assignments and words lie in the source, first byte to last (a trailing
    /// comment and the operators around it excluded), so a runner can re-render it in place
    /// ([`super::render`]). Empty for a direct argv.
    pub(crate) span: Range<usize>,
}

thread_local! {
    /// A parser per thread: building one costs more than parsing a short command.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses a shell string into its segments, or the reason it cannot be analyzed. Text made
/// only of plain words, quoted strings without expansions and list or pipe operators is read
/// without the grammar ([`fast`], which the tests hold equal to the full path); everything
/// else goes through tree-sitter and the checks below.
pub(crate) fn parse_shell(source: &str) -> Result<Vec<ParsedSegment>, Reason> {
    precheck(source)?;
    match fast::parse(source) {
        Some(segments) => Ok(segments),
        None => parse_with_grammar(source),
    }
}

/// The full path alone, for the fast path's differential test.
#[cfg(test)]
pub(crate) fn parse_full(source: &str) -> Result<Vec<ParsedSegment>, Reason> {
    precheck(source)?;
    parse_with_grammar(source)
}

/// tree-sitter, the walker's allow-list of node kinds, and the layout and word checks.
fn parse_with_grammar(source: &str) -> Result<Vec<ParsedSegment>, Reason> {
    let view = parser_view(source);
    let tree = parse_tree(&view, MAX_PARSE_CALLBACKS).ok_or_else(|| {
        Reason::new(
            Rule::TooLong,
            "the command needs more parsing work than the analyzer allows",
        )
    })?;
    if matches!(view, Cow::Owned(_)) {
        tokens_on_char_boundaries(&tree, source)?;
    }
    let root = tree.root_node();
    let mut tokens = Vec::new();
    let segments = walk_statements(root, source, &mut tokens)?;
    if root.has_error() {
        return Err(Reason::new(
            Rule::SyntaxError,
            "the command does not parse as bash",
        ));
    }
    check_layout(&tokens, source)?;
    if segments.is_empty() {
        return Err(Reason::new(Rule::EmptyCommand, "no command to run"));
    }
    Ok(segments)
}

/// Parses with the thread's parser, cancelling past `max_callbacks` progress callbacks.
fn parse_tree(bytes: &[u8], max_callbacks: usize) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        // Error recovery on hostile input can make the parser do far more work than the text
        // is long. Progress callbacks are counted (not timed: this crate never reads the clock)
        // and the parse is cancelled past a bound no real command approaches.
        let mut callbacks = 0usize;
        let mut budget = |_: &ParseState| {
            callbacks += 1;
            callbacks > max_callbacks
        };
        let options = ParseOptions::new().progress_callback(&mut budget);
        let mut input = |offset: usize, _: Point| bytes.get(offset..).unwrap_or_default();
        let tree = parser.parse_with_options(&mut input, None, Some(options));
        if tree.is_none() {
            // A cancelled parse is resumed by the next call unless the parser is reset, which
            // would splice the next command onto this one's half-built tree.
            parser.reset();
        }
        tree
    })
}

/// The bytes the parser reads: the command with every non-ASCII byte shown as `%`.
///
/// tree-sitter-bash's scanner hands code points to `isdigit`, which reads outside the C
/// library's table for anything past U+00FF (a crash on Linux: tree-sitter-bash issue #337),
/// and its grammar splits words on Unicode spaces where bash does not. Bash gives no non-ASCII
/// character a special meaning, and `%` has none outside the arithmetic and parameter
/// expansions the walker refuses anyway, so the tree has bash's shape. Byte offsets are
/// unchanged, so words are still read from the original text.
fn parser_view(source: &str) -> Cow<'_, [u8]> {
    if source.is_ascii() {
        Cow::Borrowed(source.as_bytes())
    } else {
        Cow::Owned(
            source
                .bytes()
                .map(|byte| if byte.is_ascii() { byte } else { b'%' })
                .collect(),
        )
    }
}

/// With non-ASCII text shown as `%`, a token could in principle end inside a character; its
/// text would then be unreadable, so such a command is refused rather than read short.
fn tokens_on_char_boundaries(tree: &Tree, source: &str) -> Result<(), Reason> {
    let mut cursor = tree.walk();
    loop {
        let range = cursor.node().byte_range();
        if !source.is_char_boundary(range.start) || !source.is_char_boundary(range.end) {
            return Err(Reason::new(
                Rule::UnsupportedSyntax,
                "a shell token ends inside a non-ASCII character",
            ));
        }
        if cursor.goto_first_child() || cursor.goto_next_sibling() {
            continue;
        }
        loop {
            if !cursor.goto_parent() {
                return Ok(());
            }
            if cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

/// Refusals decided on the raw text, before the grammar sees it.
fn precheck(source: &str) -> Result<(), Reason> {
    if source.trim().is_empty() {
        return Err(Reason::new(Rule::EmptyCommand, "the command is empty"));
    }
    if source.len() > MAX_COMMAND_BYTES {
        return Err(Reason::new(
            Rule::TooLong,
            format!("the command is longer than {MAX_COMMAND_BYTES} bytes"),
        ));
    }
    if source.contains('\0') {
        return Err(Reason::new(
            Rule::UnsupportedSyntax,
            "the command contains a NUL byte",
        ));
    }
    // A backslash-newline joins lines before bash tokenizes, even inside double quotes and in
    // here-documents, so the text the grammar sees is not the text bash runs. Inside single
    // quotes it is two characters of the word.
    if continues_a_line(source) {
        return Err(Reason::new(
            Rule::LineContinuation,
            "a backslash-newline joins lines, so the command bash runs differs from the text",
        ));
    }
    // tree-sitter-bash reads these three as blanks, bash as word characters: in `true\r#; id`
    // the grammar sees a comment where bash runs `id`.
    if let Some(byte) = source.chars().find(|c| matches!(c, '\r' | '\x0b' | '\x0c')) {
        return Err(Reason::new(
            Rule::UnsupportedSyntax,
            format!(
                "the command contains {}, which bash and the parser read differently",
                match byte {
                    '\r' => "a carriage return",
                    '\x0b' => "a vertical tab",
                    _ => "a form feed",
                }
            ),
        ));
    }
    Ok(())
}

/// Whether a backslash-newline in `source` may be a line continuation: anywhere but inside a
/// single-quoted string that the scan is sure of. The scan follows plain words, `'…'`, `"…"`
/// and comments; after anything whose quoting it does not follow (`$'…'`, `$(`, a backtick,
/// `<<`), every later backslash-newline counts, and the walker refuses those constructs anyway.
fn continues_a_line(source: &str) -> bool {
    if !source.contains("\\\n") && !source.contains("\\\r\n") {
        return false;
    }
    #[derive(PartialEq)]
    enum State {
        Plain,
        Single,
        Double,
        Comment,
    }
    let bytes = source.as_bytes();
    // From an ASCII byte the scan does not follow on, any later backslash-newline counts.
    let unsure_from = |at: usize| {
        source
            .get(at..)
            .is_none_or(|rest| rest.contains("\\\n") || rest.contains("\\\r\n"))
    };
    let mut state = State::Plain;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let mut next = bytes.get(i + 1).copied();
        if next == Some(b'\r') && bytes.get(i + 2) == Some(&b'\n') {
            // `\⏎` with a carriage return before the newline joins lines as well.
            next = Some(b'\n');
        }
        let previous = i.checked_sub(1).and_then(|at| bytes.get(at)).copied();
        match state {
            State::Plain => match byte {
                b'\\' if next == Some(b'\n') => return true,
                b'\\' => i += 1,
                b'\'' if previous == Some(b'$') => return unsure_from(i),
                b'\'' => state = State::Single,
                b'"' => state = State::Double,
                b'#' if previous.is_none_or(|p| p.is_ascii_whitespace() || b";&|".contains(&p)) => {
                    state = State::Comment;
                }
                b'`' => return unsure_from(i),
                b'$' | b'<' if next == Some(if byte == b'$' { b'(' } else { b'<' }) => {
                    return unsure_from(i);
                }
                _ => {}
            },
            State::Single => {
                if byte == b'\'' {
                    state = State::Plain;
                }
            }
            State::Double => match byte {
                b'\\' if next == Some(b'\n') => return true,
                b'\\' => i += 1,
                b'"' => state = State::Plain,
                b'`' => return unsure_from(i),
                b'$' if next == Some(b'(') => return unsure_from(i),
                _ => {}
            },
            State::Comment => match byte {
                b'\\' if next == Some(b'\n') => return true,
                b'\n' => state = State::Plain,
                _ => {}
            },
        }
        i += 1;
    }
    false
}

/// Walks lists and pipelines iteratively (a long `a && b && …` chain nests deeply) and collects
/// the simple commands, and every token accepted, in source order.
fn walk_statements(
    root: Node<'_>,
    source: &str,
    tokens: &mut Vec<Token>,
) -> Result<Vec<ParsedSegment>, Reason> {
    let mut segments = Vec::new();
    // Each node with whether its stdin comes from a pipe: every command of a pipeline but the
    // first reads the one before it.
    let mut stack = vec![(root, false)];
    while let Some((node, piped)) = stack.pop() {
        if node.is_error() || node.is_missing() {
            return Err(syntax_error(node, source));
        }
        if !node.is_named() {
            check_operator(node)?;
            tokens.push(Token {
                range: node.byte_range(),
                kind: TokenKind::Operator(node.kind()),
            });
            continue;
        }
        match node.kind() {
            "program" | "list" | "pipeline" => {
                let pipeline = node.kind() == "pipeline";
                let mut cursor = node.walk();
                let mut first = true;
                let mut children = Vec::new();
                for child in node.children(&mut cursor) {
                    children.push((child, piped || (pipeline && !first)));
                    first &= !child.is_named();
                }
                stack.extend(children.into_iter().rev());
            }
            "comment" => tokens.push(Token {
                range: node.byte_range(),
                kind: TokenKind::Comment,
            }),
            "command" => {
                let command = segments.len();
                let mut segment = parse_command(node, source, command, tokens)?;
                segment.stdin_piped = piped;
                segments.push(segment);
            }
            _ => return Err(refuse_node(node, source)),
        }
    }
    Ok(segments)
}

/// The operators that separate segments; anything else between statements is refused.
fn check_operator(node: Node<'_>) -> Result<(), Reason> {
    match node.kind() {
        "|" | "&&" | "||" | ";" | "&" | "\n" => Ok(()),
        "|&" => Err(Reason::new(
            Rule::UnsupportedOperator,
            "`|&` also pipes stderr; use `2>&1 |` explicitly (which is itself refused)",
        )),
        other => Err(Reason::new(
            Rule::UnsupportedOperator,
            format!("operator `{other}` is not supported"),
        )),
    }
}

/// One simple command; `command` is its index, recorded with its words' tokens.
fn parse_command(
    node: Node<'_>,
    source: &str,
    command: usize,
    tokens: &mut Vec<Token>,
) -> Result<ParsedSegment, Reason> {
    let mut segment = ParsedSegment {
        assignments: Vec::new(),
        words: Vec::new(),
        stdin_piped: false,
        span: 0..0,
    };
    let mut span: Option<Range<usize>> = None;
    let mut cover = |range: Range<usize>| {
        span = Some(match span.take() {
            Some(seen) => seen.start.min(range.start)..seen.end.max(range.end),
            None => range,
        });
    };
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.is_error() || child.is_missing() {
            return Err(syntax_error(child, source));
        }
        let word_token = |node: Node<'_>| Token {
            range: node.byte_range(),
            kind: TokenKind::Word { command },
        };
        match child.kind() {
            "variable_assignment" => {
                check_subtree(child, source)?;
                word::check_assignment(text(child, source))?;
                tokens.push(word_token(child));
                cover(child.byte_range());
                segment.assignments.push(text(child, source).to_owned());
            }
            "command_name" => {
                let part = match child.named_child_count() {
                    1 => child.named_child(0),
                    _ => None,
                };
                let part = part.ok_or_else(|| syntax_error(child, source))?;
                let word = parse_word(part, source)?;
                check_command_position(&word)?;
                tokens.push(word_token(part));
                cover(part.byte_range());
                segment.words.push(word);
            }
            "word"
            | "string"
            | "raw_string"
            | "concatenation"
            | "number"
            | "simple_expansion"
            | "expansion"
            | "ansi_c_string"
            | "translated_string"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "brace_expression" => {
                segment.words.push(parse_word(child, source)?);
                tokens.push(word_token(child));
                cover(child.byte_range());
            }
            "comment" => tokens.push(Token {
                range: child.byte_range(),
                kind: TokenKind::Comment,
            }),
            _ if !child.is_named() => {
                return Err(Reason::new(
                    Rule::UnsupportedSyntax,
                    format!("unexpected `{}` in a command", child.kind()),
                ));
            }
            _ => return Err(refuse_node(child, source)),
        }
    }
    if segment.words.is_empty() {
        return Err(Reason::new(
            Rule::EnvAssignment,
            "a bare assignment changes the environment of later commands",
        ));
    }
    segment.span = span.unwrap_or_default();
    Ok(segment)
}

/// A program name must be known before it runs: no expansion, no globbing.
pub(super) fn check_command_position(word: &Word) -> Result<(), Reason> {
    if word.has_expansion {
        return Err(Reason::new(
            Rule::ParameterExpansion,
            format!(
                "`{}` in command position expands to an unknown program",
                word.text
            ),
        ));
    }
    if word.glob {
        return Err(Reason::new(
            Rule::UnsupportedSyntax,
            format!("glob `{}` in command position", word.text),
        ));
    }
    Ok(())
}

/// One word: substitutions the grammar found anywhere inside are refused with their rule,
/// then the value is read from the word's own text (see [`word`]).
fn parse_word(node: Node<'_>, source: &str) -> Result<Word, Reason> {
    check_subtree(node, source)?;
    word::read_word(text(node, source))
}

/// Refuses the substitutions the grammar found anywhere under a word or assignment, with their
/// own rule; [`word`] refuses whatever else its text holds.
fn check_subtree(node: Node<'_>, source: &str) -> Result<(), Reason> {
    let mut stack = vec![node];
    while let Some(current) = stack.pop() {
        if current.is_error() || current.is_missing() {
            return Err(syntax_error(current, source));
        }
        match current.kind() {
            "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "array"
            | "subshell"
            | "heredoc_redirect"
            | "file_redirect"
            | "herestring_redirect" => return Err(refuse_node(current, source)),
            _ => {}
        }
        let mut cursor = current.walk();
        stack.extend(current.children(&mut cursor));
    }
    Ok(())
}

/// Maps a refused node kind to the rule that refuses it.
fn refuse_node(node: Node<'_>, source: &str) -> Reason {
    let snippet = snippet(node, source);
    let kind = match node.kind() {
        "redirected_statement" if has_heredoc(node) => "heredoc_redirect",
        other => other,
    };
    let (rule, what) = match kind {
        "redirected_statement" | "file_redirect" | "file_descriptor" => {
            (Rule::Redirection, "redirection")
        }
        "heredoc_redirect"
        | "heredoc_body"
        | "heredoc_start"
        | "heredoc_end"
        | "herestring_redirect" => (Rule::Heredoc, "here-document or here-string"),
        "command_substitution" => (Rule::CommandSubstitution, "command substitution"),
        "process_substitution" => (Rule::ProcessSubstitution, "process substitution"),
        "arithmetic_expansion" => (Rule::Arithmetic, "arithmetic expansion"),
        "subshell" => (Rule::Subshell, "subshell"),
        "compound_statement" if snippet.starts_with("((") => {
            (Rule::Arithmetic, "arithmetic command")
        }
        "compound_statement" => (Rule::BraceGroup, "brace group"),
        "function_definition" => (Rule::FunctionDefinition, "function definition"),
        "if_statement"
        | "for_statement"
        | "c_style_for_statement"
        | "while_statement"
        | "case_statement"
        | "test_command"
        | "do_group"
        | "negated_command" => (Rule::ControlFlow, "control flow"),
        "variable_assignment"
        | "variable_assignments"
        | "declaration_command"
        | "unset_command" => (Rule::EnvAssignment, "assignment to the shell environment"),
        "ERROR" => (Rule::SyntaxError, "syntax error"),
        _ => (Rule::UnsupportedSyntax, "unsupported syntax"),
    };
    if matches!(node.kind(), "ERROR") || rule != Rule::UnsupportedSyntax {
        Reason::new(rule, format!("{what} `{snippet}`"))
    } else {
        Reason::new(rule, format!("{what} ({}) `{snippet}`", node.kind()))
    }
}

fn has_heredoc(node: Node<'_>) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .any(|child| matches!(child.kind(), "heredoc_redirect" | "herestring_redirect"))
}

/// A refusal for text the grammar and the shell read differently.
fn mismatch(detail: String) -> Reason {
    Reason::new(Rule::UnsupportedSyntax, detail)
}

fn syntax_error(node: Node<'_>, source: &str) -> Reason {
    if node.is_missing() {
        Reason::new(
            Rule::SyntaxError,
            format!("missing `{}` near byte {}", node.kind(), node.start_byte()),
        )
    } else {
        Reason::new(
            Rule::SyntaxError,
            format!("cannot parse {}", code(&snippet(node, source))),
        )
    }
}

fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or("")
}

/// Longest text, in characters, that a reason quotes.
const MAX_QUOTED_CHARS: usize = 80;

/// Text set off as code in a reason: cut at [`MAX_QUOTED_CHARS`], newlines and tabs shown as
/// `⏎` and `⇥` so the reason stays one line, and a double-backtick fence around text with a
/// backtick, so ``true `#` `` reads as itself.
fn code(text: &str) -> String {
    let mut shown: String = text
        .chars()
        .take(MAX_QUOTED_CHARS)
        .map(|c| match c {
            '\n' => '⏎',
            '\t' => '⇥',
            other => other,
        })
        .collect();
    if text.chars().nth(MAX_QUOTED_CHARS).is_some() {
        shown.push('…');
    }
    if shown.contains('`') {
        format!("`` {shown} ``")
    } else {
        format!("`{shown}`")
    }
}

/// A short excerpt for reasons: the first line, at most 60 characters.
fn snippet(node: Node<'_>, source: &str) -> String {
    let raw = text(node, source);
    let line = raw.lines().next().unwrap_or("");
    let mut short: String = line.chars().take(60).collect();
    if short.len() < raw.len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(source: &str) -> Vec<Vec<String>> {
        parse_shell(source)
            .unwrap()
            .into_iter()
            .map(|s| s.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    fn rule(source: &str) -> Rule {
        parse_shell(source).unwrap_err().rule
    }

    #[test]
    fn splits_chains_into_segments() {
        assert_eq!(
            words("ls -la && rm -rf / | head; echo a & b\nc"),
            vec![
                vec!["ls", "-la"],
                vec!["rm", "-rf", "/"],
                vec!["head"],
                vec!["echo", "a"],
                vec!["b"],
                vec!["c"],
            ]
        );
    }

    #[test]
    fn removes_quotes() {
        assert_eq!(
            words(r#"echo "a\"b" 'c'"d" foo\ bar "x && y""#),
            vec![vec!["echo", "a\"b", "cd", "foo bar", "x && y"]]
        );
    }

    #[test]
    fn denies_constructs_with_their_rule() {
        assert_eq!(rule("ls > x"), Rule::Redirection);
        assert_eq!(rule("cat <<EOF\nx\nEOF"), Rule::Heredoc);
        assert_eq!(rule("echo $(id)"), Rule::CommandSubstitution);
        assert_eq!(rule("echo \"`id`\""), Rule::CommandSubstitution);
        assert_eq!(rule("(ls)"), Rule::Subshell);
        assert_eq!(rule("{ ls; }"), Rule::BraceGroup);
        assert_eq!(rule("((x=1))"), Rule::Arithmetic);
        assert_eq!(rule("echo a |& cat"), Rule::UnsupportedOperator);
        assert_eq!(rule("ls |"), Rule::SyntaxError);
        assert_eq!(rule("$X -l"), Rule::ParameterExpansion);
        assert_eq!(rule("echo {a,b}"), Rule::UnsupportedSyntax);
    }

    #[test]
    fn quotes_the_refused_text_as_written() {
        let brace = parse_shell("echo {\"a\",\"b\"}").unwrap_err();
        assert!(brace.detail.contains("`{\"a\",\"b\"}`"), "{brace}");
        let backtick = parse_shell("true `#`").unwrap_err();
        assert!(backtick.detail.contains("`` ` ``"), "{backtick}");
    }

    #[test]
    fn keeps_expansions_in_arguments_as_written() {
        let segments = parse_shell("echo $HOME").unwrap();
        assert!(segments[0].words[1].has_expansion);
        assert_eq!(segments[0].words[1].text, "$HOME");
    }

    #[test]
    fn parses_a_maximal_ordinary_command_within_the_work_bound() {
        let mut command = String::from("echo");
        while command.len() + 8 < MAX_COMMAND_BYTES {
            command.push_str(" 'a b' c");
        }
        assert_eq!(parse_shell(&command).unwrap().len(), 1);
    }

    #[test]
    fn starts_afresh_after_a_cancelled_parse() {
        let long = vec!["echo a b c"; 200].join(" && ");
        assert!(parse_tree(long.as_bytes(), 1).is_none());
        let segments = parse_shell("git status").unwrap();
        assert_eq!(segments.len(), 1);
        let words: Vec<&str> = segments[0].words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(words, ["git", "status"]);
    }

    #[test]
    fn survives_code_points_past_latin1_after_a_brace() {
        // Each crashed tree-sitter-bash's scanner on Linux before the parser saw `%` instead.
        for command in [
            "{\u{E010C}",
            "{\u{31860}",
            "echo {1..\u{1F600}}",
            "ls {9\u{100}",
        ] {
            let _ = parse_shell(command);
        }
    }

    #[test]
    fn reads_non_ascii_words_as_bash_does() {
        let segments = parse_shell("git commit -m 'café ☕' && echo naïve\u{a0}-la").unwrap();
        let words: Vec<Vec<&str>> = segments
            .iter()
            .map(|s| s.words.iter().map(|w| w.text.as_str()).collect())
            .collect();
        // A no-break space separates nothing in bash, so `naïve\u{a0}-la` stays one word.
        assert_eq!(
            words,
            [
                vec!["git", "commit", "-m", "café ☕"],
                vec!["echo", "naïve\u{a0}-la"]
            ]
        );
    }

    #[test]
    fn reads_a_backslash_newline_in_single_quotes_as_text() {
        assert_eq!(words("echo 'a\\\nb'"), vec![vec!["echo", "a\\\nb"]]);
        assert_eq!(
            words("echo \"x\" 'a\\\nb' c"),
            vec![vec!["echo", "x", "a\\\nb", "c"]]
        );
        for source in [
            "echo a\\\nb",
            "echo \"a\\\nb\"",
            "echo 'a' b\\\nc",
            "echo $'a\\\nb'",
            "echo `x` 'a\\\nb'",
            "ls # c \\\nid",
            "echo \\'a\\\nb'",
        ] {
            assert_eq!(rule(source), Rule::LineContinuation, "{source:?}");
        }
    }

    #[test]
    fn survives_long_chains_without_recursion() {
        let chain = vec!["true"; 5000].join(" && ");
        assert_eq!(parse_shell(&chain).unwrap().len(), 5000);
    }
}
