//! `system.run` against the real binary: policy, approval, binding re-check, bounded output.

use serde_json::{Value, json};

use crate::gateway::{ADMIN, AGENT, APPROVER, Server, Ws, audit_records, script};

const FULL: &str = "tools: { exec: { security: 'full', ask: 'off' } },";
const ASKING: &str = "tools: { exec: { security: 'allowlist', ask: 'always' } },";

fn run_params(server: &Server, argv: &[&str]) -> Value {
    json!({"argv": argv, "cwd": server.scratch(), "agentId": "main", "sessionKey": "s1"})
}

/// Starts `system.run` on the agent's socket and returns the approval the operator sees.
async fn ask(
    server: &Server,
    agent: &mut Ws,
    operator: &mut Ws,
    argv: &[&str],
) -> (String, String) {
    let (pending, requested) = ask_with(agent, operator, run_params(server, argv)).await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    (pending, id)
}

/// Starts `system.run` with `params`; returns the pending call and the `requested` event.
async fn ask_with(agent: &mut Ws, operator: &mut Ws, params: Value) -> (String, Value) {
    let pending = agent.send("system.run", params).await;
    (pending, operator.event("exec.approval.requested").await)
}

/// Answers approval `id` and returns the agent's response to its pending `system.run`.
async fn decide(
    operator: &mut Ws,
    agent: &mut Ws,
    (pending, id): (&str, &str),
    decision: &str,
) -> Value {
    let resolved = operator
        .call(
            "exec.approval.resolve",
            json!({"id": id, "decision": decision}),
        )
        .await;
    assert_eq!(resolved["payload"]["applied"], true, "{resolved}");
    agent.response(pending).await
}

#[tokio::test]
async fn runs_an_allowed_argv_and_returns_its_output() {
    let server = Server::start(FULL).await;
    let mut operator = server.ws(APPROVER).await;
    let answer = server
        .ok(
            AGENT,
            "system.run",
            run_params(&server, &["echo", "hello", "$HOME"]),
        )
        .await;
    assert_eq!(answer["status"], "finished");
    assert_eq!(answer["exitCode"], 0);
    // No shell: `$HOME` is passed through literally.
    assert_eq!(answer["stdout"], "hello $HOME\n");
    let finished = operator.event("exec.finished").await;
    assert_eq!(finished["payload"]["runId"], answer["runId"]);
}

#[tokio::test]
async fn bounds_output_and_says_it_was_truncated() {
    let server = Server::start(FULL).await;
    let answer = server
        .ok(
            AGENT,
            "system.run",
            json!({"command": "head -c 200000 /dev/zero | tr '\\0' x; echo done >&2",
                   "cwd": server.scratch(), "agentId": "main", "sessionKey": "s1"}),
        )
        .await;
    assert_eq!(answer["stdout"].as_str().unwrap().len(), 64 * 1024);
    assert_eq!(answer["stdoutTruncated"], true);
    assert_eq!(
        (answer["stderr"].clone(), answer["stderrTruncated"].clone()),
        (json!("done\n"), json!(false))
    );
}

#[tokio::test]
async fn kills_a_run_at_its_timeout() {
    let server = Server::start(FULL).await;
    let mut params = run_params(&server, &["sleep", "30"]);
    params["timeoutMs"] = json!(300);
    let answer = server.ok(AGENT, "system.run", params).await;
    assert_eq!(answer["timedOut"], true);
    assert_eq!(answer["signal"], 9);
}

#[tokio::test]
async fn denies_by_policy_with_an_event() {
    let server = Server::start("tools: { exec: { security: 'deny' } },").await;
    let mut operator = server.ws(APPROVER).await;
    let answer = server
        .ok(AGENT, "system.run", run_params(&server, &["ls"]))
        .await;
    assert_eq!(
        (answer["status"].clone(), answer["reason"].clone()),
        (json!("denied"), json!("policy"))
    );
    let denied = operator.event("exec.denied").await;
    assert_eq!(denied["payload"]["reason"], "policy");
    assert_eq!(denied["payload"]["runId"], answer["runId"]);
}

#[tokio::test]
async fn a_denied_program_that_does_not_resolve_keeps_the_policys_reason() {
    let server = Server::start("tools: { exec: { security: 'deny' } },").await;
    let answer = server
        .ok(
            AGENT,
            "system.run",
            run_params(&server, &["no-such-program-anywhere"]),
        )
        .await;
    assert_eq!(answer["reason"], "policy", "{answer}");
    assert_eq!(
        answer["detail"],
        "security-deny: security is deny: no command runs"
    );
}

#[tokio::test]
async fn denies_with_no_approval_route_when_nobody_can_be_asked() {
    let server = Server::start(ASKING).await;
    let answer = server
        .ok(AGENT, "system.run", run_params(&server, &["ls"]))
        .await;
    assert_eq!(answer["reason"], "no-approval-route");
}

#[tokio::test]
async fn runs_once_approved_under_the_approval_id() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let work = server.scratch();
    script(&work, "job.sh", "echo job ran");
    let (pending, id) = ask(&server, &mut agent, &mut operator, &["sh", "job.sh"]).await;
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_eq!(answer["payload"]["stdout"], "job ran\n", "{answer}");
    assert_eq!(answer["payload"]["runId"], id.as_str());
    let finished = operator.event("exec.finished").await;
    assert_eq!(finished["payload"]["runId"], id.as_str());
    let got = server
        .ok(APPROVER, "exec.approval.get", json!({"id": id}))
        .await;
    assert!(got["consumedAtMs"].is_u64(), "{got}");
    assert_audited(&server, &id).await;
}

/// Security review: an argv's approval text was its words joined by spaces, so approvers read
/// `ls a b` for `["ls", "a b"]`. The text keeps each word whole.
#[tokio::test]
async fn shows_approvers_an_argv_with_its_word_boundaries() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let params = run_params(&server, &["ls", "a b", "c"]);
    let (_pending, requested) = ask_with(&mut agent, &mut operator, params).await;
    assert_eq!(
        requested["payload"]["request"]["command"], "ls \"a b\" c",
        "{requested}"
    );
}

/// Operator review: `lastUsedAt` never moved when an entry let a run through, so an entry in
/// daily use looked unused to an operator pruning by last use.
#[tokio::test]
async fn records_the_use_of_the_allowlist_entry_that_let_a_run_through() {
    let server = Server::start("tools: { exec: { security: 'allowlist', ask: 'off' } },").await;
    let echo = std::fs::canonicalize("/bin/echo").unwrap();
    let read = server.ok(APPROVER, "exec.approvals.get", json!({})).await;
    let mut file = read["file"].clone();
    file["agents"] = json!({"main": {"allowlist": [{"pattern": echo}]}});
    server
        .ok(
            ADMIN,
            "exec.approvals.set",
            json!({"file": file, "baseHash": read["hash"]}),
        )
        .await;
    let answer = server
        .ok(AGENT, "system.run", run_params(&server, &["echo", "a b"]))
        .await;
    assert_eq!(answer["stdout"], "a b\n", "{answer}");
    // Recorded off the run's path: wait for the file to show it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let entry = loop {
        let read = server.ok(APPROVER, "exec.approvals.get", json!({})).await;
        let entry = read["file"]["agents"]["main"]["allowlist"][0].clone();
        if entry["lastUsedAt"].is_u64() || std::time::Instant::now() > deadline {
            break entry;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(entry["lastUsedAt"].is_u64(), "{entry}");
    assert_eq!(entry["lastUsedCommand"], "echo \"a b\"", "{entry}");
    assert_eq!(entry["lastResolvedPath"], json!(echo), "{entry}");
}

/// The audit log holds the approval's request, delivery, decision and execution, and verifies.
async fn assert_audited(server: &Server, id: &str) {
    let wanted = ["request", "delivery", "decision", "execution"];
    audit_records(server, id, |records| {
        wanted
            .iter()
            .all(|kind| records.iter().any(|record| record["kind"] == *kind))
    })
    .await;
    let verified = tokio::process::Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["audit", "verify", "--data-dir"])
        .arg(server.data())
        .output()
        .await
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
}

#[tokio::test]
async fn denies_a_script_edited_between_approval_and_run() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let work = server.scratch();
    script(&work, "job.sh", "echo harmless");
    let (pending, id) = ask(&server, &mut agent, &mut operator, &["sh", "job.sh"]).await;
    script(&work, "job.sh", "echo something else entirely");
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_script_mismatch(&answer);
    let denied = operator.event("exec.denied").await;
    assert_eq!(
        (
            denied["payload"]["runId"].clone(),
            denied["payload"]["reason"].clone()
        ),
        (json!(id), json!("binding-mismatch"))
    );
}

/// Closing notes: `awk -f report.awk data.csv` bound no program file, so a `report.awk`
/// edited while the approval waited ran under it. The program file is bound; the data is not.
#[tokio::test]
async fn binds_an_awk_program_file_but_not_its_data() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let work = server.scratch();
    std::fs::write(
        work.join("report.awk"),
        "{ total += $2 } END { print total }\n",
    )
    .unwrap();
    std::fs::write(work.join("data.csv"), "a 1\n").unwrap();
    let argv = ["awk", "-f", "report.awk", "data.csv"];

    let (pending, id) = ask(&server, &mut agent, &mut operator, &argv).await;
    std::fs::write(work.join("data.csv"), "a 1\nb 2\n").unwrap();
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_eq!(answer["payload"]["status"], "finished", "{answer}");
    assert_eq!(answer["payload"]["stdout"], "3\n", "{answer}");

    let (pending, id) = ask(&server, &mut agent, &mut operator, &argv).await;
    std::fs::write(work.join("report.awk"), "BEGIN { print \"edited\" }\n").unwrap();
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_script_mismatch(&answer);
}

/// Issue 29: a shell string bound only its text, so `bash run.sh` ran whatever `run.sh` held
/// by the time the approval came. Every segment's script is bound now, and approvers are shown
/// each program of the chain and what allow-always would store.
#[tokio::test]
async fn denies_a_shell_strings_script_edited_between_approval_and_run() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let work = server.scratch();
    script(&work, "run.sh", "echo harmless");
    let params = json!({"command": "true && bash run.sh", "cwd": work, "agentId": "main",
                        "sessionKey": "s1", "env": {"CI": "1"}});
    let (pending, requested) = ask_with(&mut agent, &mut operator, params.clone()).await;
    let request = &requested["payload"]["request"];
    assert_eq!(request["bound"], true, "{requested}");
    assert_eq!(request["host"], "gateway", "{requested}");
    let summary = &request["summary"];
    let programs: Vec<&Value> = summary["programs"].as_array().unwrap().iter().collect();
    assert_eq!(
        programs
            .iter()
            .map(|program| program["argv"].clone())
            .collect::<Vec<_>>(),
        [json!(["true"]), json!(["bash", "run.sh"])],
        "{summary}"
    );
    assert_eq!(programs[0]["satisfiedBy"], "builtin", "{summary}");
    assert_eq!(summary["envNames"], json!(["CI"]), "{summary}");
    assert!(summary["allowAlwaysPatterns"].is_array(), "{summary}");
    script(&work, "run.sh", "echo something else entirely");
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_script_mismatch(&answer);
    // Left alone, the same approval runs it.
    let (pending, requested) = ask_with(&mut agent, &mut operator, params).await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_eq!(
        answer["payload"]["stdout"], "something else entirely\n",
        "{answer}"
    );
}

/// The run was denied because the program text it reads from files changed after approval.
fn assert_script_mismatch(answer: &Value) {
    assert_eq!(answer["payload"]["status"], "denied", "{answer}");
    assert_eq!(answer["payload"]["reason"], "binding-mismatch");
    assert_eq!(
        answer["payload"]["detail"],
        "approval binding mismatch: script"
    );
}

#[tokio::test]
async fn denies_when_a_person_says_no() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let (pending, id) = ask(&server, &mut agent, &mut operator, &["ls"]).await;
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "deny").await;
    assert_eq!(answer["payload"]["reason"], "user-denied", "{answer}");
}

#[tokio::test]
async fn denies_with_approval_timeout_when_nobody_answers() {
    let server = Server::start(ASKING).await;
    let _operator = server.ws(APPROVER).await;
    let mut params = run_params(&server, &["ls"]);
    params["approvalTimeoutMs"] = json!(200);
    let answer = server.ok(AGENT, "system.run", params).await;
    assert_eq!(answer["reason"], "approval-timeout", "{answer}");
}

#[tokio::test]
async fn announces_a_long_run_with_exec_running_before_it_finishes() {
    let server = Server::start(FULL).await;
    let mut operator = server.ws(APPROVER).await;
    let answer = server
        .ok(AGENT, "system.run", run_params(&server, &["sleep", "1.5"]))
        .await;
    let running = operator.event("exec.running").await;
    let finished = operator.event("exec.finished").await;
    assert_eq!(running["payload"]["runId"], answer["runId"]);
    assert_eq!(running["payload"]["argv"], json!(["sleep", "1.5"]));
    assert!(running["seq"].as_u64() < finished["seq"].as_u64());
}

#[tokio::test]
async fn runs_the_file_the_policy_judged_when_path_has_a_relative_entry() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let work = server.scratch();
    for dir in ["tools", "abs"] {
        std::fs::create_dir_all(work.join(dir)).unwrap();
        script(&work.join(dir), "probe", &format!("echo {dir}"));
    }
    // `tools` is relative: the child, started in `work`, would find `tools/probe` first, and so
    // does the policy. Binding and running `abs/probe` instead would run a file nobody judged.
    let mut params = run_params(&server, &["probe"]);
    params["env"] = json!({"PATH": format!("tools:{}", work.join("abs").display())});
    let (pending, requested) = ask_with(&mut agent, &mut operator, params).await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let judged = work.join("tools/probe");
    assert_eq!(
        requested["payload"]["request"]["resolvedPath"],
        json!(judged.display().to_string()),
        "{requested}"
    );
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_eq!(answer["payload"]["stdout"], "tools\n", "{answer}");
}

/// Asks to run `argv` with `HOME` at `work/home`, beside a directory literally named `~` in
/// the cwd (as an agent that writes files could make), each holding a `bin/probe` that says
/// which it is; approves it and returns the path the operator was shown and what ran.
async fn approve_tilde_probe(argv: &[&str]) -> (Value, Value, std::path::PathBuf) {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let work = server.scratch();
    for (dir, says) in [
        (work.join("home/bin"), "home"),
        (work.join("~/bin"), "tilde-dir"),
    ] {
        std::fs::create_dir_all(&dir).unwrap();
        script(&dir, "probe", &format!("echo {says}"));
    }
    let mut params = run_params(&server, argv);
    params["env"] = json!({"HOME": work.join("home").display().to_string()});
    let (pending, requested) = ask_with(&mut agent, &mut operator, params).await;
    let id = requested["payload"]["id"].as_str().unwrap().to_owned();
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    let shown = requested["payload"]["request"]["resolvedPath"].clone();
    (shown, answer["payload"]["stdout"].clone(), work)
}

#[tokio::test]
async fn runs_the_file_the_policy_judged_when_argv0_starts_with_a_tilde() {
    let (shown, ran, work) = approve_tilde_probe(&["~/bin/probe"]).await;
    let home_probe = work.join("home/bin/probe").display().to_string();
    assert_eq!((shown, ran), (json!(home_probe), json!("home\n")));
}

#[tokio::test]
async fn runs_the_file_the_policy_judged_when_a_wrapper_gets_a_tilde_argument() {
    // `env` runs its argument as written: `./~/bin/probe`, not HOME's.
    let (shown, ran, work) = approve_tilde_probe(&["env", "~/bin/probe"]).await;
    let cwd_probe = work.join("~/bin/probe").display().to_string();
    assert_eq!((shown, ran), (json!(cwd_probe), json!("tilde-dir\n")));
}

#[tokio::test]
async fn refuses_a_wrapper_that_is_not_the_systems_own_before_asking_anyone() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    // The policy looks through `env` by name and judges `ls`; this `env` is the agent's own.
    script(&server.scratch(), "env", "echo not the real env");
    let mut params = run_params(&server, &["./env", "ls"]);
    // Were it asked, nobody answers: the run would end `approval-timeout`, not `policy`.
    params["approvalTimeoutMs"] = json!(300);
    let answer = server.ok(AGENT, "system.run", params).await;
    assert_eq!(
        (answer["status"].clone(), answer["reason"].clone()),
        (json!("denied"), json!("policy")),
        "{answer}"
    );
    let detail = answer["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("not a system binary"), "{detail}");
    let denied = operator.event("exec.denied").await;
    assert_eq!(denied["payload"]["reason"], "policy");
}

#[tokio::test]
async fn still_asks_for_a_wrapper_that_is_the_systems_own() {
    let server = Server::start(ASKING).await;
    let mut operator = server.ws(APPROVER).await;
    let mut agent = server.ws(AGENT).await;
    let (pending, id) = ask(&server, &mut agent, &mut operator, &["env", "echo", "hi"]).await;
    let answer = decide(&mut operator, &mut agent, (&pending, &id), "allow-once").await;
    assert_eq!(answer["payload"]["stdout"], "hi\n", "{answer}");
}

/// Under allowlist with nobody asked, `wc -c` reading stdin is a safe bin and runs at once.
const UNASKED: &str = "tools: { exec: { security: 'allowlist', ask: 'off' } },";

#[tokio::test]
async fn refuses_a_wrapper_of_its_own_anywhere_in_a_shell_string_or_an_argv() {
    let server = Server::start(UNASKED).await;
    script(&server.scratch(), "env", "echo not the real env");
    let shell_string = json!({"command": "true && ./env wc -c", "cwd": server.scratch(),
                              "agentId": "main", "sessionKey": "s1"});
    let nested = run_params(&server, &["env", "./env", "wc", "-c"]);
    for params in [shell_string, nested] {
        let answer = server.ok(AGENT, "system.run", params.clone()).await;
        assert_eq!(answer["reason"], "policy", "{params}: {answer}");
        let detail = answer["detail"].as_str().unwrap_or_default();
        assert!(detail.contains("not a system binary"), "{detail}");
    }
}

#[tokio::test]
async fn runs_a_shell_string_whose_wrappers_are_the_systems_own() {
    let server = Server::start(UNASKED).await;
    let params = json!({"command": "true && env nice wc -c", "cwd": server.scratch(),
                        "agentId": "main", "sessionKey": "s1"});
    let answer = server.ok(AGENT, "system.run", params).await;
    assert_eq!(
        (answer["status"].clone(), answer["stdout"].clone()),
        (json!("finished"), json!("0\n")),
        "{answer}"
    );
}

#[tokio::test]
async fn a_policy_denial_keeps_its_own_reason_whatever_the_wrapper() {
    let server = Server::start(UNASKED).await;
    script(&server.scratch(), "env", "echo not the real env");
    let params = run_params(&server, &["./env", "ls"]);
    let answer = server.ok(AGENT, "system.run", params).await;
    assert_eq!(answer["reason"], "policy", "{answer}");
    let detail = answer["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("no-allowlist-match"), "{detail}");
}
