//! A guest's stdout and stderr: captured in memory, bounded, and written to the host's logs
//! after the call. A guest never reaches the host's own stdio.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

/// One captured stream. Writes past the capacity are dropped (and counted), never refused:
/// a guest that prints too much must not fail because of it.
#[derive(Clone)]
pub(crate) struct CapturedOutput {
    inner: Arc<Mutex<Captured>>,
}

#[derive(Default)]
struct Captured {
    buf: BytesMut,
    capacity: usize,
    dropped: usize,
}

impl CapturedOutput {
    pub(crate) fn new(capacity: usize) -> Self {
        CapturedOutput {
            inner: Arc::new(Mutex::new(Captured {
                capacity,
                ..Captured::default()
            })),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut c = self.lock();
        let room = c.capacity.saturating_sub(c.buf.len());
        let keep = bytes.len().min(room);
        c.buf.extend_from_slice(&bytes[..keep]);
        c.dropped += bytes.len() - keep;
    }

    /// What was kept, and how many bytes were dropped.
    pub(crate) fn take(&self) -> (Bytes, usize) {
        let mut c = self.lock();
        let dropped = std::mem::take(&mut c.dropped);
        (std::mem::take(&mut c.buf).freeze(), dropped)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Captured> {
        // A poisoned lock only means another writer panicked mid-push; the buffer is still
        // a valid byte string.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl IsTerminal for CapturedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CapturedOutput {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CapturedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CapturedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        // Always accept: overflow is dropped in `push`.
        Ok(64 << 10)
    }
}

impl tokio::io::AsyncWrite for CapturedOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.push(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_up_to_capacity_and_counts_the_rest() {
        let out = CapturedOutput::new(10);
        out.push(b"0123456");
        out.push(b"789abcdef");
        let (kept, dropped) = out.take();
        assert_eq!(&kept[..], b"0123456789");
        assert_eq!(dropped, 6);
    }
}
