//! kubeadm as the judge of a machine's kubeadm documents: `kubeadm config validate` of the
//! machine's Kubernetes version, which refuses what `kubeadm init|join` would refuse
//! (unknown fields, malformed tokens, invalid subnets...).

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::redact::redact;

/// How long a validation may take; it takes a tenth of a second.
const LIMIT: Duration = Duration::from_secs(30);

/// Longest refusal kept, in characters.
const MAX_MESSAGE: usize = 1500;

/// kubeadm did not accept the configuration.
#[derive(Debug, thiserror::Error)]
pub enum KubeadmError {
    /// kubeadm refused it.
    #[error("kubeadm refused the configuration: {message}")]
    Refused {
        /// What kubeadm said, trimmed, secrets hidden.
        message: String,
    },
    /// kubeadm could not be run.
    #[error("run {program}")]
    Run {
        /// The kubeadm binary.
        program: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// kubeadm did not finish in time.
    #[error("kubeadm config validate did not finish within {}s", LIMIT.as_secs())]
    TimedOut,
}

/// Runs `BIN/kubeadm config validate --config CONFIG`. Blocks.
///
/// # Errors
///
/// [`KubeadmError::Refused`] with kubeadm's message, every string of `secrets` replaced;
/// or kubeadm could not run or hung.
pub fn validate(bin: &Path, config: &Path, secrets: &[String]) -> Result<(), KubeadmError> {
    let program = bin.join("kubeadm");
    let run_error = |source| KubeadmError::Run {
        program: program.clone(),
        source,
    };
    let mut child = Command::new(&program)
        .arg("config")
        .arg("validate")
        .arg("--config")
        .arg(config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(run_error)?;
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().map_err(run_error)?.is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(KubeadmError::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its output is a few lines: it fits the pipes, so reading after the exit cannot block.
    let output = child.wait_with_output().map_err(run_error)?;
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    Err(KubeadmError::Refused {
        message: refusal(&text, secrets),
    })
}

/// kubeadm's message without its boilerplate, on one line, secrets hidden, bounded.
fn refusal(text: &str, secrets: &[String]) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("To see the stack trace"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect();
    let message = redact(&lines.join("; "), secrets);
    if message.is_empty() {
        return "it exited with an error and said nothing".into();
    }
    let mut kept: String = message.chars().take(MAX_MESSAGE).collect();
    if kept.len() < message.len() {
        kept.push('…');
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_keeps_the_message_and_hides_the_token() {
        let text = "error: the bootstrap token \"abcdefX0123456789abcdef\" was not of the form\nTo see the stack trace of this error execute with --v=5 or higher\n";
        let message = refusal(text, &["abcdefX0123456789abcdef".into()]);
        assert_eq!(
            message,
            "the bootstrap token \"<redacted>\" was not of the form"
        );
    }
}
