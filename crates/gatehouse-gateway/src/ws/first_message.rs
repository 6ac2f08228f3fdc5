//! A bound on what a WebSocket client may send before its first message is complete.
//!
//! tungstenite takes one frame and message limit per socket, fixed when the socket is built, and
//! reserves a frame's declared length as soon as it has read the frame's header. The gateway's
//! frame limit (`maxFrameBytes`, 1 MiB by default) is meant for authenticated clients; before
//! `connect` it would let any stranger who reaches the listener make the gateway hold that much
//! per socket. So this wrapper sits beneath tungstenite and reads the frame headers (RFC 6455
//! §5.2) until the first data message has ended: once the frames so far declare more payload than
//! its bound, the read fails with [`FirstMessageTooLarge`], before that frame's header reaches
//! tungstenite and before its payload is read. Past the first message it passes bytes through
//! untouched, so an authenticated connection pays one branch per read.
//!
//! The connection reads nothing after its first message until `connect` has been answered, so
//! bounding the first message bounds everything a socket can make the gateway hold before it
//! authenticates.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The largest frame header: 2 bytes, an 8-byte extended length and a 4-byte mask.
const MAX_HEADER: usize = 14;

/// The read error once the first message declared more than the bound; the connection answers
/// it with `frame_too_large`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FirstMessageTooLarge {
    /// The payload bytes the first message's frames declared, the refused frame included.
    pub(crate) size: usize,
    /// The bound it exceeded.
    pub(crate) limit: usize,
}

impl fmt::Display for FirstMessageTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the first message declared {} bytes, over the {} allowed before `connect`",
            self.size, self.limit
        )
    }
}

impl std::error::Error for FirstMessageTooLarge {}

/// An upgraded connection whose first WebSocket message may carry at most `limit` bytes.
pub(crate) struct FirstMessageLimit<I> {
    inner: I,
    watch: Watch,
}

impl<I> FirstMessageLimit<I> {
    /// Wraps a connection whose first byte is the first byte of a client frame.
    pub(crate) fn new(inner: I, limit: usize) -> Self {
        Self {
            inner,
            watch: Watch::new(limit),
        }
    }
}

/// Where the bytes read so far leave the first message.
#[derive(Debug)]
struct Watch {
    limit: usize,
    /// Payload bytes declared by the frames read so far.
    declared: u64,
    at: At,
}

#[derive(Debug)]
enum At {
    /// Inside a frame header, of which `len` bytes were read.
    Header { bytes: [u8; MAX_HEADER], len: usize },
    /// Inside a frame's payload; `last` when the frame ends the first message.
    Payload { remaining: u64, last: bool },
    /// The first message has ended: nothing is watched any more.
    Passed,
    /// The first message went over the bound; every read fails.
    Refused(FirstMessageTooLarge),
}

impl At {
    fn header() -> Self {
        Self::Header {
            bytes: [0; MAX_HEADER],
            len: 0,
        }
    }
}

impl Watch {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            declared: 0,
            at: At::header(),
        }
    }

    /// Follows `bytes`, just read, through the frames; the refusal once they go over the bound.
    fn follow(&mut self, mut bytes: &[u8]) -> Result<(), FirstMessageTooLarge> {
        loop {
            match &mut self.at {
                At::Passed => return Ok(()),
                At::Refused(refused) => return Err(*refused),
                At::Payload { remaining: 0, last } => {
                    self.at = if *last { At::Passed } else { At::header() };
                }
                At::Payload { remaining, .. } => {
                    if bytes.is_empty() {
                        return Ok(());
                    }
                    let skip =
                        usize::try_from(*remaining).map_or(bytes.len(), |r| r.min(bytes.len()));
                    *remaining -= u64::try_from(skip).unwrap_or(*remaining);
                    bytes = &bytes[skip..];
                }
                At::Header { bytes: header, len } => {
                    let Some((&byte, rest)) = bytes.split_first() else {
                        return Ok(());
                    };
                    // A header is complete by its 14th byte, when it stops being `Header`.
                    header[*len] = byte;
                    *len += 1;
                    bytes = rest;
                    if let Some((payload, last)) = parse_header(&header[..*len]) {
                        self.declared = self.declared.saturating_add(payload);
                        let size = usize::try_from(self.declared).unwrap_or(usize::MAX);
                        if size > self.limit {
                            let refused = FirstMessageTooLarge {
                                size,
                                limit: self.limit,
                            };
                            self.at = At::Refused(refused);
                            return Err(refused);
                        }
                        self.at = At::Payload {
                            remaining: payload,
                            last,
                        };
                    }
                }
            }
        }
    }
}

/// A complete frame header's payload length, and whether the frame ends a data message (a final
/// text, binary or continuation frame; control frames may come between a message's fragments).
/// `None` while `header` is still incomplete.
fn parse_header(header: &[u8]) -> Option<(u64, bool)> {
    let (&first, rest) = header.split_first()?;
    let (&second, rest) = rest.split_first()?;
    let masked = second & 0x80 != 0;
    let extended = match second & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    let mask = if masked { 4 } else { 0 };
    if rest.len() < extended + mask {
        return None;
    }
    let payload = match extended {
        0 => u64::from(second & 0x7f),
        _ => rest[..extended]
            .iter()
            .fold(0u64, |length, &byte| (length << 8) | u64::from(byte)),
    };
    let last = first & 0x80 != 0 && first & 0x0f < 8;
    Some((payload, last))
}

impl<I: AsyncRead + Unpin> AsyncRead for FirstMessageLimit<I> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let At::Refused(refused) = this.watch.at {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, refused)));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        if matches!(this.watch.at, At::Passed) {
            return Poll::Ready(Ok(()));
        }
        match this.watch.follow(&buf.filled()[before..]) {
            Ok(()) => Poll::Ready(Ok(())),
            // The read's bytes go nowhere: the caller drops its buffer on an error.
            Err(refused) => Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, refused))),
        }
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for FirstMessageLimit<I> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
