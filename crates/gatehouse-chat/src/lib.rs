//! Channel-independent chat approvals: everything the chat platforms have in common.
//!
//! An adapter implements the small [`channel::Channel`] trait and only translates between its
//! platform and this crate's types; it says what else is particular to its platform (its name,
//! its id rules) through [`platform::Platform`], and plugs in through [`adapter::Adapter`]. Forwarding rules ([`plan`]), card rendering ([`render`]), the
//! `/approve`, `/elevated` and `/start` grammars ([`grammar`]) and the answer to `/start`
//! ([`introduction`]), approver and token checks ([`commands`],
//! [`token`]), retries and rate limits ([`delivery`], on the one [`throttle`] every adapter
//! paces its calls with) live here, once.
//!
//! **Invariants.**
//! - Nothing here depends on the approval manager, the service or the gateway, and nothing here
//!   names a platform: the service converts its records into [`render::ApprovalView`] /
//!   [`render::ResolveOutcome`] and acts on the returned [`commands::TextAction`] /
//!   [`token::TokenClaim`].
//! - Only configured approver ids decide; being in the chat grants nothing.
//! - Button payloads are opaque tokens bound to one approval, decision, chat and message.
//! - Untrusted text is never shown raw: control, bidi and invisible characters become visible
//!   markers, and code fences cannot be closed from inside.
//! - Anything unparsed or ambiguous is refused with a reply that says why, never guessed.
//!
//! **Entry points.** [`config::ChatApprovalSettings::validate`] (with the registered
//! [`Platforms`]), then [`plan::plan_delivery`]
//! and [`dispatch::Dispatcher::deliver`] for a new approval; [`commands::interpret_text`] and
//! [`commands::check_press`] for inbound events.
//!
//! ```
//! use gatehouse_chat::grammar::approve::{parse_approve, ApproveCommand, ApproveParse};
//! use gatehouse_chat::render::{render_prompt, ApprovalView};
//! use gatehouse_policy::ApprovalDecision;
//!
//! let parsed = parse_approve("/approve@gatebot deny 0f3c9a1e", Some("gatebot"));
//! assert_eq!(
//!     parsed,
//!     ApproveParse::Command(ApproveCommand {
//!         target: "0f3c9a1e".into(),
//!         decision: ApprovalDecision::Deny,
//!     })
//! );
//!
//! let view = ApprovalView {
//!     id: "0f3c9a1e-7b2d-4c1a-9e55-1234567890ab".into(),
//!     command: "echo \u{202e}gnp.exe".into(),
//!     cwd: None,
//!     agent_id: Some("main".into()),
//!     host: None,
//!     resolved_path: None,
//!     env_keys: vec![],
//!     expires_at_ms: 300_000,
//!     allow_always_offered: false,
//!     chain: None,
//!     tool: None,
//! };
//! let card = render_prompt(&view, 0, 1200);
//! assert!(card.plain_text().contains("echo [U+202E RLO]gnp.exe"));
//! ```

pub mod adapter;
pub mod channel;
pub mod commands;
pub mod config;
pub mod conversation;
pub mod delivery;
pub mod dispatch;
pub mod error;
pub mod filter;
pub mod grammar;
pub mod introduction;
pub mod journal;
pub mod plan;
pub mod platform;
pub mod render;
pub mod replies;
pub mod route;
pub mod sanitize;
pub mod strangers;
pub mod throttle;
pub mod token;

pub use adapter::{Adapter, Connect, Connection, SetupError, Steps};
pub use channel::{
    ButtonPress, Channel, Inbound, InboundText, InteractionRef, ReplayMemory, ReplayMemoryError,
};
pub use conversation::{ConversationKey, Place};
pub use error::{ChatError, RateScope};
pub use platform::{Platform, Platforms};
pub use route::{Conversation, Destination, MessageLocator, Route, SendKey, TurnSource};
