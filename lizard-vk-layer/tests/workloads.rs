//! The crate's own `workloads` example (on `ash`) for what vkcube lacks: secondary command buffers inside
//! and outside render passes, dynamic rendering, compute, copies, a blit and a clear with their debug
//! labels, a command buffer recorded once and submitted many times through `vkQueueSubmit` and
//! `vkQueueSubmit2`, and a `SIMULTANEOUS_USE` command buffer pending twice in one batch. The application
//! checks its own results (so a layer that changed its work fails it); the trace must hold every workload
//! of every submission with its labels, draws and pipeline statistics. And the layer loaded and unloaded
//! three times in one process writes three whole traces.

mod common;

use common::{decode, scratch, vulkan_ready, workloads_example, App, Slice, Trace};

const SUBMITS: u64 = 12;

/// The workloads of `trace` with `labels` and `kind`.
fn find<'a>(workloads: &'a [Slice], kind: &str, labels: &str) -> Vec<&'a Slice> {
    workloads
        .iter()
        .filter(|s| s.text("type") == Some(kind) && s.text("labels") == Some(labels))
        .collect()
}

/// Checks a trace of one run of the example with `SUBMITS` submissions; `split`: in submit mode, where each
/// command buffer of a batch is a submission of its own.
fn check(trace: &Trace, split: bool) {
    let all = trace.workloads();
    let notes = trace.notes();
    let main = find(&all, "render pass", "frame work > main pass");
    assert_eq!(main.len() as u64, SUBMITS, "{notes:?}");
    for s in &main {
        assert_eq!(s.uint("draws"), Some(1));
        assert_eq!(s.uint("input_assembly_vertices"), Some(3), "{s:?}");
        assert_eq!(s.uint("input_assembly_primitives"), Some(1));
        assert!(s.uint("fragment_shader_invocations").unwrap() >= 64 * 64);
        assert_eq!(s.text("render_area"), Some("64x64+0+0"));
        assert_eq!(s.text("secondary"), Some("no"));
    }
    // The render pass whose contents are a secondary command buffer: its draws counted, no statistics
    // where the device lacks inheritedQueries, and the reason given.
    let with_secondary = find(&all, "render pass", "frame work");
    assert_eq!(with_secondary.len() as u64, SUBMITS);
    for s in &with_secondary {
        assert_eq!(s.uint("draws"), Some(2), "{s:?}");
        assert_eq!(s.uint("secondary_command_buffers"), Some(1));
        if s.uint("input_assembly_vertices").is_none() {
            assert!(
                s.text("note").unwrap().contains("inheritedQueries"),
                "{s:?}"
            );
        } else {
            assert_eq!(s.uint("input_assembly_vertices"), Some(6));
        }
    }
    let dynamic = find(&all, "dynamic rendering", "frame work > dynamic");
    assert_eq!(dynamic.len() as u64, SUBMITS);
    for s in &dynamic {
        assert_eq!(s.text("command"), Some("vkCmdBeginRendering"));
        assert_eq!(s.uint("input_assembly_vertices"), Some(3), "{s:?}");
    }
    let compute = find(&all, "dispatch", "frame work > compute");
    assert_eq!(compute.len() as u64, SUBMITS);
    for s in &compute {
        assert_eq!(s.uint("compute_shader_invocations"), Some(16 * 4), "{s:?}");
    }
    // The dispatch in the secondary command buffer executed outside render passes.
    let in_secondary = find(&all, "dispatch", "frame work");
    assert_eq!(in_secondary.len() as u64, SUBMITS);
    assert!(in_secondary
        .iter()
        .all(|s| s.text("secondary") == Some("yes")));
    assert_eq!(find(&all, "copy", "frame work").len() as u64, 2 * SUBMITS);
    assert_eq!(find(&all, "blit", "frame work").len() as u64, SUBMITS);
    assert_eq!(find(&all, "clear", "frame work").len() as u64, SUBMITS);
    // The SIMULTANEOUS_USE command buffer, twice in one batch: each execution timed.
    let twice = find(&all, "dispatch", "simultaneous");
    assert_eq!(twice.len(), 2, "{notes:?}");
    assert!(twice
        .iter()
        .all(|s| s.uint("compute_shader_invocations") == Some(8 * 4)));
    assert_eq!(
        twice[0].uint("submission") == twice[1].uint("submission"),
        !split,
        "one batch, split or not: {twice:?}"
    );
    assert_eq!(find(&all, "copy", "simultaneous").len(), 2);
    assert_eq!(
        all.len() as u64,
        SUBMITS * 9 + 4,
        "nothing else: {:?}",
        all.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    // Every workload has a positive time, and each queue's slices come in order.
    let mut previous_end = 0;
    for s in &all {
        assert!(s.end > s.begin, "{s:?}");
        assert!(s.begin >= previous_end, "{s:?}");
        previous_end = s.end;
    }
    // The submissions of the once-recorded command buffer: one recording, SUBMITS submissions.
    let recordings: std::collections::BTreeSet<u64> =
        main.iter().map(|s| s.uint("recording").unwrap()).collect();
    assert_eq!(recordings.len(), 1);
    let submissions: std::collections::BTreeSet<u64> =
        main.iter().map(|s| s.uint("submission").unwrap()).collect();
    assert_eq!(submissions.len() as u64, SUBMITS);
}

#[test]
fn every_workload_of_every_submission_is_timed_with_its_labels_and_statistics() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("workloads");
    let submits = SUBMITS.to_string();
    let mut app = App::new(
        workloads_example().to_string_lossy(),
        &["--submits", &submits],
    );
    app.x = false;
    let run = app.run(&dir.join("w.pftrace"));
    run.assert_success();
    assert!(run.text().contains("workloads: ok"));
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    check(&trace, false);
    // The document: counts per kind, the compute invocations, time per label.
    let document = run.document();
    let value = |name: &str| {
        document
            .counters
            .iter()
            .find(|c| c.info.counter == name)
            .and_then(|c| c.value.as_ref()?.as_f64())
            .unwrap_or_else(|| panic!("{name}"))
    };
    assert_eq!(value("vk.dispatch.count"), (2 * SUBMITS + 2) as f64);
    assert_eq!(
        value("vk.dispatch.compute_shader_invocations"),
        (SUBMITS * 64 + 2 * 32) as f64
    );
    assert_eq!(value("vk.dynamic_rendering.count"), SUBMITS as f64);
    assert!(value("vk.label.main pass.gpu_time") > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn submit_mode_splits_the_example_s_submissions_and_the_application_still_works() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("workloads-submit");
    let submits = SUBMITS.to_string();
    let mut app = App::new(
        workloads_example().to_string_lossy(),
        &["--submits", &submits],
    );
    app.x = false;
    app.env.push(("LIZARD_VK_MODE", "submit".to_owned()));
    let run = app.run(&dir.join("w.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    check(&trace, true);
    let windows = trace
        .slices()
        .into_iter()
        .filter(|s| s.track.starts_with("command buffers, serialised"))
        .count() as u64;
    // Each submission of the once-recorded command buffer, and the two of the SIMULTANEOUS_USE one.
    assert_eq!(windows, SUBMITS + 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_layer_loaded_and_unloaded_three_times_writes_three_whole_traces() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("cycles");
    let submits = SUBMITS.to_string();
    let mut app = App::new(
        workloads_example().to_string_lossy(),
        &["--submits", &submits, "--cycles", "3"],
    );
    app.x = false;
    let run = app.run(&dir.join("c-{n}.pftrace"));
    run.assert_success();
    for n in 1..=3 {
        let path = dir.join(format!("c-{n}.pftrace"));
        let Some(trace) = decode(&path) else {
            return;
        };
        check(&trace, false);
        assert!(dir.join(format!("c-{n}.json")).exists());
    }
    assert!(!dir.join("c-4.pftrace").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn renderpass_mode_forced_traps_each_workload_and_the_gpu_waits_at_each_trap() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("workloads-renderpass");
    let submits = SUBMITS.to_string();
    let mut app = App::new(
        workloads_example().to_string_lossy(),
        &["--submits", &submits],
    );
    app.x = false;
    app.env.push(("LIZARD_VK_MODE", "renderpass".to_owned()));
    // lavapipe is not Arm's driver: the mechanism is forced, to be tested (it happens to wait for
    // host-set events there too).
    app.env
        .push(("LIZARD_VK_RENDERPASS_ANY_DRIVER", "1".to_owned()));
    let run = app.run(&dir.join("rp.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    check(&trace, true);
    assert!(trace
        .notes()
        .iter()
        .any(|n| n.starts_with("renderpass mode forced")));
    // Every workload of a primary command buffer has its window between traps (the secondary's dispatch
    // runs inside the window of the workload after it).
    let windows: Vec<Slice> = trace
        .slices()
        .into_iter()
        .filter(|s| s.track.starts_with("workloads, trapped"))
        .collect();
    let primary: Vec<Slice> = trace
        .workloads()
        .into_iter()
        .filter(|s| s.text("secondary") == Some("no"))
        .collect();
    assert_eq!(windows.len() as u64, SUBMITS * 8 + 4);
    assert_eq!(windows.len(), primary.len());
    for (window, workload) in windows.iter().zip(&primary) {
        assert_eq!(window.text("type"), workload.text("type"));
        assert_eq!(window.name, workload.name);
        // The GPU waited at the trap before: the workload began after the host let it go.
        assert!(
            workload.begin >= window.begin,
            "{workload:?} began before the trap before it was released: {window:?}"
        );
    }
    if common::frame_counters_ran(&trace) {
        let per_workload = trace.counters_under("lizard counters per workload (renderpass mode)");
        let (_, values) = per_workload
            .iter()
            .find(|(n, _)| n == "TaskClock")
            .expect("TaskClock per workload");
        assert_eq!(values.len(), windows.len());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
