//! Bounds for what a test waits on: a command that must end within a limit, and a watchdog
//! that ends a test process whose test has run too long, saying where it was.
//!
//! A test that hangs is worse than one that fails: it holds CI until its overall limit and
//! says nothing of where it stopped. Tests that drive processes and servers (the Kubernetes
//! mode's) bound every command they run with [`output_within`] and start a [`Watchdog`],
//! naming each wait with [`step`] so that the watchdog can say which one never ended.

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Runs `command` to its end and gives its output, as `Command::output` does, but kills it
/// once it has run `limit`.
///
/// # Panics
///
/// When it cannot be started, or when it runs past `limit`: the message names the command
/// and carries what it printed until then.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let shown = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {shown}: {e}"));
    let reader = |mut pipe: Box<dyn Read + Send>| {
        let (sender, bytes) = mpsc::channel();
        std::thread::spawn(move || {
            let mut read = Vec::new();
            let _ = pipe.read_to_end(&mut read);
            let _ = sender.send(read);
        });
        bytes
    };
    let stdout = reader(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = reader(Box::new(child.stderr.take().expect("piped stderr")));
    // What it printed, read to the end of each pipe; a process it started may keep a pipe
    // open after it ended, so the reading is bounded too.
    let printed = |bytes: mpsc::Receiver<Vec<u8>>| {
        bytes
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_default()
    };
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "{shown} did not end within {limit:?}; it printed:\n{}\n{}",
                    String::from_utf8_lossy(&printed(stdout)),
                    String::from_utf8_lossy(&printed(stderr))
                );
            }
            Err(e) => panic!("waiting for {shown}: {e}"),
        }
    };
    Output {
        status,
        stdout: printed(stdout),
        stderr: printed(stderr),
    }
}

/// What each running test (by its thread's name, the test's name) said it waits for last.
static STEPS: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());

fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("an unnamed thread")
        .to_owned()
}

/// Records what the calling test waits for now, for its [`Watchdog`] to say if it never
/// ends. Call it from the test's own thread (the body of a `#[test]` or `#[tokio::test]`).
pub fn step(what: &str) {
    STEPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(test_name(), what.to_owned());
}

/// Ends the whole test process when the test that started it is still running after its
/// limit, first writing the test's name, the limit and its last [`step`] to stderr.
///
/// Nothing else can stop a test that hangs inside its own process; aborting fails the run at
/// once instead of at CI's limit. Dropping the watchdog (at the end of the test, or while it
/// unwinds from a failure) disarms it.
#[must_use = "the watchdog is disarmed when dropped"]
pub struct Watchdog {
    disarm: Option<mpsc::Sender<()>>,
}

impl Watchdog {
    /// Arms a watchdog for the calling test.
    pub fn start(limit: Duration) -> Watchdog {
        let test = test_name();
        let (disarm, disarmed) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(RecvTimeoutError::Timeout) = disarmed.recv_timeout(limit) {
                let last = STEPS
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&test)
                    .cloned()
                    .unwrap_or_else(|| "nothing named".into());
                // Straight to the process's stderr: the test harness's capture of this
                // thread's prints would be lost with the process.
                let _ = writeln!(
                    std::io::stderr(),
                    "test {test} still running after {limit:?}, last waiting for: {last}; \
                     ending the test process"
                );
                std::process::abort();
            }
        });
        step("the test's start");
        Watchdog {
            disarm: Some(disarm),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(disarm) = self.disarm.take() {
            let _ = disarm.send(());
        }
        STEPS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&test_name());
    }
}

/// The stdout of a command that succeeded, as text.
///
/// # Panics
///
/// Naming `what`, with the command's status, stdout and stderr, unless it succeeded and its
/// stdout is UTF-8.
pub fn succeeded(what: &str, out: Output) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{what}: stdout is not UTF-8: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_that_ends_gives_its_output() {
        let out = output_within(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr, b"err\n");
    }

    #[test]
    fn a_command_past_its_limit_is_killed_and_named() {
        let failed = std::panic::catch_unwind(|| {
            output_within(
                Command::new("sh").args(["-c", "echo begun; exec sleep 600"]),
                Duration::from_millis(500),
            )
        });
        let message = *failed
            .expect_err("it ran past its limit")
            .downcast::<String>()
            .unwrap();
        assert!(message.contains("did not end within 500ms"), "{message}");
        assert!(message.contains("sleep 600"), "{message}");
        assert!(message.contains("begun"), "{message}");
    }

    /// Set in the test process that [`a_watchdog_past_its_limit_ends_the_process`] starts.
    const CHILD: &str = "CAPW_TEST_WATCHDOG_CHILD";

    #[test]
    fn a_watchdog_past_its_limit_ends_the_process() {
        if std::env::var_os(CHILD).is_some() {
            // The test process started below: a test that never ends.
            let _watchdog = Watchdog::start(Duration::from_millis(200));
            step("an answer that never comes");
            std::thread::sleep(Duration::from_secs(600));
            return;
        }
        let out = output_within(
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "bounded::tests::a_watchdog_past_its_limit_ends_the_process",
                ])
                .arg("--nocapture")
                .env(CHILD, "1"),
            Duration::from_secs(120),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains(
                "still running after 200ms, last waiting for: an answer that never comes"
            ),
            "{stderr}"
        );
    }

    #[test]
    fn a_disarmed_watchdog_never_fires() {
        let watchdog = Watchdog::start(Duration::from_millis(300));
        step("a short wait");
        drop(watchdog);
        std::thread::sleep(Duration::from_millis(600));
        assert!(!STEPS.lock().unwrap().contains_key(&test_name()));
    }
}
