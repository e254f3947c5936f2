//! The threads of a process, from `/proc/PID/task`, and whether a process has ended.

use std::path::PathBuf;

use super::error::TargetError;

/// The thread ids of process `pid`, in ascending order.
pub fn threads(pid: i32) -> Result<Vec<i32>, TargetError> {
    let dir = PathBuf::from(format!("/proc/{pid}/task"));
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(TargetError::NoProcess(pid))
        }
        Err(source) => return Err(TargetError::Proc { path: dir, source }),
    };
    let mut tids: Vec<i32> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// Whether process `pid` has ended: it is gone, or a zombie waiting for its parent.
pub fn process_ended(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => stat
            .rfind(')')
            .and_then(|end| stat[end + 1..].split_whitespace().next())
            .is_none_or(|state| state == "Z" || state == "X"),
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_lists_its_threads_and_is_running() {
        let pid = std::process::id() as i32;
        let before = threads(pid).expect("own threads");
        assert!(before.contains(&pid), "{before:?}");
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let extra = std::thread::spawn(move || rx.recv().ok());
        let during = threads(pid).expect("own threads");
        assert!(during.len() > before.len() - 1, "{during:?}");
        drop(tx);
        extra.join().expect("thread");
        assert!(!process_ended(pid));
    }

    #[test]
    fn a_missing_process_is_named_and_has_ended() {
        // Above the largest pid_max Linux allows (2^22).
        let pid = 5_000_000;
        assert!(matches!(
            threads(pid),
            Err(TargetError::NoProcess(5_000_000))
        ));
        assert!(process_ended(pid));
    }

    #[test]
    fn a_reaped_child_has_ended_and_a_zombie_too() {
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id() as i32;
        // Not yet reaped: a zombie once it exits.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !process_ended(pid) {
            assert!(std::time::Instant::now() < deadline, "true never ended");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        child.wait().expect("reap");
        assert!(process_ended(pid));
    }
}
