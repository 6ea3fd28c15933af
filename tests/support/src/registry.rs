//! A real OCI registry for tests: Debian's `docker-registry` (the CNCF distribution
//! registry), started on a free loopback port with its storage in a temporary directory, and
//! killed when dropped.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The registry binary (`apt-get install docker-registry`; `make test-deps-oci` does it).
pub const REGISTRY_BIN: &str = "/usr/bin/docker-registry";

/// How long the registry may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// A running registry; stopped on drop.
pub struct TestRegistry {
    child: Option<Child>,
    addr: SocketAddr,
    dir: tempfile::TempDir,
}

impl TestRegistry {
    /// A registry anyone may push to and pull from.
    ///
    /// # Panics
    ///
    /// When it cannot be started, with its log.
    pub fn start() -> Self {
        Self::spawn(None)
    }

    /// A registry that asks for HTTP basic authentication (htpasswd, bcrypt) as `user`.
    ///
    /// # Panics
    ///
    /// When `htpasswd` fails or the registry cannot be started.
    pub fn start_with_user(user: &str, password: &str) -> Self {
        Self::spawn(Some((user, password)))
    }

    fn spawn(user: Option<(&str, &str)>) -> Self {
        assert!(
            Path::new(REGISTRY_BIN).exists(),
            "{REGISTRY_BIN} missing: run `make test-deps-oci` (apt-get install docker-registry apache2-utils)"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let auth = match user {
            None => String::new(),
            Some((user, password)) => {
                let out = Command::new("htpasswd")
                    .args(["-Bbn", user, password])
                    .output()
                    .expect("htpasswd (apt-get install apache2-utils)");
                assert!(out.status.success(), "htpasswd failed");
                let file = dir.path().join("htpasswd");
                std::fs::write(&file, out.stdout).expect("write htpasswd");
                format!(
                    "auth:\n  htpasswd:\n    realm: capw-test\n    path: {}\n",
                    file.display()
                )
            }
        };
        let storage = dir.path().join("storage");
        let config = format!(
            "version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n\
             storage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\n\
             http:\n  addr: {addr}\n{auth}",
            storage.display()
        );
        let config_file = dir.path().join("config.yml");
        std::fs::write(&config_file, config).expect("write registry config");
        let log = std::fs::File::create(dir.path().join("registry.log")).expect("log file");
        let child = Command::new(REGISTRY_BIN)
            .arg("serve")
            .arg(&config_file)
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .expect("start docker-registry");
        let mut registry = TestRegistry {
            child: Some(child),
            addr,
            dir,
        };
        registry.wait_ready();
        registry
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || started.elapsed() > START_TIMEOUT {
                panic!(
                    "docker-registry did not start on {} ({exited:?}); log:\n{}",
                    self.addr,
                    std::fs::read_to_string(self.log_path()).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `127.0.0.1:<port>`: the registry part of references.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Its log file.
    pub fn log_path(&self) -> PathBuf {
        self.dir.path().join("registry.log")
    }

    /// Stops it now (the port then refuses connections).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for TestRegistry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A loopback port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free loopback port")
}
