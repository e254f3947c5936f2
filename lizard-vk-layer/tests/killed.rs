//! Applications that end without `vkDestroyInstance`: vkcube killed by SIGKILL in the middle of its run
//! leaves a trace that decodes (Perfetto's own module) up to its last completed frame, each frame with
//! its render pass; and the `workloads` example, exiting without destroying anything, leaves every
//! workload it ran in the trace.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{decode, scratch, vulkan_ready, workloads_example, App};

/// The frames `trace` holds, checked to be whole: frames 0..n in order, each with the cube's render pass.
fn whole_frames(trace: &common::Trace) -> u64 {
    let frames = trace.frames();
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(
            f.uint("frame"),
            Some(i as u64),
            "frames in order, none missing"
        );
    }
    let passes: Vec<u64> = trace
        .workloads()
        .iter()
        .map(|s| s.uint("frame").unwrap())
        .collect();
    for f in 0..frames.len() as u64 {
        assert!(
            passes.contains(&f),
            "frame {f} was written without its render pass"
        );
    }
    frames.len() as u64
}

#[test]
fn vkcube_killed_mid_run_leaves_a_trace_whole_up_to_its_last_frame() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("killed");
    let trace_path = dir.join("killed.pftrace");
    let pid_file = dir.join("vkcube.pid");
    // The shell writes its own pid and becomes vkcube, so the pid is vkcube's.
    let script = format!(
        "echo $$ > '{}'; exec vkcube --c 1000000",
        pid_file.display()
    );
    let app = App::new("sh", &["-c", &script]);
    let mut child = app
        .command(&trace_path)
        .spawn()
        .expect("timeout, xvfb-run and vkcube start");
    // Wait until the trace holds a good many frames (a few hundred bytes each), at most 60 s.
    let deadline = Instant::now() + Duration::from_secs(60);
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    while size(&trace_path) < 60_000 && Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("vkcube ended before it was killed: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .expect("vkcube's pid")
        .trim()
        .parse()
        .expect("a pid");
    // SAFETY: sends SIGKILL to vkcube, a process this test started (its pid read from the file its
    // shell wrote before becoming vkcube).
    let killed = unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_eq!(killed, 0, "kill: {}", std::io::Error::last_os_error());
    // xvfb-run ends once vkcube is gone; `timeout` bounds it anyway.
    let status = child.wait().expect("xvfb-run ends");
    assert!(!status.success(), "vkcube was killed");
    let Some(trace) = decode(&trace_path) else {
        return;
    };
    let frames = whole_frames(&trace);
    assert!(frames >= 50, "{frames} frames before the kill");
    // The trace was cut where the application died, not closed: no closing notes, and the worker's
    // writes are whole packets (a packet cut by the kill would show as a truncated tail, which the
    // decoder reports rather than misreads).
    assert!(trace.0["truncated_tail_bytes"].as_u64().unwrap() < 1 << 20);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_application_exiting_without_destroying_its_instance_leaves_its_workloads() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("no-destroy");
    let mut app = App::new(
        workloads_example().to_string_lossy(),
        &["--submits", "5", "--exit-without-destroy"],
    );
    app.x = false;
    let run = app.run(&dir.join("exit.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    assert_eq!(trace.workloads().len(), 5 * 9 + 4, "{:?}", trace.notes());
    let _ = std::fs::remove_dir_all(&dir);
}
