use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use gatehouse_gateway::{
    GatewaySettings, GatewayState, Limits, Registry, Scope, Secret, TokenSpec,
};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

pub(crate) const ADMIN: &str = "admin-secret-0123456789";
pub(crate) const APPROVER: &str = "approver-secret-0123456789";
pub(crate) const AGENT: &str = "agent-secret-0123456789";

pub(crate) struct Server {
    pub(crate) addr: SocketAddr,
    pub(crate) state: GatewayState,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    pub(crate) async fn start(limits: Limits) -> Self {
        Self::start_with(Registry::standard(), limits).await
    }

    pub(crate) async fn start_with(registry: Registry, limits: Limits) -> Self {
        let token = |name: &str, secret: &str, scope| TokenSpec {
            name: name.into(),
            secret: Secret::new(secret),
            scopes: vec![scope],
            agents: None,
        };
        let settings = GatewaySettings {
            tokens: vec![
                token("admin", ADMIN, Scope::Admin),
                token("approver", APPROVER, Scope::Approvals),
                token("agent", AGENT, Scope::Agent),
            ],
            limits,
        };
        let state = GatewayState::with_registry(&settings, registry).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (shutdown, signal) = oneshot::channel::<()>();
        let task = tokio::spawn(gatehouse_gateway::serve(
            listener,
            state.clone(),
            async move {
                let _ = signal.await;
            },
        ));
        Self {
            addr,
            state,
            shutdown: Some(shutdown),
            task,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) async fn ws(&self) -> Ws {
        match self.try_ws().await {
            Ok(ws) => ws,
            Err((status, body)) => panic!("upgrade refused with {status}: {body}"),
        }
    }

    /// Opens a WebSocket; a refused upgrade is its HTTP status and JSON body.
    pub(crate) async fn try_ws(&self) -> Result<Ws, (u16, Value)> {
        match tokio_tungstenite::connect_async(format!("ws://{}/ws", self.addr)).await {
            Ok((stream, _)) => Ok(Ws { stream, next_id: 0 }),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                let body = response.body().as_deref().unwrap_or_default();
                Err((
                    response.status().as_u16(),
                    serde_json::from_slice(body).unwrap_or(Value::Null),
                ))
            }
            Err(error) => panic!("cannot open a WebSocket: {error}"),
        }
    }

    pub(crate) async fn rpc(&self, token: Option<&str>, body: Value) -> (u16, Value) {
        let mut request = reqwest::Client::new().post(self.url("/rpc")).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        (response.status().as_u16(), response.json().await.unwrap())
    }

    /// Triggers the shutdown signal and waits for `serve` to return.
    pub(crate) async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
    }
}

pub(crate) struct Ws {
    pub(crate) stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u64,
}

/// What a client read: a JSON frame or the close frame's code and reason.
#[derive(Debug)]
pub(crate) enum Frame {
    Json(Value),
    Close(u16, String),
}

impl Ws {
    pub(crate) async fn send(&mut self, frame: Value) {
        self.send_raw(frame.to_string()).await;
    }

    pub(crate) async fn send_raw(&mut self, text: String) {
        self.stream.send(Message::text(text)).await.unwrap();
    }

    /// Sends a request and returns its id.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> String {
        self.next_id += 1;
        let id = format!("r{}", self.next_id);
        self.send(json!({"type":"req","id":id,"method":method,"params":params}))
            .await;
        id
    }

    pub(crate) async fn connect(&mut self, token: &str) -> Value {
        self.request(
            "connect",
            json!({"token": token, "client": {"name": "it", "version": "1"}}),
        )
        .await;
        self.json().await
    }

    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        let response = self.json().await;
        assert_eq!(response["id"], id.as_str(), "{response}");
        response
    }

    pub(crate) async fn frame(&mut self) -> Frame {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(10), self.stream.next())
                .await
                .expect("no frame within 10 s")
                .expect("stream ended without a close frame")
                .unwrap();
            match message {
                Message::Text(text) => {
                    return Frame::Json(serde_json::from_str(text.as_str()).unwrap());
                }
                Message::Close(Some(close)) => {
                    return Frame::Close(u16::from(close.code), close.reason.as_str().to_owned());
                }
                Message::Close(None) => return Frame::Close(1005, String::new()),
                _ => continue,
            }
        }
    }

    pub(crate) async fn json(&mut self) -> Value {
        match self.frame().await {
            Frame::Json(value) => value,
            Frame::Close(code, reason) => panic!("closed with {code}: {reason}"),
        }
    }

    /// Writes the header of a masked text frame of `len` bytes and none of its payload, to see
    /// what the gateway does before the payload could have arrived.
    pub(crate) async fn announce_text_frame(&mut self, len: u64) {
        let mut header = vec![0x81, 0x80 | 127];
        header.extend_from_slice(&len.to_be_bytes());
        header.extend_from_slice(&[1, 2, 3, 4]);
        self.stream.get_mut().write_all(&header).await.unwrap();
    }

    /// Sends a close frame with `code` and returns the close frame that answers it; a server
    /// that drops the connection instead fails the read (tungstenite's "reset without closing
    /// handshake", which browsers report as 1006).
    pub(crate) async fn close_with(&mut self, code: u16) -> Frame {
        let close = CloseFrame {
            code: CloseCode::from(code),
            reason: "bye".into(),
        };
        self.stream.close(Some(close)).await.unwrap();
        self.frame().await
    }

    /// Expects a close frame with `code` whose reason starts with `error_code`.
    pub(crate) async fn expect_close(&mut self, code: u16, error_code: &str) {
        match self.frame().await {
            Frame::Close(got, reason) => {
                assert_eq!(got, code, "{reason}");
                assert!(reason.starts_with(&format!("{error_code}: ")), "{reason}");
            }
            Frame::Json(value) => panic!("expected a close, got {value}"),
        }
    }
}

/// Reads from `stream` until what was read contains `end`; all of it, as text.
pub(crate) async fn read_until(stream: &mut TcpStream, end: &str) -> String {
    let mut read = Vec::new();
    let mut chunk = [0; 1024];
    while !String::from_utf8_lossy(&read).contains(end) {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk))
            .await
            .expect("an answer within 5 s")
            .unwrap();
        assert_ne!(n, 0, "closed after {:?}", String::from_utf8_lossy(&read));
        read.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&read).into_owned()
}
