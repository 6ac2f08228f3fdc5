//! The README's quickstart, verbatim: its `sh` blocks are read from README.md, must be exactly
//! the commands this test knows, and are run with `sh -c` against the real binary, with the
//! Control UI opened in headless Chromium and **Allow once** pressed there, as a newcomer would.
//! Only the environment differs from a newcomer's: a free port (`GATEHOUSE_LISTEN` for `serve`,
//! `GATEHOUSE_URL` for the rest) and a temporary `XDG_STATE_HOME`, so the test can run beside
//! anything else on the machine.

use crate::cdp::Browser;
use crate::docs_shell::{DocShell, Started, command_lines, free_port, line_with, root, sh_blocks};

/// The quickstart's commands, in order, as README.md must spell them.
const QUICKSTART: [&str; 6] = [
    "cargo install --locked --path crates/gatehouse",
    "gatehouse serve",
    "gatehouse status",
    "gatehouse request -- make deploy",
    "gatehouse approvals list --state pending",
    "gatehouse approvals resolve <id> allow-once",
];

/// The command lines of README.md's `## Install` and `## Quickstart…` sections.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut blocks = sh_blocks(&readme, "## Install");
    blocks.extend(sh_blocks(&readme, "## Quickstart: a first approval"));
    command_lines(&blocks)
}

/// Starts `request` and returns it with the approval id it names while it waits.
async fn waiting_request(shell: &DocShell, line: &str) -> (Started, String) {
    let started = shell.start(line);
    let named = line_with(
        &started.stderr,
        "waiting for a decision on approval ",
        "approval id",
    )
    .await;
    let id = named.rsplit(' ').next().unwrap().to_owned();
    (started, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_quickstart_works_verbatim() {
    assert_eq!(
        readme_commands(),
        QUICKSTART,
        "README.md's quickstart changed: update this test with it"
    );
    let [install, serve, status, request, list, resolve] = QUICKSTART;

    // Not run (a release build takes many minutes): the path must be this binary's crate.
    let path = install.split_once("--path ").map(|(_, path)| path).unwrap();
    let manifest = std::fs::read_to_string(root().join(path).join("Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"gatehouse\""), "{manifest}");
    assert!(
        root().join("Cargo.lock").exists(),
        "--locked needs Cargo.lock"
    );

    let listen = format!("127.0.0.1:{}", free_port());
    let shell = DocShell::new()
        .with_env("GATEHOUSE_LISTEN", &listen)
        .with_env("GATEHOUSE_URL", &format!("http://{listen}"));
    let gateway = shell.start(serve);
    let log = &gateway.stderr;
    let login = line_with(&gateway.stdout, "Control UI login: ", "login URL").await;
    let login_url = login.trim_start_matches("Control UI login: ");
    line_with(log, "No approval route yet", "start-up warning").await;

    let browser = Browser::start().await;
    let page = browser.new_page(1280, 800, false).await;
    page.navigate(login_url).await;
    page.wait_for(
        "document.body.dataset.connection === 'connected'",
        "the Control UI to connect",
    )
    .await;

    let shown = shell.run(status).await;
    let token_file = shell.home.path().join("state/gatehouse/admin.token");
    assert!(
        shown.contains("identity   admin (operator.admin)")
            && shown.contains(&format!("token from {}", token_file.display()))
            && shown.contains("operators  1 connected: control-ui as admin"),
        "{shown}"
    );

    // Approved in the Control UI.
    let (waiting, id) = waiting_request(&shell, request).await;
    let card = format!("li.approval[data-id='{id}']");
    page.wait_for(
        &format!("document.querySelector(\"{card}\") !== null"),
        "the approval in the Control UI",
    )
    .await;
    page.click(&format!("{card} button[data-decision='allow-once']"))
        .await;
    let answer = waiting.succeeded().await;
    assert!(
        answer.starts_with(&format!("allow-once (by admin; approval {id})")),
        "{answer}"
    );
    for logged in [
        "Approval requested.",
        "Approval delivered to operator clients.",
        "Approval decided.",
    ] {
        let line = line_with(log, logged, logged).await;
        assert!(line.contains(&id), "{line}");
    }

    // Approved from a shell.
    let (waiting, id) = waiting_request(&shell, request).await;
    let listed = shell.run(list).await;
    assert!(
        listed.starts_with("ID ") && listed.contains(&id),
        "{listed}"
    );
    let resolved = shell.run(&resolve.replace("<id>", &id[..8])).await;
    assert_eq!(resolved, format!("{id}: allow-once\n"));
    waiting.succeeded().await;
    assert_eq!(browser.problems(), Vec::<String>::new());
}
