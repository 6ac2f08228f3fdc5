//! Connections the server can cut when the shutdown grace runs out.
//!
//! axum's graceful shutdown waits for every HTTP connection without limit, and it spawns each
//! connection's task where the gateway cannot reach it; a client that keeps a request open (a
//! long `system.run`, a body sent a byte a minute) would otherwise hold the process past its
//! grace. Every accepted stream is therefore wrapped so that one [`Severer::sever`] fails all its
//! reads and writes: hyper then ends the connection and drops the request in flight, and a
//! WebSocket's loop sees its socket fail. The socket itself is closed by the task that owns it,
//! so nothing here duplicates or closes file descriptors.
//!
//! The check costs one atomic load per read or write; a waker is registered only when the
//! stream itself has nothing ready, which is when the task would sleep and must be woken.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use axum::serve::Listener;
use futures_util::task::AtomicWaker;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A listener whose accepted streams all fail once its [`Severer`] is used.
pub(crate) struct Severable<L> {
    inner: L,
    switch: Arc<Switch>,
}

/// Cuts every stream a [`Severable`] listener accepted that is still open, and every one it
/// accepts afterwards.
pub(crate) struct Severer {
    switch: Arc<Switch>,
}

/// What the listener, its streams and the severer share.
#[derive(Default)]
struct Switch {
    severed: AtomicBool,
    next_id: AtomicU64,
    /// The wakers of every open stream, so a stream whose task sleeps on it hears the cut.
    open: Mutex<HashMap<u64, Arc<Wakers>>>,
}

/// A read and a write waker: a stream split in two may be polled by two tasks.
#[derive(Default)]
struct Wakers {
    read: AtomicWaker,
    write: AtomicWaker,
}

impl<L> Severable<L> {
    /// Wraps `inner`; the [`Severer`] cuts what it accepts.
    pub(crate) fn new(inner: L) -> (Self, Severer) {
        let switch = Arc::new(Switch::default());
        let severer = Severer {
            switch: Arc::clone(&switch),
        };
        (Self { inner, switch }, severer)
    }
}

impl Severer {
    /// Fails every read and write on the streams still open, and wakes their tasks so they
    /// notice now rather than at their next read. Idempotent.
    pub(crate) fn sever(&self) {
        self.switch.severed.store(true, Ordering::SeqCst);
        let open = self
            .switch
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for wakers in open.values() {
            wakers.read.wake();
            wakers.write.wake();
        }
    }

    /// Streams accepted and not yet dropped.
    pub(crate) fn open_streams(&self) -> usize {
        self.switch
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl<L: Listener> Listener for Severable<L> {
    type Io = SeverableStream<L::Io>;
    type Addr = L::Addr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (io, addr) = self.inner.accept().await;
        let id = self.switch.next_id.fetch_add(1, Ordering::Relaxed);
        let wakers = Arc::new(Wakers::default());
        self.switch
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::clone(&wakers));
        let stream = SeverableStream {
            inner: io,
            switch: Arc::clone(&self.switch),
            id,
            wakers,
        };
        (stream, addr)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

/// An accepted stream that fails every operation once severed.
pub(crate) struct SeverableStream<I> {
    inner: I,
    switch: Arc<Switch>,
    id: u64,
    wakers: Arc<Wakers>,
}

impl<I> Drop for SeverableStream<I> {
    fn drop(&mut self) {
        self.switch
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// The error every operation on a severed stream returns.
fn severed() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the shutdown grace period is over",
    )
}

impl<I: Unpin> SeverableStream<I> {
    /// Runs one poll of the inner stream unless severed; when it is not ready, registers the
    /// task's waker with `waker` and checks again, so a cut between the two is not missed.
    fn guarded<T>(
        &mut self,
        cx: &mut Context<'_>,
        waker: fn(&Wakers) -> &AtomicWaker,
        poll: impl FnOnce(Pin<&mut I>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if self.switch.severed.load(Ordering::SeqCst) {
            return Poll::Ready(Err(severed()));
        }
        let polled = poll(Pin::new(&mut self.inner), cx);
        if polled.is_pending() {
            waker(&self.wakers).register(cx.waker());
            if self.switch.severed.load(Ordering::SeqCst) {
                return Poll::Ready(Err(severed()));
            }
        }
        polled
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for SeverableStream<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.get_mut()
            .guarded(cx, |w| &w.read, |inner, cx| inner.poll_read(cx, buf))
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for SeverableStream<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .guarded(cx, |w| &w.write, |inner, cx| inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().guarded(
            cx,
            |w| &w.write,
            |inner, cx| inner.poll_write_vectored(cx, bufs),
        )
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut()
            .guarded(cx, |w| &w.write, |inner, cx| inner.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut()
            .guarded(cx, |w| &w.write, |inner, cx| inner.poll_shutdown(cx))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream, duplex};

    use super::*;

    /// A listener handing out the server ends of in-memory pipes, one per `accept`.
    struct Pipes(Vec<DuplexStream>);

    impl Listener for Pipes {
        type Io = DuplexStream;
        type Addr = ();

        async fn accept(&mut self) -> (DuplexStream, ()) {
            match self.0.pop() {
                Some(stream) => (stream, ()),
                None => std::future::pending().await,
            }
        }

        fn local_addr(&self) -> io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn passes_data_through_until_severed() {
        let (client, server) = duplex(64);
        let (mut listener, severer) = Severable::new(Pipes(vec![server]));
        let (mut stream, ()) = listener.accept().await;
        let mut client = client;
        client.write_all(b"ping").await.unwrap();
        let mut read = [0u8; 4];
        stream.read_exact(&mut read).await.unwrap();
        assert_eq!(&read, b"ping");
        stream.write_all(b"pong").await.unwrap();
        assert_eq!(severer.open_streams(), 1);

        severer.sever();
        let error = stream.write_all(b"more").await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::ConnectionAborted);
        drop(stream);
        assert_eq!(severer.open_streams(), 0);
    }

    #[tokio::test]
    async fn wakes_a_read_that_is_waiting_when_severed() {
        let (_client, server) = duplex(64);
        let (mut listener, severer) = Severable::new(Pipes(vec![server]));
        let (mut stream, ()) = listener.accept().await;
        // The single-threaded test runtime runs the reader until it waits, and after `sever`
        // polls it again only if it was woken.
        let (polled, was_polled) = tokio::sync::oneshot::channel();
        let reading = tokio::spawn(async move {
            let mut read = [0u8; 1];
            let mut pending = std::pin::pin!(stream.read(&mut read));
            let first = std::future::poll_fn(|cx| Poll::Ready(pending.as_mut().poll(cx))).await;
            let _ = polled.send(first.is_pending());
            pending.await
        });
        assert!(
            was_polled.await.unwrap(),
            "nothing to read yet, so the read waits"
        );
        severer.sever();
        let outcome = tokio::time::timeout(std::time::Duration::from_secs(5), reading)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            outcome.unwrap_err().kind(),
            io::ErrorKind::ConnectionAborted
        );
    }
}
