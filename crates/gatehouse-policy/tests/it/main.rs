//! The one integration test binary of `gatehouse-policy`.

// Builders and the `check` renderer shared by the tool-policy tests.
mod tool_support;
// One test per tool-policy rule, each through the public entry point.
mod tool_rules;
// Whole-pipeline table: realistic configs, asserting the set and every removal's source.
mod tool_pipeline;
// Call-time refusal of removed and owner-only tools.
mod tool_call;
// Properties: deny entries never widen, sub-agents never exceed their parent.
mod tool_props;
