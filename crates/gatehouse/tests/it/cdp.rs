//! Just enough of the Chrome DevTools Protocol to drive headless Chromium like a person: open a
//! page, wait for what it shows, click at an element's box, take a screenshot. Chromium must be
//! installed (Debian's `chromium`); a missing browser fails the test with that instruction.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Socket = SplitSink<WebSocketStream<MaybeTlsStream<TcpStream>>, Message>;
type Waiting = Arc<Mutex<HashMap<u64, oneshot::Sender<Value>>>>;

const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A headless Chromium with its own throwaway profile, killed when dropped.
pub(crate) struct Browser {
    _child: Child,
    profile: tempfile::TempDir,
    socket: tokio::sync::Mutex<Socket>,
    next_id: AtomicU64,
    waiting: Waiting,
    /// Script exceptions and console/CSP errors reported by any page, as text.
    problems: Arc<Mutex<Vec<String>>>,
}

/// One tab, addressed through its flat CDP session.
pub(crate) struct Page<'a> {
    browser: &'a Browser,
    session: String,
}

/// The Chromium binary: `GATEHOUSE_CHROMIUM`, else `chromium` or `chromium-browser` on `PATH`.
fn chromium_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("GATEHOUSE_CHROMIUM") {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "the Control UI browser test needs headless Chromium, and none was found on PATH: \
         install Debian's `chromium` package (`apt-get install chromium`; .ci/run does this in \
         CI) or set GATEHOUSE_CHROMIUM to a Chromium binary"
    );
}

impl Browser {
    /// Starts Chromium with remote debugging on a free port and attaches to it.
    pub(crate) async fn start() -> Browser {
        let binary = chromium_binary();
        let profile = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(profile.path().join("chromium.log")).unwrap();
        let child = Command::new(&binary)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", binary.display()));
        let endpoint = wait_for_endpoint(profile.path()).await;
        let (stream, _) = tokio_tungstenite::connect_async(&endpoint)
            .await
            .unwrap_or_else(|error| panic!("cannot reach Chromium at {endpoint}: {error}"));
        let (socket, mut incoming) = stream.split();
        let waiting: Waiting = Arc::default();
        let problems: Arc<Mutex<Vec<String>>> = Arc::default();
        let (reader_waiting, reader_problems) = (waiting.clone(), problems.clone());
        tokio::spawn(async move {
            while let Some(Ok(message)) = incoming.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let frame: Value = serde_json::from_str(&text).unwrap();
                if let Some(id) = frame["id"].as_u64() {
                    if let Some(sender) = reader_waiting.lock().unwrap().remove(&id) {
                        let _ = sender.send(frame);
                    }
                } else if let Some(problem) = problem_in(&frame) {
                    reader_problems.lock().unwrap().push(problem);
                }
            }
        });
        Browser {
            _child: child,
            profile,
            socket: tokio::sync::Mutex::new(socket),
            next_id: AtomicU64::new(1),
            waiting,
            problems,
        }
    }

    /// Sends one command (to a page when `session` is given) and returns its result.
    async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.waiting.lock().unwrap().insert(id, sender);
        let mut frame = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            frame["sessionId"] = json!(session);
        }
        self.socket
            .lock()
            .await
            .send(Message::Text(frame.to_string().into()))
            .await
            .unwrap();
        let reply = tokio::time::timeout(CALL_TIMEOUT, receiver)
            .await
            .unwrap_or_else(|_| panic!("Chromium did not answer {method} within 30 s"))
            .unwrap();
        if let Some(error) = reply.get("error") {
            panic!("Chromium refused {method}: {error}");
        }
        reply["result"].clone()
    }

    /// Opens a new tab with the given viewport (CSS pixels, as a phone when `mobile`).
    pub(crate) async fn new_page(&self, width: u32, height: u32, mobile: bool) -> Page<'_> {
        let target = self
            .call(None, "Target.createTarget", json!({"url": "about:blank"}))
            .await;
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await;
        let page = Page {
            browser: self,
            session: attached["sessionId"].as_str().unwrap().to_owned(),
        };
        page.call("Runtime.enable", json!({})).await;
        page.call("Log.enable", json!({})).await;
        page.call("Page.enable", json!({})).await;
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 2, "mobile": mobile}),
        )
        .await;
        page
    }

    /// Errors any page reported: uncaught exceptions, console errors, CSP violations.
    pub(crate) fn problems(&self) -> Vec<String> {
        self.problems.lock().unwrap().clone()
    }

    /// Chromium's own log, for failure messages.
    fn log(&self) -> String {
        std::fs::read_to_string(self.profile.path().join("chromium.log")).unwrap_or_default()
    }
}

/// Reads `DevToolsActivePort` (port, then browser path), which Chromium writes once listening.
async fn wait_for_endpoint(profile: &Path) -> String {
    let file = profile.join("DevToolsActivePort");
    for _ in 0..600 {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                return format!("ws://127.0.0.1:{port}{path}");
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = std::fs::read_to_string(profile.join("chromium.log")).unwrap_or_default();
    panic!("Chromium wrote no DevToolsActivePort within 30 s; its log:\n{log}");
}

/// The problem an event reports, if it is one a clean page never produces.
fn problem_in(frame: &Value) -> Option<String> {
    let params = &frame["params"];
    match frame["method"].as_str()? {
        "Runtime.exceptionThrown" => Some(format!("exception: {}", params["exceptionDetails"])),
        // The gateway serves no favicon; the browser's automatic request for one is not the page's.
        "Log.entryAdded"
            if params["entry"]["level"] == "error"
                && !params["entry"]["url"]
                    .as_str()
                    .is_some_and(|url| url.ends_with("/favicon.ico")) =>
        {
            Some(format!(
                "log: {} ({})",
                params["entry"]["text"], params["entry"]["url"]
            ))
        }
        "Runtime.consoleAPICalled" if params["type"] == "error" => {
            Some(format!("console.error: {}", params["args"]))
        }
        _ => None,
    }
}

impl Page<'_> {
    async fn call(&self, method: &str, params: Value) -> Value {
        self.browser.call(Some(&self.session), method, params).await
    }

    /// Loads `url` in this tab.
    pub(crate) async fn navigate(&self, url: &str) {
        let result = self.call("Page.navigate", json!({"url": url})).await;
        assert!(
            result.get("errorText").is_none(),
            "navigation to {url} failed: {result}"
        );
    }

    /// The value of a JavaScript expression (promises awaited); a thrown error fails the test.
    pub(crate) async fn eval(&self, expression: &str) -> Value {
        let result = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
            )
            .await;
        if let Some(details) = result.get("exceptionDetails") {
            panic!("page script `{expression}` threw: {details}");
        }
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is truthy; on timeout, fails saying `what` and what the page shows.
    pub(crate) async fn wait_for(&self, expression: &str, what: &str) {
        // While the page loads, `document.body` and friends may not exist yet: that is "not yet".
        let check = format!(
            "(() => {{ try {{ return Boolean({expression}); }} catch {{ return false; }} }})()"
        );
        for _ in 0..200 {
            if self.eval(&check).await == json!(true) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let shown = self
            .eval("document.body ? document.body.innerText : ''")
            .await;
        panic!(
            "timed out waiting for {what}; the page shows:\n{}\nproblems: {:?}\nChromium log:\n{}",
            shown.as_str().unwrap_or_default(),
            self.browser.problems(),
            self.browser.log()
        );
    }

    /// Clicks the element `selector` finds as a person would: scrolled into view, pressed and
    /// released with the left mouse button at the centre of its box. Fails if something else
    /// (an overlay, another element) is what sits at that point.
    pub(crate) async fn click(&self, selector: &str) {
        let selector_json = serde_json::to_string(selector).unwrap();
        let spot = self
            .eval(&format!(
                "(() => {{
                    const target = document.querySelector({selector_json});
                    if (!target) return null;
                    target.scrollIntoView({{block: 'center'}});
                    const box = target.getBoundingClientRect();
                    const x = box.left + box.width / 2, y = box.top + box.height / 2;
                    const hit = document.elementFromPoint(x, y);
                    return {{x, y, hit: hit === target || target.contains(hit)}};
                }})()"
            ))
            .await;
        assert!(!spot.is_null(), "nothing matches {selector} to click");
        assert_eq!(
            spot["hit"],
            json!(true),
            "{selector} is covered at its centre"
        );
        let (x, y) = (spot["x"].clone(), spot["y"].clone());
        self.call(
            "Input.dispatchMouseEvent",
            json!({"type": "mouseMoved", "x": x, "y": y}),
        )
        .await;
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await;
        }
    }

    /// Replaces the text of the input `selector` finds by typing `text` into it after a click.
    pub(crate) async fn type_into(&self, selector: &str, text: &str) {
        self.click(selector).await;
        let selector_json = serde_json::to_string(selector).unwrap();
        self.eval(&format!("document.querySelector({selector_json}).select()"))
            .await;
        self.call("Input.insertText", json!({"text": text})).await;
    }

    /// Presses and releases one key (`Tab`, `Enter`, `ArrowRight`, `Home`, a lower-case letter,
    /// ...) on whatever has focus, so the browser's own default actions (focus moves,
    /// activation, typing) happen.
    pub(crate) async fn press(&self, key: &str) {
        let letter = match key.as_bytes() {
            [byte] if byte.is_ascii_lowercase() => Some(byte.to_ascii_uppercase()),
            _ => None,
        };
        let (code, text, name) = match (key, letter) {
            (_, Some(upper)) => (u32::from(upper), key, format!("Key{}", char::from(upper))),
            ("Tab", _) => (9, "", key.to_owned()),
            ("Enter", _) => (13, "\r", key.to_owned()),
            ("Home", _) => (36, "", key.to_owned()),
            ("ArrowLeft", _) => (37, "", key.to_owned()),
            ("ArrowRight", _) => (39, "", key.to_owned()),
            (other, _) => panic!("press: no key code for {other}"),
        };
        let down = json!({
            "type": if text.is_empty() { "rawKeyDown" } else { "keyDown" },
            "key": key, "code": name, "windowsVirtualKeyCode": code, "text": text,
        });
        self.call("Input.dispatchKeyEvent", down).await;
        self.call(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": name, "windowsVirtualKeyCode": code}),
        )
        .await;
    }

    /// Saves a PNG of the viewport to `path`.
    pub(crate) async fn screenshot(&self, path: &Path) {
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        assert!(png.starts_with(b"\x89PNG"), "screenshot is not a PNG");
        std::fs::write(path, png).unwrap();
    }
}
