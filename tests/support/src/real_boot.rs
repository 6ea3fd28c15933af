//! What tests of the real boot share: where the Kubernetes binaries are, a guard that tears
//! a cloud's machines down, and the processes a directory's machines left behind.

use std::path::{Path, PathBuf};

/// The Kubernetes versions `tests/kube-env` builds, oldest first: the quickstart runs the
/// first, upgrades go to the second.
pub const KUBE_VERSIONS: [&str; 2] = ["v1.34.4", "v1.35.4"];

/// The root of the Kubernetes binaries: `$CAPW_KUBE_BINARIES`, else `$CAPW_KUBE_ENV_CACHE`,
/// else `~/.cache/capw-kube-env` (where `make kube-env` builds them).
///
/// # Panics
///
/// When `<root>/<version>/bin/capw-node` is missing for a version of [`KUBE_VERSIONS`], with
/// how to build them: these tests run the real binaries, never a stand-in.
pub fn kube_binaries() -> PathBuf {
    let root = ["CAPW_KUBE_BINARIES", "CAPW_KUBE_ENV_CACHE"]
        .iter()
        .find_map(std::env::var_os)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let home = std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_default();
            home.join(".cache/capw-kube-env")
        });
    for version in KUBE_VERSIONS {
        let needed = root.join(version).join("bin").join("capw-node");
        assert!(
            needed.is_file(),
            "this test runs the real Kubernetes binaries, and {} is missing: build them with \
             `make kube-env` (`make test` does), or set CAPW_KUBE_BINARIES to the root holding \
             <version>/bin",
            needed.display()
        );
    }
    root
}

/// Destroys every machine under its directory when dropped, so that a failing test leaves
/// no process behind.
pub struct MachinesGuard(pub PathBuf);

impl Drop for MachinesGuard {
    fn drop(&mut self) {
        if let Err(e) = capw_simcloud::machines::destroy_all(&self.0) {
            eprintln!(
                "destroying the machines in {}: {}",
                self.0.display(),
                capw_simcloud::error_chain(&e)
            );
        }
    }
}

/// The command lines of the processes that mention `dir` (every process of a machine names
/// its directory).
pub fn processes_naming(dir: &Path) -> Vec<String> {
    let dir = dir.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&dir))
        .collect()
}

/// etcd's own client (`etcdctl`) for a cluster's etcd, holding a client certificate minted
/// from the etcd CA of the cluster's Secret (items `etcd/ca.crt` and `etcd/ca.key`), as an admin
/// with that Secret would mint one: `openssl` makes the key and signs the certificate. Nothing
/// of a machine's own directory is used, so a member list that answers shows that the
/// cluster's etcd trusts the CA the host stored.
pub struct EtcdClient {
    dir: tempfile::TempDir,
}

impl EtcdClient {
    /// A client from the items of the cluster's Secret.
    ///
    /// # Panics
    ///
    /// When an item is missing or `openssl` refuses, with its output.
    pub fn from_secret_items(items: &[(String, Vec<u8>)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        for (item, file) in [("etcd/ca.crt", "ca.crt"), ("etcd/ca.key", "ca.key")] {
            let (_, bytes) = items
                .iter()
                .find(|(name, _)| name == item)
                .unwrap_or_else(|| panic!("the cluster's Secret has no `{item}`"));
            std::fs::write(dir.path().join(file), bytes).unwrap();
        }
        std::fs::write(
            dir.path().join("client.ext"),
            "keyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth\n",
        )
        .unwrap();
        let openssl = |args: &str| {
            let args: Vec<&str> = args.split_whitespace().collect();
            crate::output_ok(
                std::process::Command::new("openssl")
                    .current_dir(dir.path())
                    .args(&args),
                &format!("openssl {args:?}"),
            )
        };
        openssl(
            "req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
             -subj /CN=capw-test-etcd-client -keyout client.key -out client.csr",
        );
        openssl(
            "x509 -req -in client.csr -CA ca.crt -CAkey ca.key -set_serial 1 -days 1 \
             -extfile client.ext -out client.crt",
        );
        EtcdClient { dir }
    }

    /// The names of the members, asked of the etcd at `address` (port 2379).
    ///
    /// # Panics
    ///
    /// When etcdctl fails, with its output.
    pub fn members(&self, address: &str) -> Vec<String> {
        self.member_list(address)
            .into_iter()
            .map(|m| m.name)
            .collect()
    }

    /// The members (name, peer URLs, id), asked of the etcd at `address` (port 2379).
    ///
    /// # Panics
    ///
    /// When etcdctl fails, with its output.
    pub fn member_list(&self, address: &str) -> Vec<EtcdMemberEntry> {
        let out = self.etcdctl(address, &["member", "list", "-w", "simple"]);
        // `id, status, name, peer URLs, client URLs, is learner`
        String::from_utf8_lossy(&out)
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(", ").collect();
                Some(EtcdMemberEntry {
                    id: f.first()?.to_string(),
                    name: f.get(2)?.to_string(),
                    peer_urls: f.get(3)?.split(',').map(str::to_owned).collect(),
                })
            })
            .collect()
    }

    /// Adds a member that never starts (`name` at `peer_url`), as a machine that died after
    /// `member add` leaves one behind.
    ///
    /// # Panics
    ///
    /// When etcdctl fails for a minute, with its output. etcd refuses a change of membership
    /// while a member joined less than five seconds ago ("unhealthy cluster"): that is
    /// retried.
    pub fn add_member(&self, address: &str, name: &str, peer_url: &str) {
        let peer = format!("--peer-urls={peer_url}");
        let args = ["member", "add", name, &peer];
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            let out = self.command(address, &args).output().unwrap();
            if out.status.success() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
        self.etcdctl(address, &args);
    }

    fn command(&self, address: &str, args: &[&str]) -> std::process::Command {
        let file = |name: &str| self.dir.path().join(name).display().to_string();
        let bin = kube_binaries().join(KUBE_VERSIONS[0]).join("bin/etcdctl");
        let mut c = std::process::Command::new(bin);
        c.arg(format!("--endpoints=https://{address}:2379"))
            .arg(format!("--cacert={}", file("ca.crt")))
            .arg(format!("--cert={}", file("client.crt")))
            .arg(format!("--key={}", file("client.key")))
            .args(args);
        c
    }

    fn etcdctl(&self, address: &str, args: &[&str]) -> Vec<u8> {
        crate::output_ok(
            &mut self.command(address, args),
            &format!("etcdctl {args:?} through {address}"),
        )
    }
}

/// One etcd member as `etcdctl member list` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMemberEntry {
    /// Its id, in hex.
    pub id: String,
    /// Its name; empty for a member that never started.
    pub name: String,
    pub peer_urls: Vec<String>,
}

/// The TCP sockets listening on any of `addresses` (IPv4), as `address:port`, read from
/// `/proc/net/tcp`.
pub fn listening_on(addresses: &[std::net::Ipv4Addr]) -> Vec<String> {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return Vec::new();
    };
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is fields[1] (`0100007F:1F90`, little-endian), st fields[3].
            if fields.get(3) != Some(&"0A") {
                return None;
            }
            let (ip, port) = fields.get(1)?.split_once(':')?;
            let ip = std::net::Ipv4Addr::from(u32::from_be(u32::from_str_radix(ip, 16).ok()?));
            let port = u16::from_str_radix(port, 16).ok()?;
            addresses.contains(&ip).then(|| format!("{ip}:{port}"))
        })
        .collect()
}

/// SIGKILLs the processes whose command line mentions `dir` and names `program` (say, every
/// kube-apiserver of one machine directory); returns how many.
pub fn kill_processes(dir: &Path, program: &str) -> usize {
    let dir = dir.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut killed = 0;
    for entry in entries.filter_map(|e| e.ok()) {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let first = cmdline.split(' ').next().unwrap_or_default();
        if cmdline.contains(&dir) && first.ends_with(program) {
            let status = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            killed += usize::from(status.is_ok_and(|s| s.success()));
        }
    }
    killed
}
