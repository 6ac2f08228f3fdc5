//! Integration tests of the chat core through its public API.

// `/approve` grammar: every accepted form and every refusal.
mod approve_grammar;
// `/elevated` grammar: levels, aliases, queries and refusals.
mod elevated_grammar;
// Cards: sanitization, fences, truncation, receipts and notices.
mod render;
// Reply texts: one distinct message per outcome.
mod replies;
