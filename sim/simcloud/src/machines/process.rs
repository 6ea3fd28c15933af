//! Processes of machines: started detached in their own process group, found again through
//! pid files and `/proc`, stopped group-wide.
//!
//! A pid alone is not trusted (pids are reused): a process belongs to a machine only while
//! its command line mentions the machine's directory. That also finds a machine's processes
//! when its pid file is gone, so a delete can leave none behind.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, kill_process_group};

/// How often a wait for processes to go looks again.
const POLL: Duration = Duration::from_millis(50);

/// How long processes get to go after SIGKILL before a stop gives up on them.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// A process could not be started.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// Its log file could not be opened.
    #[error("open log {path}")]
    Log {
        /// The log file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The program could not be started.
    #[error("start {program}")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// Its pid file could not be written.
    #[error("write pid file {path}")]
    PidFile {
        /// The pid file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Starts `program args` in a process group of its own, stdin from `/dev/null`, stdout and
/// stderr appended to `log`, working directory `dir`; writes its pid to `pid_file`.
///
/// # Guarantees
///
/// The process outlives the sim: it is not killed when the sim stops, and a signal to the
/// sim's terminal group does not reach it. While the sim runs, it is reaped when it exits.
///
/// # Errors
///
/// The log cannot be opened, the program cannot start, or the pid file cannot be written
/// (the process is then killed).
pub fn spawn_detached(
    program: &Path,
    args: &[&str],
    dir: &Path,
    log: &Path,
    pid_file: &Path,
) -> Result<u32, ProcessError> {
    let open_log = || {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|source| ProcessError::Log {
                path: log.to_owned(),
                source,
            })
    };
    let (out, err) = (open_log()?, open_log()?);
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().map_err(|source| ProcessError::Spawn {
        program: program.to_owned(),
        source,
    })?;
    let pid = child.id();
    if let Err(source) = write_atomically(pid_file, format!("{pid}\n").as_bytes()) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ProcessError::PidFile {
            path: pid_file.to_owned(),
            source,
        });
    }
    // Reap it when it exits, so a dead machine does not linger as a zombie that still
    // counts as a member of its group.
    let _ = std::thread::Builder::new()
        .name(format!("reap-{pid}"))
        .spawn(move || child.wait());
    Ok(pid)
}

/// Replaces `path` with `bytes`: a temporary file beside it, renamed over it.
///
/// # Errors
///
/// Writing or renaming failed; `path` keeps its previous content.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    fs::write(&tmp, bytes)?;
    fs::rename(&tmp, path)
}

/// The pid in `pid_file`; `None` when it is absent or garbled.
pub fn read_pid(pid_file: &Path) -> Option<i32> {
    fs::read_to_string(pid_file).ok()?.trim().parse().ok()
}

/// Whether `pid` is alive and its command line mentions `dir`.
pub fn alive(pid: i32, dir: &Path) -> bool {
    let Some(dir) = dir.to_str() else {
        return false;
    };
    fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
        cmdline
            .split(|b| *b == 0)
            .any(|arg| mentions(&String::from_utf8_lossy(arg), dir))
    }) && !is_zombie(pid)
}

/// Whether `arg` names `dir` or a path below it (`/m/i-1` is not mentioned by `/m/i-10`).
fn mentions(arg: &str, dir: &str) -> bool {
    arg.match_indices(dir)
        .any(|(at, _)| matches!(arg[at + dir.len()..].chars().next(), None | Some('/')))
}

/// `(state, process group)` of `pid` from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(char, i32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything, spaces and `)` included.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, group))
}

fn is_zombie(pid: i32) -> bool {
    stat(pid).is_none_or(|(state, _)| matches!(state, 'Z' | 'X'))
}

fn all_pids() -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect()
}

/// Live (not zombie) processes whose command line mentions `dir`.
pub fn processes_mentioning(dir: &Path) -> Vec<i32> {
    let own = std::process::id() as i32;
    all_pids()
        .into_iter()
        .filter(|&pid| pid != own && alive(pid, dir))
        .collect()
}

/// Live members of process group `group`.
fn group_members(group: i32) -> usize {
    all_pids()
        .into_iter()
        .filter(|&pid| stat(pid).is_some_and(|(s, g)| g == group && !matches!(s, 'Z' | 'X')))
        .count()
}

/// Waits up to `limit` for `done`; whether it came true.
fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL);
    }
}

/// Stops the process group led by the process in `pid_file`, when that process still belongs
/// to `dir`: SIGTERM, SIGKILL after `grace`, then waits for the group to be gone. Blocks.
pub fn stop_group(pid_file: &Path, dir: &Path, grace: Duration) {
    let Some(pid) = read_pid(pid_file).filter(|&pid| pid > 1 && alive(pid, dir)) else {
        return;
    };
    let Some(group) = Pid::from_raw(pid) else {
        return;
    };
    let _ = kill_process_group(group, Signal::TERM);
    if !wait_until(grace, || group_members(pid) == 0) {
        let _ = kill_process_group(group, Signal::KILL);
        wait_until(KILL_WAIT, || group_members(pid) == 0);
    }
}

/// SIGKILLs every process that still mentions `dir` (whatever its group) and waits for them
/// to go. Blocks.
pub fn sweep(dir: &Path) {
    let found = processes_mentioning(dir);
    if found.is_empty() {
        return;
    }
    for pid in found {
        if let Some(pid) = Pid::from_raw(pid) {
            let _ = kill_process(pid, Signal::KILL);
        }
    }
    wait_until(KILL_WAIT, || processes_mentioning(dir).is_empty());
}

/// Runs `program args` to completion, its output appended to `log`, killing it after
/// `limit`. Returns its exit success, or `None` when it could not start or timed out.
pub fn run_bounded(program: &Path, args: &[&str], log: &Path, limit: Duration) -> Option<bool> {
    let open_log = || OpenOptions::new().create(true).append(true).open(log).ok();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(open_log()?)
        .stderr(open_log()?)
        .spawn()
        .ok()?;
    let mut status = None;
    wait_until(limit, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status.map(|s| s.success())
}

/// The last `lines` lines of `path` (read from at most its last 16 KiB), trimmed.
pub fn tail(path: &Path, lines: usize) -> String {
    const WINDOW: u64 = 16 * 1024;
    let mut text = String::new();
    if let Ok(mut file) = File::open(path) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = file.seek(SeekFrom::Start(len.saturating_sub(WINDOW)));
        let mut bytes = Vec::new();
        let _ = file.read_to_end(&mut bytes);
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    kept[kept.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_mentioned_only_as_itself_or_a_parent() {
        assert!(mentions("/m/i-1", "/m/i-1"));
        assert!(mentions("--data-dir=/m/i-1/var/etcd", "/m/i-1"));
        assert!(!mentions("/m/i-10", "/m/i-1"));
        assert!(mentions("/m/i-10:/m/i-1", "/m/i-1"));
    }

    #[test]
    fn a_detached_process_is_found_stopped_and_reaped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        let pid_file = root.join("p.pid");
        let script = format!("trap '' TERM; sleep 30 # {}", root.display());
        let pid = spawn_detached(
            Path::new("/bin/sh"),
            &["-c", &script],
            root,
            &root.join("log"),
            &pid_file,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_pid(&pid_file), Some(pid as i32));
        // Until the child has exec'ed, its command line is still this test's.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !alive(pid as i32, root) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(alive(pid as i32, root));
        // It ignores SIGTERM: the stop must fall back to SIGKILL.
        stop_group(&pid_file, root, Duration::from_millis(200));
        assert!(processes_mentioning(root).is_empty());
        assert_eq!(group_members(pid as i32), 0);
    }
}
