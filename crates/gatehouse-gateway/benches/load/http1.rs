//! A minimal keep-alive HTTP/1.1 client for `POST /rpc`: one TCP connection per requester, no
//! pool and no TLS, so the client side costs little and each requester's queueing is its own.

use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

/// One requester's connection to the gateway.
pub(crate) struct Connection {
    stream: BufReader<TcpStream>,
    line: String,
    body: Vec<u8>,
}

/// A request encoded once and sent many times.
#[derive(Clone)]
pub(crate) struct Encoded(Vec<u8>);

impl Encoded {
    /// `POST /rpc` with the bearer `token` and `{"method","params"}` as its body.
    pub(crate) fn rpc(addr: SocketAddr, token: &str, method: &str, params: &Value) -> Self {
        let body = serde_json::json!({"method": method, "params": params}).to_string();
        let head = format!(
            "POST /rpc HTTP/1.1\r\nhost: {addr}\r\nauthorization: Bearer {token}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\n\r\n",
            body.len()
        );
        Self([head.into_bytes(), body.into_bytes()].concat())
    }
}

impl Connection {
    pub(crate) async fn open(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Self {
            stream: BufReader::new(stream),
            line: String::new(),
            body: Vec::new(),
        }
    }

    /// Sends `request` and reads its answer's JSON body.
    pub(crate) async fn call(&mut self, request: &Encoded) -> Value {
        self.stream.get_mut().write_all(&request.0).await.unwrap();
        let mut length = None;
        let mut status_line = true;
        loop {
            self.line.clear();
            let read = self.stream.read_line(&mut self.line).await.unwrap();
            assert!(read > 0, "server closed the connection");
            let line = self.line.trim_end();
            if status_line {
                assert!(line.starts_with("HTTP/1.1 200"), "{line}");
                status_line = false;
            } else if line.is_empty() {
                break;
            } else if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = Some(value.trim().parse::<usize>().unwrap());
            }
        }
        let length = length.expect("the gateway answers with a content-length");
        self.body.resize(length, 0);
        self.stream.read_exact(&mut self.body).await.unwrap();
        serde_json::from_slice(&self.body).unwrap()
    }
}
