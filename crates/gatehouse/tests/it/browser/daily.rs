//! The Control UI for daily work (issue 35): history search, filters and paging; deny with a
//! reason and the decision shortcuts; relative times; who is logged in where; the audit log's
//! verdict; an agent's effective policy; chat channel status.

use serde_json::{Value, json};

use super::{
    ASK_ALWAYS, PHONE, edit_approvals_file, logged_in, login_url, open_allowlists,
    request_two_phase,
};
use crate::cdp::{Browser, Page};
use crate::gateway::{ADMIN, AGENT, APPROVER, Server};

/// The approval `id` as the gateway has it.
async fn approval(server: &Server, id: &str) -> Value {
    server
        .ok(ADMIN, "exec.approval.get", json!({"id": id}))
        .await
}

/// Waits until the history view's summary line reads `summary`.
async fn history_says(page: &Page<'_>, summary: &str) {
    let summary_json = serde_json::to_string(summary).unwrap();
    page.wait_for(
        &format!("document.getElementById('history-summary').textContent === {summary_json}"),
        &format!("the history to say {summary}"),
    )
    .await;
}

/// The outcomes on the history page, top to bottom.
async fn history_outcomes(page: &Page<'_>) -> Value {
    page.eval("[...document.querySelectorAll('#history-list .outcome')].map(o => o.textContent)")
        .await
}

/// Chooses `value` in the history's outcome filter, as a person picking from the list does.
async fn choose_outcome(page: &Page<'_>, value: &str) {
    page.eval(&format!(
        "(() => {{ const s = document.getElementById('history-outcome'); s.value = '{value}'; \
         s.dispatchEvent(new Event('change')); }})()"
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_filters_and_pages_through_history_beyond_200() {
    let work = tempfile::tempdir().unwrap();
    let ws = work.path().canonicalize().unwrap();
    let server = Server::start(&format!(
        "tools: {{ profile: 'full', fs: {{ workspaceOnly: true }}, alwaysAsk: ['write'],
           exec: {{ security: 'allowlist', ask: 'always' }} }},
         agents: {{ defaults: {{ workspace: '{}' }} }},",
        ws.display()
    ))
    .await;
    // An operator connected is the approval route that keeps the requests pending.
    let _approver = server.ws(APPROVER).await;
    // 205 settled commands: every seventh denied by the admin, the rest allowed once by the
    // approver; one of them is the only `tar`, another the only one of agent `ops`.
    for n in 0..205 {
        let command = if n == 100 {
            "tar -czf needle.tgz .".to_owned()
        } else {
            format!("echo run-{n}")
        };
        let accepted = server
            .ok(
                AGENT,
                "exec.approval.request",
                json!({"command": command, "cwd": server.scratch(),
                    "agentId": if n == 150 { "ops" } else { "main" },
                    "sessionKey": "browser-test", "twoPhase": true, "timeoutMs": 120_000}),
            )
            .await;
        let (token, decision) = if n % 7 == 0 {
            (ADMIN, "deny")
        } else {
            (APPROVER, "allow-once")
        };
        server
            .ok(
                token,
                "exec.approval.resolve",
                json!({"id": accepted["id"], "decision": decision}),
            )
            .await;
    }
    // And one tool call, denied with a reason.
    let tool = server
        .ok(
            AGENT,
            "tools.call.request",
            json!({"agentId": "main", "sessionKey": "browser-test", "tool": "write",
                "params": {"path": "notes.md", "content": "hello"}, "twoPhase": true}),
        )
        .await;
    server
        .ok(
            APPROVER,
            "exec.approval.resolve",
            json!({"id": tool["id"], "decision": "deny", "reason": "not in notes"}),
        )
        .await;

    // The API behind the view: operators only, outcomes spelt exactly, pages of at most 200.
    let history = |params: Value| server.rpc(APPROVER, "exec.approval.history", params);
    let big_page = history(json!({"limit": 1000})).await;
    assert_eq!(
        (
            big_page["payload"]["approvals"].as_array().map(Vec::len),
            &big_page["payload"]["total"],
            &big_page["payload"]["complete"]
        ),
        (Some(200), &json!(206), &json!(true))
    );
    assert_eq!(
        history(json!({"outcome": "allowed"})).await["error"]["code"],
        json!("invalid_params")
    );
    assert_eq!(
        server
            .error_code(AGENT, "exec.approval.history", json!({}))
            .await,
        "forbidden"
    );

    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    page.click("#tab-history").await;
    history_says(&page, "Showing 1–50 of 206.").await;
    assert_eq!(
        history_outcomes(&page).await[0],
        json!("denied by approver: not in notes")
    );
    assert_eq!(
        page.eval("document.querySelectorAll('#history-list li.history').length")
            .await,
        json!(50)
    );
    for shown in ["51–100", "101–150", "151–200", "201–206"] {
        page.click("#history-older").await;
        history_says(&page, &format!("Showing {shown} of 206.")).await;
    }
    // The oldest approval is last on the last page, and there is nothing older.
    assert_eq!(
        page.eval("[...document.querySelectorAll('#history-list pre.command')].pop().textContent")
            .await,
        json!("echo run-0")
    );
    assert_eq!(
        page.eval("document.getElementById('history-older').disabled")
            .await,
        json!(true)
    );
    page.click("#history-newer").await;
    history_says(&page, "Showing 151–200 of 206.").await;

    // Free text finds the one `tar`, case-insensitively, from the first page.
    page.type_into("#history-query", "NEEDLE.tgz").await;
    page.click("#history-form button[type=submit]").await;
    history_says(&page, "Showing 1–1 of 1 matching.").await;
    assert_eq!(
        page.eval("document.querySelector('#history-list pre.command').textContent")
            .await,
        json!("tar -czf needle.tgz .")
    );

    // Who decided, then the outcome: the admin denied every seventh (0, 7, …, 203: 30).
    page.click("#history-clear").await;
    page.type_into("#history-who", "admin").await;
    page.click("#history-form button[type=submit]").await;
    history_says(&page, "Showing 1–30 of 30 matching.").await;
    choose_outcome(&page, "allowed-once").await;
    page.wait_for(
        "document.getElementById('history-empty').textContent === 'Nothing matches these filters.' \
         && !document.getElementById('history-empty').hidden \
         && document.querySelectorAll('#history-list li').length === 0",
        "no approval allowed by the admin",
    )
    .await;

    // The agent and the tool.
    page.click("#history-clear").await;
    page.type_into("#history-agent", "ops").await;
    page.click("#history-form button[type=submit]").await;
    history_says(&page, "Showing 1–1 of 1 matching.").await;
    assert_eq!(
        page.eval("document.querySelector('#history-list pre.command').textContent")
            .await,
        json!("echo run-150")
    );
    page.click("#history-clear").await;
    page.type_into("#history-tool", "write").await;
    page.click("#history-form button[type=submit]").await;
    let only_the_tool = "document.querySelectorAll('#history-list li').length === 1 && \
        document.querySelector('#history-list .tool-name .tool')?.textContent === 'write'";
    page.wait_for(only_the_tool, "the tool call alone").await;
    choose_outcome(&page, "allowed-once").await;
    page.wait_for(
        "document.querySelectorAll('#history-list li').length === 0",
        "no tool call allowed",
    )
    .await;
    choose_outcome(&page, "denied").await;
    page.wait_for(only_the_tool, "the denied tool call").await;
    history_says(&page, "Showing 1–1 of 1 matching.").await;
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denies_with_a_reason_and_decides_with_the_keyboard_shortcuts() {
    // On an allowlist miss (not `ask: always`) allow-always is offered too.
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let first = request_two_phase(&server, &["ls", "-la"], 120_000).await;
    let second = request_two_phase(&server, &["uname", "-a"], 120_000).await;
    let third = request_two_phase(&server, &["df", "-h"], 120_000).await;
    let card = |id: &str| format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{}\")", card(&third)),
        "the three approvals",
    )
    .await;

    // A reason typed on the card goes with Deny; Enter in the field denies.
    page.type_into(
        &format!("{} .deny-reason", card(&first)),
        "use the staging host",
    )
    .await;
    page.press("Enter").await;
    page.wait_for(
        &format!(
            "document.querySelector(\"{} .result\").textContent === 'Denied by admin: use the staging host.'",
            card(&first)
        ),
        "the card to say who denied it and why",
    )
    .await;
    let denied = approval(&server, &first).await;
    assert_eq!(
        (&denied["state"], &denied["resolvedBy"], &denied["reason"]),
        (
            &json!("denied"),
            &json!("admin"),
            &json!("use the staging host")
        )
    );

    // Typing a shortcut letter into the reason field types it; it decides nothing.
    page.click(&format!("{} .deny-reason", card(&second))).await;
    page.press("d").await;
    assert_eq!(
        page.eval(&format!(
            "document.querySelector(\"{} .deny-reason\").value",
            card(&second)
        ))
        .await,
        json!("d")
    );
    assert_eq!(approval(&server, &second).await["state"], json!("pending"));

    // Keys act on the focused card only: `j` reaches the first undecided card, `o` allows once.
    page.eval("document.getElementById('pending-heading').focus()")
        .await;
    page.press("a").await;
    assert_eq!(approval(&server, &second).await["state"], json!("pending"));
    page.press("j").await;
    assert_eq!(
        page.eval("document.activeElement.closest('li.approval')?.dataset.id")
            .await,
        json!(second)
    );
    page.press("o").await;
    page.wait_for(
        &format!(
            "document.querySelector(\"{} .result\").textContent === 'Allowed once by admin.'",
            card(&second)
        ),
        "the shortcut's decision on the card",
    )
    .await;
    assert_eq!(
        approval(&server, &second).await["decision"],
        json!("allow-once")
    );
    page.press("j").await;
    assert_eq!(
        page.eval("document.activeElement.closest('li.approval')?.dataset.id")
            .await,
        json!(third)
    );
    page.press("a").await;
    page.wait_for(
        &format!(
            "document.querySelector(\"{} .result\").textContent.startsWith('Allowed always by admin')",
            card(&third)
        ),
        "allow-always from the keyboard",
    )
    .await;
    assert_eq!(
        approval(&server, &third).await["decision"],
        json!("allow-always")
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn says_who_is_logged_in_and_shows_relative_times_with_the_exact_time_on_hover() {
    let server = Server::start("").await;
    // An allowlist entry last used three minutes ago, as the gateway stored it.
    let three_minutes_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        - 3 * 60 * 1000
        - 5_000;
    edit_approvals_file(&server, |file| {
        file["agents"] = json!({"main": {"allowlist": [
            {"pattern": "/usr/bin/make", "lastUsedAt": three_minutes_ago,
             "lastUsedCommand": "make", "lastResolvedPath": "/usr/bin/make"}
        ]}});
    })
    .await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    page.wait_for(
        "document.getElementById('token-name').textContent === 'admin'",
        "the token's name in the header",
    )
    .await;
    assert_eq!(
        page.eval("document.getElementById('identity').textContent")
            .await,
        json!(format!(
            "Logged in to {} as admin (operator.admin) · Gatehouse {}",
            server.base,
            env!("CARGO_PKG_VERSION")
        ))
    );

    open_allowlists(&page).await;
    let time = "document.querySelector('#allowlists time.relative')";
    page.wait_for(time, "the last-used time").await;
    assert_eq!(
        page.eval(&format!("{time}.textContent")).await,
        json!("3 min ago")
    );
    assert_eq!(
        page.eval(&format!(
            "{time}.title === new Date({three_minutes_ago}).toLocaleString() \
             && {time}.getAttribute('datetime') === new Date({three_minutes_ago}).toISOString()"
        ))
        .await,
        json!(true)
    );

    // A decision just made reads "just now" in history, with its exact time on hover too.
    let id = request_two_phase(&server, &["ls"], 120_000).await;
    server.resolve(&id, "deny").await;
    page.click("#tab-history").await;
    let requested = "document.querySelector('#history-list time.relative')";
    page.wait_for(requested, "the decision in history").await;
    assert_eq!(
        page.eval(&format!("{requested}.textContent")).await,
        json!("just now")
    );
    let created = approval(&server, &id).await["createdAtMs"].clone();
    assert_eq!(
        page.eval(&format!(
            "{requested}.title === new Date({created}).toLocaleString()"
        ))
        .await,
        json!(true)
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

/// Rewrites one digit of the first record's time in the audit log: the edit verification must
/// find (the line keeps its length, so only the hash can tell).
fn edit_first_audit_record(server: &Server) {
    let log = server.data().join("audit.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let at = text.find("\"atMs\":").unwrap() + "\"atMs\":".len() + 3;
    let digit = text.as_bytes()[at];
    let replacement = if digit == b'9' { '8' } else { '9' };
    let mut edited = text.clone();
    edited.replace_range(at..=at, &replacement.to_string());
    std::fs::write(&log, edited).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_the_audit_log_verified_and_reports_an_edited_record() {
    let server = Server::start(ASK_ALWAYS).await;
    let id = request_two_phase(&server, &["ls"], 120_000).await;
    server.resolve(&id, "deny").await;
    crate::gateway::audit_records(&server, &id, |records| records.len() >= 2).await;
    assert_eq!(
        server.error_code(APPROVER, "audit.verify", json!({})).await,
        "forbidden"
    );
    assert_eq!(
        server.error_code(APPROVER, "audit.tail", json!({})).await,
        "forbidden"
    );

    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    page.click("#tab-audit").await;
    page.wait_for(
        "document.getElementById('audit-verdict').dataset.valid === 'true'",
        "the audit verdict",
    )
    .await;
    let verdict = page
        .eval("document.getElementById('audit-verdict').textContent")
        .await;
    assert!(
        verdict
            .as_str()
            .unwrap()
            .starts_with("Verified: the chain is intact, "),
        "{verdict}"
    );
    let kinds = page
        .eval(&format!(
            "[...document.querySelectorAll('#audit-records li')].filter(li => \
             li.textContent.includes('{id}')).map(li => li.querySelector('.badge').textContent)"
        ))
        .await;
    let kinds = kinds.as_array().unwrap();
    assert_eq!(
        (kinds.first(), kinds.last()),
        (Some(&json!("decision")), Some(&json!("request"))),
        "the approval's records, newest first: {kinds:?}"
    );

    edit_first_audit_record(&server);
    page.click("#audit-verify").await;
    page.wait_for(
        "document.getElementById('audit-verdict').dataset.valid === 'false'",
        "the edited record to be reported",
    )
    .await;
    let verdict = page
        .eval("document.getElementById('audit-verdict').textContent")
        .await;
    let verdict = verdict.as_str().unwrap();
    assert!(
        verdict.starts_with("NOT verified (content-edited): ")
            && verdict.contains("audit.jsonl line 1; 0 records verified before it."),
        "{verdict}"
    );

    // An approver's tab says what the view needs instead of failing.
    let approver = browser.new_page(PHONE.0, PHONE.1, true).await;
    approver.navigate(&login_url(&server.base, APPROVER)).await;
    approver
        .wait_for(
            "document.body.dataset.connection === 'connected'",
            "the approver's page to connect",
        )
        .await;
    approver.click("#tab-audit").await;
    assert_eq!(
        approver
            .eval(
                "[document.getElementById('audit-forbidden').hidden, \
                 document.getElementById('audit-body').hidden]"
            )
            .await,
        json!([false, true])
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_the_effective_policy_of_an_agent() {
    let server = Server::start(
        "tools: { exec: { security: 'full', ask: 'on-miss', safeBins: ['jq', 'wc'] },
           elevated: { enabled: true, allowFrom: { telegram: ['42', 'username:ops'] } } },
         agents: { defaults: { elevatedDefault: 'ask' },
           list: [{ id: 'main' }, { id: 'build', tools: { elevated: { enabled: false } } }] },",
    )
    .await;
    // The file asks for stricter settings for `main`: the stricter wins.
    edit_approvals_file(&server, |file| {
        file["agents"] = json!({
            "main": {"security": "allowlist", "ask": "always",
                "allowlist": [{"pattern": "/usr/bin/git", "argPattern": "^status$"}]},
            "*": {"allowlist": [{"pattern": "/usr/bin/make"}]},
        });
    })
    .await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    page.click("#tab-policy").await;
    let shown = |agent: &str| {
        format!(
            "document.getElementById('policy-result').dataset.agent === '{agent}' && \
             [...document.querySelectorAll('#policy-result dt, #policy-result dd')].map(e => e.textContent)"
        )
    };
    page.wait_for(&shown("main"), "main's policy").await;
    let details = page
        .eval(&shown("main").replace(
            "document.getElementById('policy-result').dataset.agent === 'main' && ",
            "",
        ))
        .await;
    assert_eq!(
        details,
        json!([
            "Security",
            "allowlist",
            "Ask",
            "always",
            "Unanswered (askFallback)",
            "deny",
            "Strict inline eval",
            "no",
            "Auto-allow skills",
            "no",
            "Safe bins",
            "jq, wc",
            "Available",
            "yes",
            "tools.elevated.enabled",
            "yes",
            "Agent's enabled",
            "not set",
            "Who may switch it",
            "telegram: 42, username:ops",
            "Agent's allowFrom",
            "not set",
            "Default level",
            "ask"
        ])
    );
    assert_eq!(
        page.eval("[...document.querySelectorAll('#policy-result .policy-allowlist li')].map(li => li.textContent)")
            .await,
        json!(["/usr/bin/make", "/usr/bin/git arguments ^status$"])
    );
    assert_eq!(
        page.eval("[...document.querySelectorAll('#policy-agents option')].map(o => o.value)")
            .await,
        json!(["build", "main"])
    );

    page.type_into("#policy-agent", "build").await;
    page.click("#policy-form button[type=submit]").await;
    page.wait_for(&shown("build"), "build's policy").await;
    let details = page
        .eval("[...document.querySelectorAll('#policy-result dd')].map(e => e.textContent)")
        .await;
    assert_eq!(details[0], json!("full"), "{details}");
    assert_eq!(
        details[6],
        json!("no"),
        "elevated is off for build: {details}"
    );
    assert_eq!(details[8], json!("no"), "{details}");
    assert_eq!(browser.problems(), Vec::<String>::new());
}
