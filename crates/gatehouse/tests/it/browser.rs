#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a panic in a test helper is a failed test"
)]

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdout, Command};

use crate::cdp::Browser;

/// A phone's viewport in CSS pixels (an iPhone 12–15 class screen).
const PHONE: (u32, u32) = (390, 844);

/// `gatehouse serve` on a free loopback port, with the login URL it printed.
struct Served {
    _child: Child,
    _stdout: tokio::io::Lines<BufReader<ChildStdout>>,
    login_url: String,
    token: String,
}

async fn serve(data_dir: &Path) -> Served {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gatehouse"))
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data_dir)
        .env_remove("XDG_STATE_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let login_url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = stdout.next_line().await.unwrap() {
            if let Some(url) = line.strip_prefix("Control UI login: ") {
                return url.to_owned();
            }
        }
        panic!("gatehouse exited without printing a login URL");
    })
    .await
    .expect("no login URL within 30 s");
    let (_, token) = login_url.split_once("/#token=").unwrap();
    Served {
        token: token.to_owned(),
        login_url: login_url.clone(),
        _child: child,
        _stdout: stdout,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_in_from_the_url_fragment_and_forgets_it_from_the_address_bar() {
    let data_dir = tempfile::tempdir().unwrap();
    let served = serve(data_dir.path()).await;
    let browser = Browser::start().await;
    let page = browser.new_page(PHONE.0, PHONE.1, true).await;

    page.navigate(&served.login_url).await;
    page.wait_for(
        "document.body.dataset.connection === 'connected'",
        "the page to connect",
    )
    .await;

    assert_eq!(page.eval("location.hash").await, json!(""));
    assert_eq!(
        page.eval("sessionStorage.getItem('gatehouse.token')").await,
        json!(served.token)
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
    let shot = std::env::temp_dir().join("gatehouse-control-ui-phone.png");
    page.screenshot(&shot).await;
    assert_eq!(browser.problems(), Vec::<String>::new());
}
