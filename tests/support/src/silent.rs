//! A workload API that takes connections and never answers: the hung apiserver, or the load
//! balancer that completes the TCP handshake for a dead backend. A refused connection fails at
//! once and a black-holed one is ended by the connect timeout; only this one leaves a client
//! waiting on its own deadline, so it is the fault that proves a deadline is there.
//!
//! The workload crate's probe tests and the two modes' scenarios use it (feature `kube`, which
//! brings tokio). Self-contained (tokio and std only), so that it can become a simcloud fault
//! as it is.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Connections held open at once, at most: a client that retries in a loop cannot exhaust the
/// process's file descriptors. Past it, new connections still complete (they wait in the
/// kernel's accept backlog) and still get no answer, so a client sees no difference.
pub const MAX_HELD_CONNECTIONS: usize = 64;

/// A TCP listener on `127.0.0.1` that accepts every connection and then neither reads, writes
/// nor closes it.
///
/// # Guarantees
///
/// - Every connection to [`SilentListener::addr`] completes and then hears nothing: no bytes,
///   no FIN, no RST, whatever the client sends (plain HTTP, a TLS ClientHello).
/// - It lives at most the `lifetime` given to [`SilentListener::start`], and no longer than
///   its value: then the held connections and the port are closed, so a test that forgets it
///   leaves nothing listening.
#[derive(Debug)]
pub struct SilentListener {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

impl SilentListener {
    /// Listens on a free port of `127.0.0.1`, staying silent for `lifetime` at most.
    ///
    /// # Errors
    ///
    /// When no port can be bound.
    pub async fn start(lifetime: Duration) -> std::io::Result<Self> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = accepted.clone();
        let task = tokio::spawn(async move {
            // The listener and the held connections live as long as this future: until the
            // lifetime ends or the task is aborted, which is what closes them.
            let hold = async move {
                let mut held: Vec<TcpStream> = Vec::new();
                while held.len() < MAX_HELD_CONNECTIONS {
                    // A failed accept (out of descriptors, say) stops accepting; later
                    // connections wait in the backlog, as silent as the held ones.
                    let Ok((stream, _peer)) = listener.accept().await else {
                        break;
                    };
                    held.push(stream);
                    counted.fetch_add(1, Ordering::SeqCst);
                }
                // The listener stays open too: closed, it would refuse (RST) the backlog.
                std::future::pending::<()>().await;
            };
            // Running out the lifetime is the expected end, not an error.
            let _ = tokio::time::timeout(lifetime, hold).await;
        });
        Ok(SilentListener {
            addr,
            accepted,
            task,
        })
    }

    /// Where it listens: `127.0.0.1` and its port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections it has accepted (and held) so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for SilentListener {
    fn drop(&mut self) {
        self.task.abort();
    }
}
