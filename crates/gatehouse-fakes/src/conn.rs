//! Connections a request handler can cut: how the fakes close a socket without answering
//! (a reset, or an answer lost after the call took effect), which plain `axum::serve` cannot.
//!
//! Every accepted stream is wrapped; its [`ConnCut`] reaches handlers as `ConnectInfo`. Once
//! cut, the stream refuses every write and reads as closed, so hyper abandons the connection
//! before a byte of the answer leaves; a reset also sets `SO_LINGER` 0, so closing sends RST.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

const OPEN: u8 = 0;
const CLOSE: u8 = 1;
const RESET: u8 = 2;

/// A TCP listener whose connections can be cut from inside a handler.
#[derive(Debug)]
pub(crate) struct CutListener(pub(crate) TcpListener);

impl Listener for CutListener {
    type Io = CutStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (CutStream, SocketAddr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    let cut = ConnCut(Arc::new(AtomicU8::new(OPEN)));
                    return (CutStream { inner: stream, cut }, addr);
                }
                // Out of file descriptors and the like: wait instead of spinning.
                Err(error) => {
                    tracing::warn!(%error, "Accepting a connection failed.");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.0.local_addr()
    }
}

/// The handle a handler uses to cut its own connection.
#[derive(Clone, Debug)]
pub(crate) struct ConnCut(Arc<AtomicU8>);

impl ConnCut {
    /// Closes the connection without answering (FIN), as a server that died mid-request.
    pub(crate) fn close(&self) {
        let _ = self
            .0
            .compare_exchange(OPEN, CLOSE, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Resets the connection without answering (RST), as a dropped proxy or a crashed peer.
    pub(crate) fn reset(&self) {
        self.0.store(RESET, Ordering::SeqCst);
    }
}

impl Connected<IncomingStream<'_, CutListener>> for ConnCut {
    fn connect_info(stream: IncomingStream<'_, CutListener>) -> Self {
        stream.io().cut.clone()
    }
}

/// An accepted stream that honours its [`ConnCut`].
#[derive(Debug)]
pub(crate) struct CutStream {
    inner: TcpStream,
    cut: ConnCut,
}

impl CutStream {
    /// Whether the stream was cut; a reset arms RST for when hyper drops the stream.
    fn is_cut(&self) -> bool {
        match self.cut.0.load(Ordering::SeqCst) {
            OPEN => false,
            RESET => {
                let _ = self.inner.set_zero_linger();
                true
            }
            _ => true,
        }
    }
}

fn cut_error() -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionAborted, "cut by an injected fault")
}

impl AsyncRead for CutStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_cut() {
            // End of stream: hyper stops reading requests from this connection.
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CutStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_cut() {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.is_cut() {
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}
