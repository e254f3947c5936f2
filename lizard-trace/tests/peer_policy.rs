//! Who may connect: a client of another user is refused by default and admitted when its user or group is
//! allowed. The client is this test binary re-run as a child (`child_of_another_user`) that drops to an
//! unprivileged user (`setresgid`/`setresuid`, so the parent must be root, as CI is) before it connects
//! over an abstract socket, which has no file permissions to stop it. Where the tests do not run as root,
//! they skip with a printed reason.

mod common;

use std::process::{Command, Stdio};

use common::{unique_name, WAIT};
use lizard_trace::{Delivery, PeerPolicy, ServerConfig, SocketName, TraceClient, TraceServer};

const SOCKET_ENV: &str = "LIZARD_TRACE_PEER_SOCKET";

/// The unprivileged user and group the child becomes (`nobody`/`nogroup` on Debian).
const OTHER: u32 = 65534;

/// The child: becomes [`OTHER`], connects and sends one record. Ignored in an ordinary run, and run (with
/// `--ignored`) only by the tests below, which set its socket name; run any other way it fails.
#[test]
#[ignore = "the child process of the peer-policy tests"]
fn child_of_another_user() {
    let name = std::env::var(SOCKET_ENV).unwrap_or_else(|_| {
        panic!(
            "child_of_another_user runs only as the child of another test, which sets {SOCKET_ENV}"
        )
    });
    // SAFETY: plain system calls on this process's own credentials; the group first, while still root.
    let dropped = unsafe {
        libc::setresgid(OTHER, OTHER, OTHER) == 0 && libc::setresuid(OTHER, OTHER, OTHER) == 0
    };
    assert!(dropped, "setresuid: {}", std::io::Error::last_os_error());
    let name: SocketName = name.parse().unwrap();
    // Refused or not, the child only tries: the server's counters tell.
    if let Ok(mut client) = TraceClient::connect(&name) {
        let _ = client.record("other-user", b"from nobody");
    }
}

/// Runs the child against `name`, waits for it and returns its pid.
fn run_child(name: &SocketName) -> u32 {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_of_another_user",
            "--ignored",
            "--test-threads=1",
        ])
        .env(SOCKET_ENV, name.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "the child failed: {status}");
    child.id()
}

/// Whether this process runs as root, after saying why not.
fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        test_data::skip!(
            test_data::Fixture::Root,
            "changing to another user needs root"
        );
    }
    root
}

fn server(name: &SocketName, peers: PeerPolicy) -> TraceServer {
    let mut config = ServerConfig::with_capacity(1 << 20);
    config.peers = peers;
    TraceServer::start(name, config).unwrap()
}

#[test]
fn another_users_client_is_refused_by_default_and_the_server_goes_on() {
    if !root() {
        return;
    }
    let name = unique_name("peer-default");
    let server = server(&name, PeerPolicy::default());
    let child = run_child(&name);
    let (stats, refused) = server.wait_until(WAIT, |s| s.peers_refused == 1);
    assert!(refused, "{stats:?}");
    let account = server.ledger().get(child).copied();
    assert_eq!(
        account.map(|a| (a.connections_refused, a.stored)),
        Some((1, 0)),
        "the refused child's account: {account:?}"
    );
    assert_eq!(
        (stats.connections_accepted, stats.records_stored),
        (0, 0),
        "{stats:?}"
    );
    // The server's own user is still served.
    let mut own = TraceClient::connect(&name).unwrap();
    assert_eq!(
        own.record("own-user", b"still here").unwrap(),
        Delivery::Sent
    );
    let (stats, stored) = server.wait_until(WAIT, |s| s.records_stored == 1);
    assert!(stored, "{stats:?}");
    server.with_ring(|ring| {
        assert!(ring.iter().all(|r| r.module() == "own-user"));
    });
}

#[test]
fn another_users_client_is_admitted_when_its_user_or_group_is_allowed() {
    if !root() {
        return;
    }
    let by_uid = PeerPolicy::allowing(&[OTHER], &[]);
    let by_gid = PeerPolicy::allowing(&[], &[OTHER]);
    for (label, policy) in [
        ("uid", by_uid),
        ("gid", by_gid),
        ("anyone", PeerPolicy::anyone()),
    ] {
        let name = unique_name(&format!("peer-{label}"));
        let server = server(&name, policy);
        run_child(&name);
        let (stats, stored) = server.wait_until(WAIT, |s| s.records_stored == 1);
        assert!(stored, "{label}: {stats:?}");
        assert_eq!(stats.peers_refused, 0, "{label}: {stats:?}");
        server.with_ring(|ring| {
            let record = ring.iter().next().expect("the record");
            assert_eq!(record.module(), "other-user", "{label}");
        });
    }
}

#[test]
fn a_path_sockets_file_mode_keeps_another_user_out_before_the_server_sees_it() {
    if !root() {
        return;
    }
    for (mode, admitted) in [(0o600, false), (0o666, true)] {
        let path = std::env::temp_dir().join(format!(
            "lizard-peer-mode-{mode:o}-{}.sock",
            std::process::id()
        ));
        let name = SocketName::path(&path);
        let mut config = ServerConfig::with_capacity(1 << 20);
        // The server itself would admit anyone: only the file's mode decides here.
        config.peers = PeerPolicy::anyone();
        config.socket_mode = Some(mode);
        let server = TraceServer::start(&name, config).unwrap();
        let bits = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&path).unwrap().permissions(),
        );
        assert_eq!(bits & 0o777, mode, "the socket file's mode");
        run_child(&name);
        // The child has ended: a record it sent is already queued, so a refusal needs no long wait.
        let wait = match admitted {
            true => WAIT,
            false => std::time::Duration::from_millis(500),
        };
        let (stats, stored) = server.wait_until(wait, |s| s.records_stored == 1);
        assert_eq!(stored, admitted, "mode {mode:o}: {stats:?}");
        if !admitted {
            assert_eq!(
                (stats.connections_accepted, stats.peers_refused),
                (0, 0),
                "the kernel refused the connect: {stats:?}"
            );
            let mut own = TraceClient::connect(&name).unwrap();
            assert_eq!(own.record("own-user", b"x").unwrap(), Delivery::Sent);
            let (stats, stored) = server.wait_until(WAIT, |s| s.records_stored == 1);
            assert!(stored, "the server's own user is still served: {stats:?}");
        }
        drop(server);
        assert!(
            !path.exists(),
            "the socket file is removed when the server stops"
        );
    }
}

#[test]
fn the_policy_admits_the_servers_user_root_and_the_allowed() {
    let policy = PeerPolicy::allowing(&[10], &[20]);
    assert!(policy.admits(1000, 1000, 1000), "the server's own user");
    assert!(policy.admits(1000, 0, 0), "root");
    assert!(policy.admits(1000, 10, 99) && policy.admits(1000, 99, 20));
    assert!(!policy.admits(1000, 99, 99));
    assert!(PeerPolicy::anyone().admits(1000, 99, 99));
}
