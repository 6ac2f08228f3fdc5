//! The decision for one tool call: the tool policy, then the tool's own checks, then the
//! always-ask lists and the stored grants. Every step adds reasons; the strictest wins.

use std::collections::BTreeMap;
use std::net::IpAddr;

use crate::exec::{Decision, ExecEvaluation, evaluate};
use crate::files::{FileOp, FileRules, FileTool, ResolvedFile, check_file, check_patch};
use crate::tools::{
    ToolCallRefused, ToolPolicyInputs, check_tool_call_registering_mcp, first_entry_denoting,
    mcp_server_id, normalize_tool_name, parse_mcp_tool_name,
};
use crate::urls::{ApprovedUrl, UrlCheck, UrlRules, check_resolved, check_url};

use super::call::{Expected, ToolCall, ToolParams};
use super::decision::{HostToResolve, ToolCallDecision, ToolCallOutcome, ToolCallReason};
use super::grant::Grant;
use super::policy::ToolCallPolicy;

/// Decides one tool call.
///
/// Pure apart from the filesystem reads of the file checks: no DNS (a URL with a host name
/// comes back as [`ToolCallOutcome::NeedsResolution`] unless [`ToolCall::resolved`] holds its
/// addresses), no clock, no network. A call refused before any host needs resolving is
/// decided at once, so a refused call costs no lookup.
pub fn decide_tool_call(call: &ToolCall, policy: &ToolCallPolicy<'_>) -> ToolCallOutcome {
    let tool = match check_tool_call_registering_mcp(policy.tools, policy.effective, &call.tool) {
        Ok(tool) => tool,
        Err(refused) => {
            let reason =
                ToolCallReason::new(Decision::Deny, refusal_rule(&refused), refused.to_string());
            return refuse(normalize_tool_name(&call.tool), reason);
        }
    };
    if !Expected::of(&tool).accepts(&tool, &call.params) {
        let reason = ToolCallReason::new(
            Decision::Deny,
            "params-mismatch",
            format!("tool {tool:?} was sent the parameters of another kind of tool"),
        );
        return refuse(tool, reason);
    }

    let mut facts = Facts::default();
    let urls_rules = if tool == "browser" {
        (policy.browser, "browser")
    } else {
        (policy.fetch, "tools.web.fetch")
    };
    match &call.params {
        ToolParams::Read { path } => facts.file(policy.files, path, FileOp::Read),
        ToolParams::Write { path, len } => {
            facts.file(policy.files, path, FileOp::Write { len: *len })
        }
        ToolParams::Edit { path } => facts.file(policy.files, path, FileOp::Edit),
        ToolParams::ApplyPatch { text } => facts.patch(policy.files, text),
        ToolParams::WebFetch { url } | ToolParams::Browser { url } => {
            facts.url(urls_rules, url, &call.resolved);
        }
        ToolParams::Other { urls } | ToolParams::Mcp { urls, .. } => {
            for url in urls {
                facts.url(urls_rules, url, &call.resolved);
            }
        }
        ToolParams::Exec(request) => facts.exec(evaluate(request, policy.exec)),
    }
    if facts.refused() {
        return ToolCallOutcome::Decided(Box::new(facts.finish(tool, None)));
    }
    if !facts.pending.is_empty() {
        facts.pending.sort();
        facts.pending.dedup();
        return ToolCallOutcome::NeedsResolution(facts.pending);
    }

    let plugin = plugin_of(&tool, policy.tools);
    if let Some((key, entry)) = policy.always_ask.iter().find_map(|list| {
        first_entry_denoting(&list.entries, &tool, plugin.as_deref()).map(|e| (&list.key, e))
    }) {
        facts.reasons.push(ToolCallReason::new(
            Decision::Ask,
            "always-ask",
            format!("{key} entry {entry:?} names tool {tool:?}"),
        ));
    }
    let grant = (facts.exec.is_none()).then(|| Grant::for_call(&tool, &facts.files, &facts.urls));
    facts.apply_grants(&tool, policy.grants);
    ToolCallOutcome::Decided(Box::new(facts.finish(tool, grant)))
}

/// A refusal before any tool-specific check.
fn refuse(tool: String, reason: ToolCallReason) -> ToolCallOutcome {
    ToolCallOutcome::Decided(Box::new(ToolCallDecision {
        tool,
        decision: Decision::Deny,
        reasons: vec![reason],
        files: Vec::new(),
        urls: Vec::new(),
        exec: None,
        grant: None,
    }))
}

fn refusal_rule(refused: &ToolCallRefused) -> &'static str {
    match refused {
        ToolCallRefused::OwnerOnly { .. } => "owner-only",
        ToolCallRefused::Removed { .. } => "tool-removed",
        ToolCallRefused::Unknown { .. } => "unknown-tool",
    }
}

/// The plugin id of a tool: its registration's, or `mcp__<server>` for an MCP name.
fn plugin_of(tool: &str, inputs: &ToolPolicyInputs) -> Option<String> {
    inputs
        .plugin_tools
        .iter()
        .find(|p| normalize_tool_name(&p.name) == tool)
        .map(|p| p.plugin_id.trim().to_lowercase())
        .or_else(|| parse_mcp_tool_name(tool).map(|(server, _)| mcp_server_id(server)))
}

/// What the tool's own checks found.
#[derive(Default)]
struct Facts {
    reasons: Vec<ToolCallReason>,
    files: Vec<ResolvedFile>,
    urls: Vec<ApprovedUrl>,
    pending: Vec<HostToResolve>,
    exec: Option<ExecEvaluation>,
}

impl Facts {
    fn deny(&mut self, rule: &str, message: String) {
        self.reasons
            .push(ToolCallReason::new(Decision::Deny, rule, message));
    }

    fn refused(&self) -> bool {
        self.reasons.iter().any(|r| r.decision == Decision::Deny)
    }

    fn file(&mut self, rules: Option<&FileRules>, path: &str, op: FileOp) {
        let Some(rules) = rules else {
            return self.no_file_rules();
        };
        match check_file(path, op, FileTool::Fs, rules) {
            Ok(resolved) => self.files.push(resolved),
            Err(refusal) => self.deny(refusal.rule(), refusal.to_string()),
        }
    }

    fn patch(&mut self, rules: Option<&FileRules>, text: &str) {
        let Some(rules) = rules else {
            return self.no_file_rules();
        };
        match check_patch(text, rules) {
            Ok(resolved) => self.files.extend(resolved),
            Err(refusal) => self.deny(refusal.rule(), refusal.to_string()),
        }
    }

    fn no_file_rules(&mut self) {
        self.deny(
            "no-file-rules",
            "the agent's file rules did not load (see the gateway's config errors)".to_owned(),
        );
    }

    fn url(
        &mut self,
        (rules, key): (Option<&UrlRules>, &str),
        url: &str,
        resolved: &BTreeMap<String, Vec<IpAddr>>,
    ) {
        let Some(rules) = rules else {
            return self.deny(
                "no-url-rules",
                format!("the {key} rules did not load (see the gateway's config errors)"),
            );
        };
        let checked = check_url(url, rules).and_then(|check| match check {
            UrlCheck::Approved(approved) => Ok(Some(approved)),
            UrlCheck::NeedsResolution(pending) => match resolved.get(pending.host()) {
                Some(addresses) => check_resolved(&pending, addresses, rules).map(Some),
                None => {
                    self.pending.push(HostToResolve {
                        host: pending.host().to_owned(),
                        port: pending.port(),
                    });
                    Ok(None)
                }
            },
        });
        match checked {
            Ok(Some(approved)) => self.urls.push(approved),
            Ok(None) => {}
            Err(refusal) => self.deny(refusal.rule(), refusal.to_string()),
        }
    }

    fn exec(&mut self, evaluation: ExecEvaluation) {
        self.reasons.push(ToolCallReason::new(
            evaluation.decision,
            evaluation.reason.rule.as_str(),
            evaluation.reason.to_string(),
        ));
        self.exec = Some(evaluation);
    }

    /// A stored grant covering the call turns the always-ask into an allow; an ask the exec
    /// policy raised is its own (exec approvals store allowlist patterns, not grants).
    fn apply_grants(&mut self, tool: &str, grants: &[Grant]) {
        let asks_only_always = self.reasons.iter().all(|r| {
            r.decision == Decision::Allow || (r.decision == Decision::Ask && r.rule == "always-ask")
        });
        if !asks_only_always || self.exec.is_some() {
            return;
        }
        if let Some(grant) = grants
            .iter()
            .find(|g| g.covers(tool, &self.files, &self.urls))
        {
            self.reasons.retain(|r| r.rule != "always-ask");
            self.reasons.push(ToolCallReason::new(
                Decision::Allow,
                "granted",
                format!("an allow-always grant covers this call ({:?})", grant.scope),
            ));
        }
    }

    fn finish(mut self, tool: String, grant: Option<Grant>) -> ToolCallDecision {
        if self.reasons.is_empty() {
            self.reasons.push(ToolCallReason::new(
                Decision::Allow,
                "allowed",
                format!("tool {tool:?} is allowed and its checks passed"),
            ));
        }
        // Strictest first; the sort is stable, so equal reasons keep their order.
        self.reasons.sort_by_key(|r| std::cmp::Reverse(r.decision));
        let decision = self.reasons.first().map_or(Decision::Deny, |r| r.decision);
        ToolCallDecision {
            grant: grant.filter(|_| decision != Decision::Deny),
            tool,
            decision,
            reasons: self.reasons,
            files: self.files,
            urls: self.urls,
            exec: self.exec,
        }
    }
}
