//! The report a person reads: each problem as `file:line:column: key: message`, its source
//! line with a caret under the column, and nothing from the file that should not reach a
//! terminal (secrets, control characters).

use std::path::Path;

use gatehouse_config::load_str;
use pretty_assertions::assert_eq;

/// What the binary prints after `gatehouse: ` for `text` loaded as `/etc/gatehouse.json5`.
fn report(text: &str) -> String {
    load_str(text, Path::new("/etc/gatehouse.json5"))
        .unwrap_err()
        .to_string()
}

#[test]
fn renders_every_problem_with_its_source_line_a_caret_and_a_count() {
    let text = "{
  tools: {
    exec: { securty: 'deny' },
  },
  agents: { list: [
    { id: 'main' },
    { id: 'ops', tools: { deny: 'exec' } },
  ] },
  gateway: {
    listen: 'localhost:18790',
  },
}
";
    assert_eq!(
        report(text),
        "/etc/gatehouse.json5:3:13: `tools.exec.securty`: unknown key
   |
3  |     exec: { securty: 'deny' },
   |             ^^^^^^^ did you mean `security`?

/etc/gatehouse.json5:7:33: `agents.list[1].tools.deny`: wrong type: expected a list `[ … ]`, \
         found a string
   |
7  |     { id: 'ops', tools: { deny: 'exec' } },
   |                                 ^^^^^^

/etc/gatehouse.json5:10:5: `gateway.listen`: \"localhost:18790\" is not an IP address and port \
         like 127.0.0.1:18790 or [::1]:18790 (host names are not resolved)
   |
10 |     listen: 'localhost:18790',
   |     ^^^^^^

3 problems in /etc/gatehouse.json5"
    );
}

#[test]
fn renders_a_syntax_error_with_a_caret_and_one_problem_without_a_count() {
    let text = "{\n  tools: { profile: 'coding' }\n  agents: {},\n}\n";
    assert_eq!(
        report(text),
        "/etc/gatehouse.json5:3:3: syntax error: expected comma
  |
3 |   agents: {},
  |   ^"
    );
}

#[test]
fn masks_secret_values_on_the_lines_it_shows() {
    let text = "{ channels: { telegram: { botToken: '123:sekrit', tokenFile: '/run/tg' } },
  gateway: { auth: { tokens: [ { name: 'ci', token: 'ci-sekrit', scopes: ['root'] } ] } } }";
    let report = report(text);
    assert!(!report.contains("sekrit"), "{report}");
    assert!(
        report.contains(
            "1 | { channels: { telegram: { botToken: '**********', tokenFile: '/run/tg' } },"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "2 |   gateway: { auth: { tokens: [ { name: 'ci', token: '*********', scopes: \
             ['root'] } ] } } }"
        ),
        "{report}"
    );
}

/// A config line may hold escape sequences or bidi controls; shown raw they could rewrite the
/// terminal. They become U+FFFD, one column each, so the caret stays put; tabs are kept and
/// repeated under the line.
#[test]
fn shows_control_characters_as_replacements_and_keeps_tabs_aligned() {
    let text = "{\n\ttools: { allow: ['\u{1b}[2J\u{202e}'], \tdeny: 5 },\n}";
    assert_eq!(
        report(text),
        "/etc/gatehouse.json5:2:36: `tools.deny`: wrong type: expected a list `[ … ]`, found a \
         whole number
  |
2 | \ttools: { allow: ['\u{fffd}[2J\u{fffd}'], \tdeny: 5 },
  | \t                           \t      ^"
    );
}

/// A one-line config can be kilobytes long; the excerpt is cut around the column.
#[test]
fn cuts_a_long_line_around_the_column() {
    let deny: Vec<String> = (0..40).map(|n| format!("'tool{n}'")).collect();
    let text = format!(
        "{{ tools: {{ deny: [{}], exec: {{ securty: 'x' }}, allow: [{}] }} }}",
        deny.join(", "),
        deny.join(", ")
    );
    let report = report(&text);
    let lines: Vec<&str> = report.lines().collect();
    let shown = lines[2].strip_prefix("1 | ").unwrap();
    let carets = lines[3].strip_prefix("  | ").unwrap();
    assert!(shown.starts_with('…') && shown.ends_with('…'), "{shown}");
    assert_eq!(shown.chars().count(), 102, "{shown}");
    let caret_at = carets.find('^').unwrap();
    let under_caret: String = shown.chars().skip(caret_at).take(7).collect();
    assert_eq!(under_caret, "securty", "{report}");
}

/// A double-width character takes two terminal columns; the caret line pads it with two.
#[test]
fn aligns_the_caret_after_wide_characters() {
    let text = "{ agents: { list: [ { id: '日本', tols: 1 } ] } }";
    let report = report(text);
    let caret_line = report.lines().nth(3).unwrap();
    assert_eq!(
        caret_line,
        format!("  | {}^^^^ did you mean `tools`?", " ".repeat(27 + 4 + 3))
    );
}
