//! The Control UI as a person uses it: the real `gatehouse serve`, headless Chromium driven over
//! the DevTools protocol, real clicks and typing, and the API to check what the page did.

mod daily;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

use crate::cdp::{Browser, Page};
use crate::gateway::{ADMIN, AGENT, APPROVER, Server, config};

/// A phone's viewport in CSS pixels (an iPhone 12–15 class screen).
const PHONE: (u32, u32) = (390, 844);

/// Exec settings under which every command needs a person: the path the UI exists for.
const ASK_ALWAYS: &str = "tools: { exec: { security: 'allowlist', ask: 'always' } },";

/// The login URL `gatehouse serve` prints for `token`.
fn login_url(base: &str, token: &str) -> String {
    format!("{base}/#token={token}")
}

/// Opens the login URL in a phone-sized tab and waits until the page is connected.
async fn logged_in<'b>(browser: &'b Browser, base: &str) -> Page<'b> {
    let page = browser.new_page(PHONE.0, PHONE.1, true).await;
    page.navigate(&login_url(base, ADMIN)).await;
    page.wait_for(
        "document.body.dataset.connection === 'connected'",
        "the page to connect",
    )
    .await;
    page
}

/// A command with everything a page must not render as the agent meant: an ANSI escape that
/// clears a terminal, a right-to-left override that reverses what follows, a zero-width space,
/// markup, and a format character outside the familiar zero-width and bidi ones (issue 36: the
/// page marks exactly what the chat core's definition marks).
const HOSTILE_COMMAND: &str =
    "printf 'ok\x1b[2J' \u{202E}txt.sh # <img src=x onerror=alert(1)>\u{200B}\u{1D173}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_a_pending_approval_live_and_allow_once_reaches_the_waiting_requester() {
    let server = Server::start(ASK_ALWAYS).await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;

    let id = "3f2b7c1e-5d4a-4e8b-9c6f-0a1b2c3d4e5f";
    let cwd = server.scratch().display().to_string();
    let mut agent = server.ws(AGENT).await;
    let request = agent
        .send(
            "exec.approval.request",
            json!({
                "id": id, "command": HOSTILE_COMMAND, "cwd": cwd,
                "agentId": "main", "sessionKey": "browser-test", "timeoutMs": 120_000,
            }),
        )
        .await;

    let card = format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{card}\")"),
        "the pending approval to appear live",
    )
    .await;
    let text = |selector: &str| {
        let expression = format!("document.querySelector(\"{card} {selector}\").textContent");
        let page = &page;
        async move { page.eval(&expression).await }
    };
    assert_eq!(
        text("pre.command").await,
        json!("printf 'ok\\x1b[2J' <U+202E>txt.sh # <img src=x onerror=alert(1)><U+200B><U+1D173>")
    );
    assert_eq!(
        page.eval(&format!(
            "[...document.querySelectorAll(\"{card} pre.command .marker\")].map(m => m.textContent)"
        ))
        .await,
        json!(["\\x1b", "<U+202E>", "<U+200B>", "<U+1D173>"])
    );
    assert_eq!(
        page.eval("document.querySelectorAll('img').length").await,
        json!(0)
    );
    assert_eq!(text(".agent").await, json!("main"));
    assert!(text(".details").await.as_str().unwrap().contains(&cwd));
    let countdown = text(".countdown").await;
    assert!(
        countdown.as_str().unwrap().starts_with("expires in "),
        "{countdown}"
    );

    assert_eq!(page.eval("document.title").await, json!("(1) Gatehouse"));

    let shot = std::env::temp_dir().join("gatehouse-control-ui-phone.png");
    page.screenshot(&shot).await;
    eprintln!("phone screenshot: {}", shot.display());

    page.click(&format!("{card} button[data-decision='allow-once']"))
        .await;
    let answer = tokio::time::timeout(Duration::from_secs(20), agent.response(&request))
        .await
        .expect("the requester got no answer within 20 s of the click");
    let decided = &answer["payload"];
    assert_eq!(decided["decision"], json!("allow-once"), "{answer}");
    assert_eq!(decided["state"], json!("allowed"), "{answer}");
    assert_eq!(decided["resolvedBy"], json!("admin"), "{answer}");

    page.wait_for(
        "document.querySelector('#history-list .outcome')?.textContent === 'allowed once by admin'",
        "the decision to appear in history with who decided",
    )
    .await;
    assert_eq!(
        page.eval("[document.getElementById('pending-count').textContent, document.title]")
            .await,
        json!(["0", "Gatehouse"])
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

/// Issue 29: the card named only the first program of a chain. It lists every program with
/// where it resolved and what decides it, the request's variable names (made visible) and what
/// allow-always would store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_every_program_of_a_chain_its_variables_and_what_allow_always_stores() {
    let server = Server::start(ASK_ALWAYS).await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let accepted = server
        .ok(
            AGENT,
            "exec.approval.request",
            json!({
                "command": "true && ls -la", "cwd": server.scratch(), "agentId": "main",
                "sessionKey": "browser-test", "twoPhase": true, "timeoutMs": 120_000,
                "env": {"CI": "1", "X\u{202E}Y": "z"},
            }),
        )
        .await;
    let id = accepted["id"].as_str().unwrap();
    let card = format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{card} .summary\")"),
        "the approval's summary to appear",
    )
    .await;
    let programs = page
        .eval(&format!(
            "[...document.querySelectorAll(\"{card} .summary li.program\")].map(li => li.textContent)"
        ))
        .await;
    let programs: Vec<&str> = programs
        .as_array()
        .unwrap()
        .iter()
        .map(|program| program.as_str().unwrap())
        .collect();
    assert_eq!(programs.len(), 2, "{programs:?}");
    // A variable nobody judged withdraws even a builtin's auto-allow; its name stays visible.
    assert!(
        programs[0].starts_with(
            "true [unresolved] — needs a person: env-assignment: the request environment sets \
             `X<U+202E>Y`"
        ),
        "{programs:?}"
    );
    assert!(
        programs[1].starts_with("ls -la [/") && programs[1].contains("— needs a person: "),
        "{programs:?}"
    );
    let text = |selector: &str| {
        let expression = format!("document.querySelector(\"{card} {selector}\").textContent");
        let page = &page;
        async move { page.eval(&expression).await }
    };
    assert_eq!(
        text(".summary .env").await,
        json!("Environment: CI, X<U+202E>Y")
    );
    let always = text(".summary .always").await;
    assert!(
        always.as_str().unwrap().starts_with("Allow always stores"),
        "{always}"
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

/// Asks for approval of `argv` without waiting for the decision; returns the approval id.
async fn request_two_phase(server: &Server, argv: &[&str], timeout_ms: u64) -> String {
    let accepted = server
        .ok(
            AGENT,
            "exec.approval.request",
            json!({
                "command": argv.join(" "), "argv": argv, "cwd": server.scratch(),
                "agentId": "main", "sessionKey": "browser-test",
                "twoPhase": true, "timeoutMs": timeout_ms,
            }),
        )
        .await;
    accepted["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follows_decisions_expiry_and_withdrawal_live_and_after_a_reload() {
    // On an allowlist miss (not `ask: always`) an allowlist entry would help: allow-always is offered.
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let mut approver = server.ws(APPROVER).await;

    let denied = request_two_phase(&server, &["ls", "-la"], 120_000).await;
    let requested = approver.event("exec.approval.requested").await;
    let denied_card = format!("li.approval[data-id='{denied}']");
    page.wait_for(
        &format!("document.querySelector(\"{denied_card}\")"),
        "the first approval",
    )
    .await;
    assert_eq!(
        page.eval(&format!(
            "[...document.querySelectorAll(\"{denied_card} button.decision\")].map(b => b.dataset.decision)"
        ))
        .await,
        requested["payload"]["allowedDecisions"]
    );

    server
        .ok(
            APPROVER,
            "exec.approval.resolve",
            json!({"id": denied, "decision": "deny", "reason": "not today"}),
        )
        .await;
    page.wait_for(
        &format!(
            "document.querySelector(\"{denied_card} .result\").textContent === 'Denied by approver: not today.'"
        ),
        "the card to say who denied it elsewhere, and why",
    )
    .await;

    let expired = request_two_phase(&server, &["uname", "-a"], 1_000).await;
    page.wait_for(
        &format!(
            "document.querySelector(\"li.approval[data-id='{expired}'] .result\")?.textContent === 'Expired (timeout).'"
        ),
        "the second approval to expire on the page",
    )
    .await;

    // A requester that hangs up withdraws its approval.
    let mut quitter = server.ws(AGENT).await;
    quitter
        .send(
            "exec.approval.request",
            json!({
                "id": "5b0e2c44-1f7a-4c3e-8d2b-6a9f0e1d2c3b", "command": "whoami",
                "argv": ["whoami"], "cwd": server.scratch(),
                "agentId": "main", "sessionKey": "browser-test",
            }),
        )
        .await;
    let cancelled_card = "li.approval[data-id='5b0e2c44-1f7a-4c3e-8d2b-6a9f0e1d2c3b']";
    page.wait_for(
        &format!("document.querySelector(\"{cancelled_card}\")"),
        "the third approval",
    )
    .await;
    drop(quitter);
    page.wait_for(
        &format!(
            "document.querySelector(\"{cancelled_card} .result\")?.textContent === 'Cancelled (requester-gone).'"
        ),
        "the third approval to be withdrawn on the page",
    )
    .await;

    let history =
        "[...document.querySelectorAll('#history-list .outcome')].map(o => o.textContent)";
    let expected = json!([
        "cancelled (requester-gone)",
        "expired (timeout)",
        "denied by approver: not today"
    ]);
    page.wait_for(
        &format!("JSON.stringify({history}) === '{expected}'"),
        "every outcome in history, newest first",
    )
    .await;

    // A reload rebuilds history from `exec.approval.list`, not from events, and a pending
    // approval offers the same decisions as when it arrived live: the list carries them too.
    let pending = request_two_phase(&server, &["df", "-h"], 120_000).await;
    let pending_buttons = format!(
        "[...document.querySelectorAll(\"li.approval[data-id='{pending}'] button.decision\")].map(b => b.dataset.decision)"
    );
    let offered = json!(["allow-once", "allow-always", "deny"]);
    page.wait_for(
        &format!("JSON.stringify({pending_buttons}) === '{offered}'"),
        "the pending approval live, allow-always offered",
    )
    .await;
    page.navigate(&server.base).await;
    page.wait_for(
        &format!(
            "document.body.dataset.connection === 'connected' && JSON.stringify({history}) === '{expected}'"
        ),
        "the same history after a reload",
    )
    .await;
    page.wait_for(
        &format!("JSON.stringify({pending_buttons}) === '{offered}'"),
        "the same decisions offered after a reload",
    )
    .await;
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_an_approval_from_the_keyboard_alone() {
    let server = Server::start(ASK_ALWAYS).await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let id = request_two_phase(&server, &["ls"], 120_000).await;
    page.wait_for(
        &format!("document.querySelector(\"li.approval[data-id='{id}']\")"),
        "the approval",
    )
    .await;
    let focused = "document.activeElement.id || document.activeElement.dataset.decision";

    page.eval("document.getElementById('tab-pending').focus()")
        .await;
    page.press("ArrowRight").await;
    assert_eq!(page.eval(focused).await, json!("tab-history"));
    assert_eq!(
        page.eval("document.getElementById('view-history').hidden")
            .await,
        json!(false)
    );
    page.press("Home").await;
    assert_eq!(page.eval(focused).await, json!("tab-pending"));

    page.press("Tab").await;
    assert_eq!(page.eval(focused).await, json!("allow-once"));
    page.press("Enter").await;
    page.wait_for(
        "document.activeElement.id === 'pending-heading'",
        "focus to land on the list heading once the decided card leaves",
    )
    .await;
    let approval = server
        .ok(ADMIN, "exec.approval.get", json!({"id": id}))
        .await;
    assert_eq!(
        (&approval["state"], &approval["decision"]),
        (&json!("allowed"), &json!("allow-once"))
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_in_from_the_url_fragment_and_forgets_it_from_the_address_bar() {
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;

    assert_eq!(page.eval("location.hash").await, json!(""));
    assert_eq!(
        page.eval("sessionStorage.getItem('gatehouse.token')").await,
        json!(ADMIN)
    );
    assert_eq!(
        page.eval("document.getElementById('scopes').textContent")
            .await,
        json!("operator.admin")
    );

    page.click("#tab-history").await;
    assert_eq!(
        page.eval("[document.getElementById('view-pending').hidden, document.getElementById('view-history').hidden]")
            .await,
        json!([true, false])
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_for_a_token_and_does_not_retry_a_refused_one() {
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = browser.new_page(PHONE.0, PHONE.1, true).await;
    page.navigate(&server.base).await;
    let login_shown = "!document.getElementById('login').hidden";
    page.wait_for(login_shown, "the login form").await;

    page.type_into("#login-token", "not-a-token-of-this-gateway")
        .await;
    page.click("#login-form button[type='submit']").await;
    page.wait_for(
        &format!(
            "{login_shown} && document.getElementById('login-message').textContent.startsWith('The gateway refused the token')"
        ),
        "the refusal",
    )
    .await;
    assert_eq!(
        page.eval("[document.body.dataset.connection, sessionStorage.getItem('gatehouse.token')]")
            .await,
        json!(["refused", null]),
        "a refused token is forgotten, not retried"
    );

    page.type_into("#login-token", APPROVER).await;
    page.click("#login-form button[type='submit']").await;
    page.wait_for(
        "document.body.dataset.connection === 'connected'",
        "the page to connect with a pasted token",
    )
    .await;
    assert_eq!(
        page.eval("[document.getElementById('scopes').textContent, document.getElementById('allowlist-form').hidden]")
            .await,
        json!(["operator.approvals", true]),
        "an approver sees allowlists read-only"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folds_a_long_command_until_asked_to_show_all_of_it() {
    let server = Server::start(ASK_ALWAYS).await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let words: Vec<String> = (0..80).map(|n| format!("file-{n}.txt")).collect();
    let mut argv = vec!["ls"];
    argv.extend(words.iter().map(String::as_str));
    let id = request_two_phase(&server, &argv, 120_000).await;
    let card = format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{card}\")"),
        "the approval",
    )
    .await;
    let state = format!(
        "(() => {{ const card = document.querySelector(\"{card}\"); \
         const toggle = card.querySelector('.command-wrap button'); \
         return [card.querySelector('pre.command').classList.contains('folded'), \
                 toggle.getAttribute('aria-expanded'), toggle.textContent]; }})()"
    );
    let length = argv.join(" ").len();
    assert_eq!(
        page.eval(&state).await,
        json!([
            true,
            "false",
            format!("Show full command ({length} characters, 1 line)")
        ])
    );
    page.click(&format!("{card} .command-wrap button")).await;
    assert_eq!(
        page.eval(&state).await,
        json!([false, "true", "Fold command"])
    );
}

#[tokio::test]
async fn serves_a_script_that_never_parses_html_or_reaches_other_origins() {
    let server = Server::start("").await;
    let script = server.get_text("/app.js").await;
    for banned in [
        ".innerHTML",
        ".outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "http://",
        "https://",
    ] {
        assert!(!script.contains(banned), "app.js uses {banned}");
    }
}

/// Opens the Allowlists tab and waits until it has loaded.
async fn open_allowlists(page: &Page<'_>) {
    page.click("#tab-allowlists").await;
    let loaded = "document.getElementById('view-allowlists').getAttribute('aria-busy') === 'false'";
    page.wait_for(loaded, "the allowlists to load").await;
}

/// The patterns of `agent`'s allowlist in the file as the server has it.
async fn server_allowlist(server: &Server, agent: &str) -> Vec<String> {
    let got = server.ok(ADMIN, "exec.approvals.get", json!({})).await;
    got["file"]["agents"][agent]["allowlist"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item["pattern"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Changes `exec-approvals.json` through the API, as another operator would.
async fn edit_approvals_file(server: &Server, change: impl FnOnce(&mut Value)) {
    let current = server.ok(ADMIN, "exec.approvals.get", json!({})).await;
    let mut file = current["file"].clone();
    change(&mut file);
    server
        .ok(
            ADMIN,
            "exec.approvals.set",
            json!({"file": file, "baseHash": current["hash"]}),
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_allowlists_and_refuses_an_edit_based_on_a_file_that_changed() {
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    open_allowlists(&page).await;

    page.type_into("#allowlist-agent", "main").await;
    page.type_into("#allowlist-pattern", "/usr/bin/git").await;
    page.click("#allowlist-form button[type='submit']").await;
    page.wait_for(
        "document.getElementById('allowlist-message').textContent === 'Added /usr/bin/git for main.'",
        "the entry to be added",
    )
    .await;
    assert_eq!(server_allowlist(&server, "main").await, ["/usr/bin/git"]);

    // Another operator adds an entry behind the page's back.
    edit_approvals_file(&server, |file| {
        file["agents"]["main"]["allowlist"]
            .as_array_mut()
            .unwrap()
            .push(json!({"pattern": "/usr/bin/ls"}));
    })
    .await;

    let remove_git = "button.remove[aria-label='Remove /usr/bin/git from main']";
    page.click(remove_git).await;
    page.wait_for(
        "document.getElementById('allowlist-message').textContent.startsWith('Not saved: the approvals file changed')",
        "the conflict to be reported",
    )
    .await;
    assert_eq!(
        server_allowlist(&server, "main").await,
        ["/usr/bin/git", "/usr/bin/ls"]
    );
    assert_eq!(
        page.eval("[...document.querySelectorAll('#allowlists .pattern')].map(p => p.textContent)")
            .await,
        json!(["/usr/bin/git", "/usr/bin/ls"]),
        "the page shows the current file after a conflict"
    );

    page.click(remove_git).await;
    page.wait_for(
        "document.getElementById('allowlist-message').textContent === 'Removed /usr/bin/git from main.'",
        "the entry to be removed",
    )
    .await;
    assert_eq!(server_allowlist(&server, "main").await, ["/usr/bin/ls"]);

    // Last-used data, as the gateway records it when an entry lets a command run.
    edit_approvals_file(&server, |file| {
        file["agents"]["main"]["allowlist"][0] = json!({
            "pattern": "/usr/bin/ls", "lastUsedAt": 1_767_225_600_000_u64,
            "lastUsedCommand": "ls -la\u{1b}[2J", "lastResolvedPath": "/usr/bin/ls",
        });
    })
    .await;
    page.click("#allowlist-reload").await;
    page.wait_for(
        "document.querySelector('#allowlists .entry .details')?.textContent.includes('Last command')",
        "the last-used data",
    )
    .await;
    let shown = page
        .eval("[...document.querySelectorAll('#allowlists .entry dt, #allowlists .entry dd')].map(e => e.textContent)")
        .await;
    let shown: Vec<String> = serde_json::from_value(shown).unwrap();
    assert_eq!(shown[0], "Last used");
    assert_ne!(shown[1], "never");
    assert_eq!(
        shown[2..],
        [
            "Last command",
            "ls -la\\x1b[2J",
            "Last resolved path",
            "/usr/bin/ls"
        ]
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checks_a_command_and_shows_the_policy_answer_for_every_segment() {
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let cwd = server.scratch().display().to_string();
    let command = "ls -la && nice uname -a";

    page.click("#tab-check").await;
    page.type_into("#check-command", command).await;
    page.type_into("#check-cwd", &cwd).await;
    page.click("#check-form button[type='submit']").await;
    page.wait_for(
        "document.querySelector('#check-result .verdict')",
        "the policy answer",
    )
    .await;

    let expected = server
        .ok(
            AGENT,
            "exec.policy.check",
            json!({"command": command, "cwd": cwd, "agentId": "main"}),
        )
        .await;
    assert_eq!(
        page.eval("document.querySelector('#check-result .verdict .badge').textContent")
            .await,
        expected["decision"]
    );
    let reasons: Vec<Value> = expected["segments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|segment| segment["reason"].clone())
        .collect();
    assert_eq!(reasons.len(), 2, "{expected}");
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('#check-result .segment')].map(s => s.querySelector('dd:last-of-type').textContent)"
        )
        .await,
        json!(reasons)
    );
    // The wrapper looked through is shown with where it resolved.
    let through = &expected["segments"][1]["lookedThrough"][0];
    let shown = format!(
        "nice ({})",
        through["resolvedPath"].as_str().unwrap_or_default()
    );
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('#check-result .segment')].map(s => [...s.querySelectorAll('dt')].some(dt => dt.textContent === 'Runs through') ? s.querySelector('dt:nth-last-of-type(2) + dd').textContent : null)"
        )
        .await,
        json!([null, shown])
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

/// `gatehouse serve` with the shared test config on a fixed address, so a restarted gateway
/// comes back where the page expects it.
async fn serve_at(dir: &tempfile::TempDir, listen: &str) -> Child {
    let config_file = dir.path().join("gatehouse.json5");
    std::fs::write(&config_file, config("")).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["serve", "--listen", listen, "--config"])
        .arg(&config_file)
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let listening = stdout.next_line();
    let line = tokio::time::timeout(Duration::from_secs(60), listening)
        .await
        .expect("not listening within 60 s")
        .unwrap()
        .unwrap_or_default();
    assert!(line.starts_with("Gatehouse is listening on "), "{line}");
    tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
    child
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_by_itself_when_the_gateway_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut first = serve_at(&dir, &listen).await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &format!("http://{listen}")).await;

    first.kill().await.unwrap();
    page.wait_for(
        "document.body.dataset.connection === 'waiting' \
         && document.getElementById('status-text').textContent.includes('Reconnecting in')",
        "the page to report the lost connection and a retry",
    )
    .await;

    let _second = serve_at(&dir, &listen).await;
    page.wait_for(
        "document.body.dataset.connection === 'connected'",
        "the page to reconnect without a reload",
    )
    .await;
    // Failed reconnection attempts are logged by Chromium as errors, so `problems` is not checked.
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_chat_channel_status_and_delivery_failures_with_the_last_error() {
    let fake = gatehouse_fakes::telegram::spawn("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    fake.control("/_fake/config", &json!({"never_started": [4242]}))
        .await
        .unwrap();
    let server = Server::start(&format!(
        "channels: {{ telegram: {{ botToken: '123:TEST-token', apiUrl: '{}',
           execApprovals: {{ approvers: [4242] }} }} }}, {ASK_ALWAYS}",
        fake.base_url
    ))
    .await;
    let params = json!({"command": "make deploy", "argv": ["make", "deploy"],
        "cwd": server.scratch(), "agentId": "main", "sessionKey": "s1", "twoPhase": true});
    let accepted = server.ok(AGENT, "exec.approval.request", params).await;
    let id = accepted["id"].as_str().unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let failures = loop {
        let status = server.ok(ADMIN, "gateway.status", json!({})).await;
        let failures = status["chat"]["failures"].clone();
        if failures.as_array().is_some_and(|f| !f.is_empty()) {
            break failures;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no failure: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };

    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    page.wait_for(
        "document.querySelector('#chat-failures li')",
        "the chat delivery panel",
    )
    .await;
    let shown = page
        .eval("document.querySelector('#chat-failures li').textContent")
        .await;
    let shown = shown.as_str().unwrap();
    assert!(
        shown.starts_with(&format!(
            "telegram → {}: card for approval {} undelivered after ",
            failures[0]["target"].as_str().unwrap(),
            &id[..8]
        )),
        "{shown}"
    );
    assert!(shown.contains("press Start"), "{shown}");

    // The Status tab: the channel runs, the same failure, and this page among the clients.
    page.click("#tab-status").await;
    page.wait_for(
        "document.querySelector('#status-failures li') && document.querySelector('#status-clients li')",
        "the status view",
    )
    .await;
    assert_eq!(
        page.eval(
            "[...document.querySelectorAll('#status-channels li')].map(li => li.textContent)"
        )
        .await,
        json!(["running telegram"])
    );
    assert_eq!(
        page.eval("document.querySelector('#status-failures li').textContent")
            .await,
        json!(shown)
    );
    assert_eq!(
        page.eval("[...document.querySelectorAll('#status-clients li')].map(li => li.textContent)")
            .await,
        json!(["control-ui (token admin)"])
    );
    assert_eq!(
        page.eval("document.getElementById('status-pending').textContent")
            .await,
        json!("1")
    );
    assert_eq!(browser.problems(), Vec::<String>::new());
}

/// Issue 35: the add form suggested a guessed `/usr/bin/git`; a bare name now becomes the path
/// it resolves to on the gateway host, and a name found nowhere is refused, not stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_allowlist_form_resolves_a_bare_program_name_on_the_gateway_host() {
    let server = Server::start("").await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    open_allowlists(&page).await;

    let ls = crate::mcp::on_path("ls");
    page.type_into("#allowlist-agent", "main").await;
    page.type_into("#allowlist-pattern", "ls").await;
    page.click("#allowlist-form button[type='submit']").await;
    let added = format!("Added {ls} (ls resolves to it on the gateway host) for main.");
    page.wait_for(
        &format!("document.getElementById('allowlist-message').textContent === {added:?}"),
        "the resolved path to be added",
    )
    .await;
    assert_eq!(
        server_allowlist(&server, "main").await,
        std::slice::from_ref(&ls)
    );

    page.type_into("#allowlist-pattern", "no-such-program-here")
        .await;
    page.click("#allowlist-form button[type='submit']").await;
    page.wait_for(
        "document.getElementById('allowlist-message').textContent.startsWith(\
         'Not added: no-such-program-here is not a program on the gateway host')",
        "the unknown name to be refused",
    )
    .await;
    assert_eq!(server_allowlist(&server, "main").await, [ls]);
    assert_eq!(browser.problems(), Vec::<String>::new());
}

/// A tool approval as a person meets it: the card names the tool, its parameters, the
/// requester's title and severity, and what allow-always would grant; answered allow-always,
/// the grant shows in the Grants tab, where it is revoked, and the next call asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shows_a_tool_approval_and_revokes_the_grant_its_allow_always_made() {
    let work = tempfile::tempdir().unwrap();
    let ws = work.path().canonicalize().unwrap();
    let server = Server::start(&format!(
        "tools: {{ profile: 'full', fs: {{ workspaceOnly: true }}, alwaysAsk: ['write'] }},
         agents: {{ defaults: {{ workspace: '{}' }} }},",
        ws.display()
    ))
    .await;
    let browser = Browser::start().await;
    let page = logged_in(&browser, &server.base).await;
    let write = json!({"agentId": "main", "sessionKey": "browser-test", "tool": "write",
        "params": {"path": "notes.md", "content": "hello"}, "callId": "toolu_ui"});
    let mut request = write.clone();
    request["twoPhase"] = json!(true);
    request["title"] =
        json!("Claude Code on \u{202E}build-box: Write <img src=x onerror=alert(1)>");
    request["severity"] = json!("critical");
    let accepted = server.ok(AGENT, "tools.call.request", request).await;
    let id = accepted["id"].as_str().unwrap().to_owned();

    let card = format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{card}\")"),
        "the tool approval to appear live",
    )
    .await;
    let text = |selector: &str| {
        let expression = format!("document.querySelector(\"{card} {selector}\")?.textContent");
        let page = &page;
        async move { page.eval(&expression).await }
    };
    assert_eq!(text(".tool-name .tool").await, json!("write"));
    assert_eq!(text(".badge.severity").await, json!("critical"));
    assert_eq!(
        text(".tool-title").await,
        json!("Claude Code on <U+202E>build-box: Write <img src=x onerror=alert(1)>")
    );
    assert_eq!(
        page.eval(&format!(
            "[...document.querySelectorAll(\"{card} .tool-params dt, {card} .tool-params dd\")].map(e => e.textContent)"
        ))
        .await,
        json!(["path", "notes.md", "content", "5 bytes"])
    );
    let hint = text(".hint").await;
    assert!(
        hint.as_str().unwrap().contains(&format!(
            "grants write at or under {}",
            ws.join("notes.md").display()
        )),
        "{hint}"
    );
    assert_eq!(
        page.eval("document.querySelectorAll('img').length").await,
        json!(0)
    );
    // Regression: a fifth tab widened the page past a phone's screen, so taps missed.
    assert_eq!(
        page.eval("document.documentElement.scrollWidth <= innerWidth")
            .await,
        json!(true)
    );

    page.click(&format!("{card} button[data-decision='allow-always']"))
        .await;
    page.wait_for(
        &format!(
            "document.querySelector(\"{card} .result\")?.textContent.startsWith('Allowed always')"
        ),
        "the decision to be shown on the card",
    )
    .await;
    page.click("#tab-grants").await;
    page.wait_for(
        &format!("document.querySelector(\"#grants-list li[data-id='{id}']\")"),
        "the grant to be listed",
    )
    .await;
    let granted = server.ok(AGENT, "tools.call.check", write.clone()).await;
    assert_eq!(granted["reasons"][0]["rule"], "granted", "{granted}");

    page.click(&format!("#grants-list button[data-id='{id}']"))
        .await;
    page.wait_for(
        "document.getElementById('grants-message').textContent.startsWith('Revoked write at or under')",
        "the grant to be revoked",
    )
    .await;
    assert_eq!(
        page.eval("document.querySelectorAll('#grants-list li').length")
            .await,
        json!(0)
    );
    let listed = server.ok(ADMIN, "tools.grants.list", json!({})).await;
    assert_eq!(listed["grants"], json!([]));
    let again = server.ok(AGENT, "tools.call.check", write).await;
    assert_eq!(again["decision"], "ask", "{again}");
    assert_eq!(browser.problems(), Vec::<String>::new());
}
