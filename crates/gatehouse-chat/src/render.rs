//! Approval cards in a platform-neutral shape (title, fields, command block, buttons) plus a
//! plain-text form; adapters only translate a [`Card`] into their markup.
//!
//! The gateway converts its approval records into [`ApprovalView`] and its resolution records
//! into [`ResolveOutcome`]; this module never sees the approval manager's types.

use gatehouse_policy::ApprovalDecision;

use crate::sanitize::{fence_for, make_visible_bounded, neutralize_backticks, one_line};

/// Longest command shown in a card by default; the Control UI always has the full text.
pub const DEFAULT_MAX_COMMAND_CHARS: usize = 1200;

/// Longest metadata value (path, agent, host) shown in a card.
const MAX_FIELD_CHARS: usize = 256;

/// Longest description of a tool approval shown in a card; the Control UI has all of it.
const MAX_DESCRIPTION_CHARS: usize = 600;

/// Characters of an approval id shown as its short form, also accepted as a prefix by `/approve`.
pub const SHORT_ID_LEN: usize = 8;

/// What a card shows about a pending approval: plain data, filled in by the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalView {
    /// The approval's full id.
    pub id: String,
    /// The command exactly as it would run (untrusted: sanitized when rendered).
    pub command: String,
    /// The working directory.
    pub cwd: Option<String>,
    /// The requesting agent.
    pub agent_id: Option<String>,
    /// The host the command would run on.
    pub host: Option<String>,
    /// The executable the command resolved to.
    pub resolved_path: Option<String>,
    /// Names of environment variables the request overrides (never their values).
    pub env_keys: Vec<String>,
    /// When the approval expires, in Unix milliseconds.
    pub expires_at_ms: u64,
    /// Whether allow-always is offered (it is not when no allowlist pattern can be derived).
    pub allow_always_offered: bool,
    /// What runs, when the gateway knows it: every program of the chain and what allow-always
    /// would store (`None` for an approval stored before the gateway kept this).
    pub chain: Option<ChainView>,
    /// For a tool call other than an exec command: what the card shows of it instead of a
    /// command line. `None` for exec approvals.
    pub tool: Option<ToolCard>,
}

/// Every program a command runs and what allow-always would store, as approvers must see them
/// (the policy's approval summary, as lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChainView {
    /// One line per program of the chain, in order: its words, where it resolved and through
    /// what, and what lets it run or that a person decides (untrusted: sanitized when rendered).
    pub programs: Vec<String>,
    /// The exact allowlist patterns allow-always would store; empty when it stores nothing.
    pub allow_always_patterns: Vec<String>,
}

/// What a card shows of a tool call (`tools.call.request`). Every value is the agent host's
/// untrusted text: rendering makes it visible and bounds it, as it does a command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolCard {
    /// The canonical tool name (`write`, `web_fetch`, `mcp__github__create_issue`).
    pub tool: String,
    /// Its salient parameters, in order: (name, value).
    pub params: Vec<(String, String)>,
    /// The requester's one-line title.
    pub title: Option<String>,
    /// The requester's description (several lines are shown on one).
    pub description: Option<String>,
    /// `info`, `warning` or `critical`, as the requester rated it.
    pub severity: String,
    /// What allow-always would cover, in words (`write under /ws/notes.md`).
    pub allow_always_covers: Option<String>,
}

impl ApprovalView {
    /// The text in the card's code block: the command, or a tool call's parameters one per
    /// line. What "shown in full" is measured on.
    pub fn shown_text(&self) -> String {
        match &self.tool {
            None => self.command.clone(),
            Some(tool) if tool.params.is_empty() => tool.tool.clone(),
            Some(tool) => tool
                .params
                .iter()
                .map(|(name, value)| format!("{name}: {value}"))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The decisions a card offers, in button order.
    pub fn offered_decisions(&self) -> Vec<ApprovalDecision> {
        let mut decisions = vec![ApprovalDecision::AllowOnce];
        if self.allow_always_offered {
            decisions.push(ApprovalDecision::AllowAlways);
        }
        decisions.push(ApprovalDecision::Deny);
        decisions
    }

    /// The first [`SHORT_ID_LEN`] characters of the id.
    pub fn short_id(&self) -> String {
        self.id.chars().take(SHORT_ID_LEN).collect()
    }
}

/// A recorded decision, for receipts and "already resolved" replies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveOutcome {
    /// What was decided.
    pub decision: ApprovalDecision,
    /// Who decided, as shown to people (a display name, handle or "Control UI").
    pub decided_by: String,
}

/// What state a card shows, so adapters can pick colours and icons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CardState {
    /// Waiting for a decision.
    Pending,
    /// Decided.
    Resolved(ResolveOutcome),
    /// Nobody decided in time.
    Expired,
    /// Withdrawn before a decision (restart, requester gone).
    Cancelled,
    /// An informational message, not an approval card.
    Notice,
}

/// What a metadata line is about, so an adapter can render one natively (Discord shows
/// [`FieldKind::Expires`] as a relative timestamp) without matching on label text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// The request's working directory.
    WorkingDirectory,
    /// The requesting agent.
    Agent,
    /// The host the command would run on.
    Host,
    /// The executable the command resolved to.
    ResolvedPath,
    /// One program of the command's chain (a field per program, in order).
    Program,
    /// Names of environment variables the request overrides.
    EnvOverrides,
    /// The allowlist patterns allow-always would store.
    AllowAlwaysStores,
    /// The short and the full approval id.
    Id,
    /// When the approval expires; [`Card::expires_at_ms`] holds the instant.
    Expires,
    /// The tool a tool approval is about.
    Tool,
    /// The requester's title of a tool approval.
    RequestTitle,
    /// The requester's description of a tool approval.
    Description,
    /// How much the requester says is at stake (`warning`, `critical`).
    Severity,
    /// What allow-always would cover for a tool approval.
    AllowAlwaysCovers,
}

impl FieldKind {
    /// The label people read; one place, so every channel words a field the same.
    pub fn label(self) -> &'static str {
        match self {
            FieldKind::WorkingDirectory => "Working directory",
            FieldKind::Agent => "Agent",
            FieldKind::Host => "Host",
            FieldKind::ResolvedPath => "Resolved path",
            FieldKind::Program => "Runs",
            FieldKind::EnvOverrides => "Env overrides",
            FieldKind::AllowAlwaysStores => "Allow-always stores",
            FieldKind::Id => "ID",
            FieldKind::Expires => "Expires",
            FieldKind::Tool => "Tool",
            FieldKind::RequestTitle => "Title",
            FieldKind::Description => "Description",
            FieldKind::Severity => "Severity",
            FieldKind::AllowAlwaysCovers => "Allow always covers",
        }
    }
}

/// One labelled line of metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// What the line is about; adapters branch on this, never on the label.
    pub kind: FieldKind,
    /// The label shown, always `kind.label()`.
    pub label: &'static str,
    /// The sanitized value.
    pub value: String,
}

impl Field {
    /// A line whose label follows from its kind, so the two cannot disagree.
    fn new(kind: FieldKind, value: String) -> Self {
        Self {
            kind,
            label: kind.label(),
            value,
        }
    }
}

/// The sanitized command, ready to be placed in a code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandBlock {
    /// The visible, possibly truncated, command text.
    pub text: String,
    /// How many characters of the command were left out; zero when shown in full.
    pub truncated_chars: usize,
}

impl CommandBlock {
    /// The block as CommonMark with a fence the text cannot close.
    pub fn fenced_markdown(&self) -> String {
        let fence = fence_for(&self.text);
        format!("{fence}\n{}\n{fence}", self.text)
    }

    /// The block for platforms that only know three-backtick fences: backticks replaced by a
    /// look-alike so the fence cannot be closed from inside.
    pub fn fenced_neutralized(&self) -> String {
        format!("```\n{}\n```", neutralize_backticks(&self.text))
    }

    /// The note to show under a truncated command, if any.
    pub fn truncation_note(&self) -> Option<String> {
        (self.truncated_chars > 0).then(|| {
            format!(
                "(truncated: {} more characters; the full command is in the Control UI)",
                self.truncated_chars
            )
        })
    }
}

/// How a button should look; adapters map it to their palette.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonStyle {
    /// Allow once.
    Success,
    /// Allow always.
    Primary,
    /// Deny.
    Danger,
}

/// A decision button carrying an opaque token (see [`crate::token`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Button {
    /// The label shown.
    pub label: &'static str,
    /// The decision it stands for (for adapters that need it; the token alone is authoritative).
    pub decision: ApprovalDecision,
    /// The opaque token to put in the platform's payload field.
    pub token: String,
    /// Its look.
    pub style: ButtonStyle,
}

/// A platform-neutral message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// What state it shows.
    pub state: CardState,
    /// The headline.
    pub title: String,
    /// Labelled metadata lines.
    pub fields: Vec<Field>,
    /// The command, when the message is about one.
    pub command: Option<CommandBlock>,
    /// A closing line (reply instructions, expiry note).
    pub note: Option<String>,
    /// Decision buttons; empty for anything but a pending card sent to an interactive surface.
    pub buttons: Vec<Button>,
    /// Expiry in Unix milliseconds, for platforms with native relative timestamps.
    pub expires_at_ms: Option<u64>,
}

impl Card {
    /// Attaches one button per issued `(decision, token)` pair, in the order given.
    pub fn with_buttons(mut self, tokens: Vec<(ApprovalDecision, String)>) -> Card {
        self.buttons = tokens
            .into_iter()
            .map(|(decision, token)| {
                let (label, style) = button_look(decision);
                Button {
                    label,
                    decision,
                    token,
                    style,
                }
            })
            .collect();
        self
    }

    /// The card as plain text (also the notification fallback of rich formats).
    pub fn plain_text(&self) -> String {
        let mut lines = vec![self.title.clone()];
        if let Some(command) = &self.command {
            lines.push(command.fenced_markdown());
            lines.extend(command.truncation_note());
        }
        lines.extend(
            self.fields
                .iter()
                .map(|field| format!("{}: {}", field.label, field.value)),
        );
        lines.extend(self.note.clone());
        lines.join("\n")
    }
}

fn button_look(decision: ApprovalDecision) -> (&'static str, ButtonStyle) {
    match decision {
        ApprovalDecision::AllowOnce => ("Allow once", ButtonStyle::Success),
        ApprovalDecision::AllowAlways => ("Allow always", ButtonStyle::Primary),
        ApprovalDecision::Deny => ("Deny", ButtonStyle::Danger),
    }
}

/// The past-tense phrase for a decision, as receipts and replies use it.
pub fn decision_phrase(decision: ApprovalDecision) -> &'static str {
    match decision {
        ApprovalDecision::AllowOnce => "Allowed once",
        ApprovalDecision::AllowAlways => "Allowed always",
        ApprovalDecision::Deny => "Denied",
    }
}

/// The pending approval card. `now_ms` is only used to phrase the expiry.
pub fn render_prompt(view: &ApprovalView, now_ms: u64, max_command_chars: usize) -> Card {
    let decisions: Vec<&str> = view
        .offered_decisions()
        .into_iter()
        .map(ApprovalDecision::as_str)
        .collect();
    let command = command_block(&view.shown_text(), max_command_chars);
    let (kind, what) = match &view.tool {
        None => ("Exec", "command cut"),
        Some(_) => ("Tool", "parameters cut"),
    };
    // A cut command is said in the headline, where nobody misses it: what is not shown must
    // be read in the Control UI before deciding, and allow-always is not offered for it.
    let title = match command.truncated_chars {
        0 => format!("{kind} approval needed"),
        cut => format!(
            "{kind} approval needed: {what}, {cut} characters not shown (read it in full in the Control UI)"
        ),
    };
    Card {
        state: CardState::Pending,
        title,
        fields: pending_fields(view, now_ms),
        command: Some(command),
        note: Some(format!(
            "Reply /approve {} {}",
            one_line(&view.short_id(), SHORT_ID_LEN),
            decisions.join("|")
        )),
        buttons: Vec::new(),
        expires_at_ms: Some(view.expires_at_ms),
    }
}

/// The card after a decision: the decision and who made it, no buttons.
pub fn render_receipt(
    view: &ApprovalView,
    outcome: &ResolveOutcome,
    max_command_chars: usize,
) -> Card {
    let title = format!(
        "{} by {}",
        decision_phrase(outcome.decision),
        one_line(&outcome.decided_by, 64)
    );
    let state = CardState::Resolved(outcome.clone());
    closed_card(view, state, title, None, max_command_chars)
}

/// The card after the approval expired undecided.
pub fn render_expired(view: &ApprovalView, max_command_chars: usize) -> Card {
    let title = "Expired: nobody decided in time".to_owned();
    let note = Some("The request fell back to the configured askFallback.".to_owned());
    closed_card(view, CardState::Expired, title, note, max_command_chars)
}

/// The card after the approval was withdrawn, e.g. because the gateway restarted.
pub fn render_cancelled(view: &ApprovalView, reason: &str, max_command_chars: usize) -> Card {
    let title = format!("Cancelled: {}", one_line(reason, 120));
    closed_card(view, CardState::Cancelled, title, None, max_command_chars)
}

/// A card that no longer asks anything: same command and fields, no buttons, no expiry.
fn closed_card(
    view: &ApprovalView,
    state: CardState,
    title: String,
    note: Option<String>,
    max_command_chars: usize,
) -> Card {
    Card {
        state,
        title,
        fields: metadata_fields(view),
        command: Some(command_block(&view.shown_text(), max_command_chars)),
        note,
        buttons: Vec::new(),
        expires_at_ms: None,
    }
}

/// The short notice left in the origin chat when the card went to approvers' DMs.
pub fn render_origin_notice(view: &ApprovalView) -> Card {
    notice(format!(
        "Approval {} requested; the prompt was sent to the approvers' DMs.",
        one_line(&view.short_id(), SHORT_ID_LEN)
    ))
}

/// The card left in the origin chat when no target received a prompt: the approval as a prompt
/// shows it (command, fields, expiry), without buttons, and the exact commands an approver can
/// type. It shows everything a card does, because whoever decides from it must have seen what
/// they decide.
pub fn render_fallback(view: &ApprovalView, now_ms: u64, max_command_chars: usize) -> Card {
    let id = one_line(&view.id, 128);
    let decisions: Vec<String> = view
        .offered_decisions()
        .into_iter()
        .map(|decision| format!("/approve {id} {decision}"))
        .collect();
    Card {
        state: CardState::Pending,
        title: format!(
            "Approval {} could not be delivered to any approver",
            one_line(&view.short_id(), SHORT_ID_LEN)
        ),
        fields: pending_fields(view, now_ms),
        command: Some(command_block(&view.shown_text(), max_command_chars)),
        note: Some(format!(
            "An approver can decide here with:\n{}",
            decisions.join("\n")
        )),
        buttons: Vec::new(),
        expires_at_ms: Some(view.expires_at_ms),
    }
}

fn notice(title: String) -> Card {
    Card {
        state: CardState::Notice,
        title,
        fields: Vec::new(),
        command: None,
        note: None,
        buttons: Vec::new(),
        expires_at_ms: None,
    }
}

/// Whether a card with this `max_chars` limit shows `command` in full: allow-always is offered,
/// by button or by typed command, only for a command the approver could read to its end.
pub fn shows_in_full(command: &str, max_chars: usize) -> bool {
    command_block(command, max_chars).truncated_chars == 0
}

fn command_block(command: &str, max_chars: usize) -> CommandBlock {
    let (text, truncated_chars) = make_visible_bounded(command, max_chars);
    CommandBlock {
        text,
        truncated_chars,
    }
}

/// The metadata of a card still waiting for a decision: what every card shows, then the expiry.
fn pending_fields(view: &ApprovalView, now_ms: u64) -> Vec<Field> {
    let mut fields = metadata_fields(view);
    fields.push(Field::new(
        FieldKind::Expires,
        expiry_phrase(view.expires_at_ms, now_ms),
    ));
    fields
}

/// A tool approval's own lines: the tool, the requester's words, and what allow-always covers.
fn tool_fields(tool: &ToolCard) -> Vec<Field> {
    let mut fields = vec![Field::new(
        FieldKind::Tool,
        one_line(&tool.tool, MAX_FIELD_CHARS),
    )];
    if let Some(title) = &tool.title {
        fields.push(Field::new(
            FieldKind::RequestTitle,
            one_line(title, MAX_FIELD_CHARS),
        ));
    }
    if let Some(description) = &tool.description {
        // Lines are kept apart with a visible separator; one field is one line on every surface.
        let joined = description.lines().collect::<Vec<_>>().join(" · ");
        fields.push(Field::new(
            FieldKind::Description,
            one_line(&joined, MAX_DESCRIPTION_CHARS),
        ));
    }
    if !tool.severity.is_empty() && tool.severity != "info" {
        fields.push(Field::new(
            FieldKind::Severity,
            one_line(&tool.severity, 16),
        ));
    }
    if let Some(covers) = &tool.allow_always_covers {
        fields.push(Field::new(
            FieldKind::AllowAlwaysCovers,
            one_line(covers, MAX_FIELD_CHARS),
        ));
    }
    fields
}

fn metadata_fields(view: &ApprovalView) -> Vec<Field> {
    let tool = view.tool.as_ref().map(tool_fields).unwrap_or_default();
    let optional = [
        (FieldKind::WorkingDirectory, &view.cwd),
        (FieldKind::Agent, &view.agent_id),
        (FieldKind::Host, &view.host),
        (FieldKind::ResolvedPath, &view.resolved_path),
    ];
    let mut fields: Vec<Field> = tool;
    fields.extend(optional.into_iter().filter_map(|(kind, value)| {
        value
            .as_deref()
            .map(|value| Field::new(kind, one_line(value, MAX_FIELD_CHARS)))
    }));
    let programs = view.chain.iter().flat_map(|chain| &chain.programs);
    fields.extend(
        programs.map(|line| Field::new(FieldKind::Program, one_line(line, MAX_FIELD_CHARS))),
    );
    if !view.env_keys.is_empty() {
        let keys: Vec<String> = view.env_keys.iter().map(|key| one_line(key, 64)).collect();
        fields.push(Field::new(
            FieldKind::EnvOverrides,
            one_line(&keys.join(", "), MAX_FIELD_CHARS),
        ));
    }
    if let Some(chain) = &view.chain {
        let stores = if chain.allow_always_patterns.is_empty() {
            "nothing (approve this exact command)".to_owned()
        } else {
            let patterns: Vec<String> = chain
                .allow_always_patterns
                .iter()
                .map(|pattern| one_line(pattern, MAX_FIELD_CHARS))
                .collect();
            one_line(&patterns.join(", "), MAX_FIELD_CHARS)
        };
        fields.push(Field::new(FieldKind::AllowAlwaysStores, stores));
    }
    fields.push(Field::new(
        FieldKind::Id,
        format!(
            "{} ({})",
            one_line(&view.short_id(), SHORT_ID_LEN),
            one_line(&view.id, 128)
        ),
    ));
    fields
}

/// "in 4m 30s (2026-11-21 06:40:00 UTC)", or "expired (…)" once past.
fn expiry_phrase(expires_at_ms: u64, now_ms: u64) -> String {
    let at = utc_timestamp(expires_at_ms / 1000);
    if expires_at_ms <= now_ms {
        return format!("expired ({at})");
    }
    let secs = (expires_at_ms - now_ms).div_ceil(1000);
    let relative = match (secs / 3600, secs % 3600 / 60, secs % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, 0) => format!("{m}m"),
        (0, m, s) => format!("{m}m {s}s"),
        (h, m, _) => format!("{h}h {m}m"),
    };
    format!("in {relative} ({at})")
}

/// Formats Unix seconds as `YYYY-MM-DD HH:MM:SS UTC` (Howard Hinnant's civil-from-days), so
/// neither this crate nor the CLI showing approvals needs a date library for one line of text.
pub fn utc_timestamp(unix_secs: u64) -> String {
    let days = unix_secs / 86_400;
    let rem = unix_secs % 86_400;
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_timestamps() {
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_timestamp(1_795_242_061), "2026-11-21 06:21:01 UTC");
    }

    #[test]
    fn phrases_expiry() {
        assert_eq!(
            expiry_phrase(90_000, 0),
            "in 1m 30s (1970-01-01 00:01:30 UTC)"
        );
        assert_eq!(expiry_phrase(120_000, 0), "in 2m (1970-01-01 00:02:00 UTC)");
        assert_eq!(
            expiry_phrase(1_000, 5_000),
            "expired (1970-01-01 00:00:01 UTC)"
        );
    }
}
