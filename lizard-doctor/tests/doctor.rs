//! `lizard doctor`'s CPU verdicts against what this machine's kernel really answers: the checks' verdicts must
//! agree with `perf_event_open` called here directly, by a process without privileges, at every
//! `perf_event_paranoid` level the test can set (3, 2 and -1, as root; on Debian's and Android's kernels 3
//! forbids everything) and for both values of `perf_user_access` where the kernel has it (arm64, 5.17 on).
//! Where the test cannot change the settings (not root, or a read-only `/proc/sys`) it checks this machine as
//! it is and says so.

use std::os::unix::process::CommandExt;
use std::process::Command;

use lizard_doctor::{self as doctor, SourceReport, Status};

const PARANOID: &str = "/proc/sys/kernel/perf_event_paranoid";
const USER_ACCESS: &str = "/proc/sys/kernel/perf_user_access";
/// `nobody`.
const UNPRIVILEGED: u32 = 65534;

/// `perf_event_open` of a user-space counting event, called directly: `Ok` or the errno.
fn raw_open(type_: u32, config: u64, pid: i32, cpu: i32) -> Result<(), i32> {
    let mut attr = [0u64; 8];
    attr[0] = u64::from(type_) | (64u64 << 32);
    attr[1] = config;
    // disabled | exclude_kernel | exclude_hv
    attr[5] = 1 | (1 << 5) | (1 << 6);
    // SAFETY: a 64-byte attribute that lives for the call; the descriptor returned is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), pid, cpu, -1, 8) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: `fd` is the descriptor just opened, owned here.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

/// The verdicts of `report`'s probes agree with direct calls made by the same process.
fn check_probes(report: &SourceReport) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, type_, config, pid, cpu) in [
        ("software events", 1, 1, 0, -1),
        ("hardware events", 0, 0, 0, -1),
        ("whole CPUs", 1, 0, -1, 0),
    ] {
        let check = report
            .checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} check: {report:?}"));
        match raw_open(type_, config, pid, cpu) {
            Ok(()) => assert_eq!(
                check.status,
                Status::Ok,
                "{name}: the kernel opens it: {check:?}"
            ),
            Err(errno) => {
                assert_ne!(
                    check.status,
                    Status::Ok,
                    "{name}: the kernel refuses it (errno {errno}): {check:?}"
                );
                let cause = check.cause.as_deref().unwrap_or_default();
                let (expected, _) = doctor::perf_open_refusal(
                    errno,
                    std::fs::read_to_string(PARANOID)
                        .ok()
                        .and_then(|t| t.trim().parse().ok()),
                );
                assert_eq!(cause, expected, "{name}");
            }
        }
        lines.push(format!("{name}: {}", check.status));
    }
    lines
}

/// The child: checks the probes as the unprivileged user it runs as, and prints what it saw.
#[test]
#[ignore = "the child process of doctor_verdicts_follow_the_paranoid_level_and_user_access"]
fn doctor_child() {
    assert!(
        std::env::var_os("LIZARD_DOCTOR_CHILD").is_some(),
        "doctor_child runs only as the child of another test"
    );
    let report = doctor::cpu();
    // On lines of their own: libtest writes the test's name before its output.
    println!();
    for line in check_probes(&report) {
        println!("doctor> {line}");
    }
    if let Some(access) = report.checks.iter().find(|c| c.name == "perf_user_access") {
        println!("doctor> perf_user_access: {}", access.status);
    }
}

#[test]
fn this_machines_verdicts_are_what_its_kernel_answers() {
    let report = doctor::cpu();
    let lines = check_probes(&report);
    println!("doctor on this machine, as this user: {}", lines.join("; "));
}

/// Writes `value` to the sysctl file `path`, giving back the old value; `None` when it cannot.
fn set(path: &str, value: &str) -> Option<String> {
    let old = std::fs::read_to_string(path).ok()?;
    std::fs::write(path, value).ok()?;
    Some(old.trim().to_owned())
}

#[test]
fn doctor_verdicts_follow_the_paranoid_level_and_user_access() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        test_data::skip!(
            test_data::Fixture::Root,
            "setting perf_event_paranoid needs root"
        );
        return;
    }
    let Some(original) = set(
        PARANOID,
        &std::fs::read_to_string(PARANOID).unwrap_or_default(),
    ) else {
        test_data::skip!(
            test_data::Fixture::Root,
            "{PARANOID} cannot be written here (a read-only /proc/sys)"
        );
        return;
    };
    let original_access = std::fs::read_to_string(USER_ACCESS).ok();
    // The unprivileged child runs a copy of this test binary from a folder everyone may enter: the
    // checkout may sit in a folder only its owner may enter (`/root`, `mktemp -d`).
    let child_dir = std::env::temp_dir().join(format!("lizard-doctor-{}", std::process::id()));
    std::fs::create_dir_all(&child_dir).expect("child folder");
    let child_exe = child_dir.join("doctor-child");
    std::fs::copy(std::env::current_exe().unwrap(), &child_exe).expect("copy the test binary");
    for (path, mode) in [(&child_dir, 0o755), (&child_exe, 0o755)] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .expect("permissions");
    }
    let run_child = || {
        let out = Command::new(&child_exe)
            .current_dir(&child_dir)
            .args([
                "--exact",
                "doctor_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("LIZARD_DOCTOR_CHILD", "1")
            .uid(UNPRIVILEGED)
            .gid(UNPRIVILEGED)
            .output()
            .expect("run the child");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    let mut seen = Vec::new();
    for level in ["3", "2", "-1"] {
        set(PARANOID, level).expect("set perf_event_paranoid");
        let text = run_child();
        let verdicts: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("doctor> "))
            .collect();
        assert_eq!(
            verdicts
                .iter()
                .filter(|v| !v.starts_with("perf_user_access"))
                .count(),
            3,
            "{text}"
        );
        seen.push(format!("paranoid {level}: {}", verdicts.join(", ")));
        if level == "-1" {
            assert!(verdicts.contains(&"whole CPUs: ok"), "{text}");
            assert!(verdicts.contains(&"software events: ok"), "{text}");
        }
    }
    if original_access.is_some() {
        for access in ["0", "1"] {
            set(USER_ACCESS, access).expect("set perf_user_access");
            let text = run_child();
            let want = if access == "1" {
                "doctor> perf_user_access: ok"
            } else {
                "doctor> perf_user_access: warning"
            };
            assert!(
                text.lines().any(|l| l == want),
                "perf_user_access {access}: {text}"
            );
            seen.push(format!("perf_user_access {access}: agreed"));
        }
    }
    set(PARANOID, &original);
    if let Some(access) = original_access {
        set(USER_ACCESS, access.trim());
    }
    let _ = std::fs::remove_dir_all(&child_dir);
    println!("doctor as an unprivileged user: {}", seen.join("; "));
}
