//! vkcube and vkcubepp (Vulkan-Tools) on the machine's driver (Mesa's lavapipe in CI) under Xvfb, with the
//! layer enabled through `VK_LAYER_PATH` and `VK_INSTANCE_LAYERS`: the trace decodes with Perfetto's own
//! `perfetto_trace_pb2`; each frame has its one render pass, with positive times in order; its pipeline
//! statistics are what vkcube draws (12 triangles, 36 vertices); lizard's counters have a value per frame;
//! the capture document says the same and compares with another run as `lizard diff` compares.

mod common;

use common::{decode, frame_counters_ran, scratch, vulkan_ready, App, Slice, Trace};

/// The cube: 12 triangles, 36 vertices, drawn once per frame.
const VERTICES: u64 = 36;
const TRIANGLES: u64 = 12;

/// Checks a trace of `frames` frames of a cube: one render pass per frame, in order, with the cube's
/// statistics; one frame slice per present; lizard's counters per frame.
fn check_cube(trace: &Trace, frames: u64) {
    let workloads = trace.workloads();
    let passes: Vec<&Slice> = workloads
        .iter()
        .filter(|s| s.text("type") == Some("render pass"))
        .collect();
    assert_eq!(
        passes.len() as u64,
        frames,
        "one render pass per frame: {:?}",
        trace.notes()
    );
    assert_eq!(
        workloads.len(),
        passes.len(),
        "the cube has no other workload"
    );
    let mut previous_end = 0;
    for (i, pass) in passes.iter().enumerate() {
        assert_eq!(pass.uint("frame"), Some(i as u64), "frame of {pass:?}");
        assert!(pass.end > pass.begin, "a positive time: {pass:?}");
        assert!(pass.uint("gpu_ns").unwrap() > 0);
        assert!(pass.begin >= previous_end, "in order: {pass:?}");
        previous_end = pass.end;
        assert_eq!(pass.uint("draws"), Some(1));
        assert_eq!(
            pass.uint("input_assembly_vertices"),
            Some(VERTICES),
            "{pass:?}"
        );
        assert_eq!(
            pass.uint("input_assembly_primitives"),
            Some(TRIANGLES),
            "{pass:?}"
        );
        assert_eq!(
            pass.uint("vertex_shader_invocations"),
            Some(VERTICES),
            "{pass:?}"
        );
        assert!(pass.uint("fragment_shader_invocations").unwrap() > 0);
        assert_eq!(pass.text("clock"), Some("calibrated to CLOCK_MONOTONIC"));
        assert!(pass.text("render_area").unwrap().contains('x'));
    }
    let frame_slices = trace.frames();
    assert_eq!(frame_slices.len() as u64, frames, "a slice per present");
    for (i, f) in frame_slices.iter().enumerate() {
        assert_eq!(f.uint("frame"), Some(i as u64));
        assert!(f.end >= f.begin);
    }
    // Each render pass starts after its frame's work was submitted, within the run.
    let first = frame_slices[0].begin;
    let last = frame_slices.last().unwrap().end;
    assert!(passes[0].begin >= first && passes.last().unwrap().begin <= last + 1_000_000_000);
    if frame_counters_ran(trace) {
        let counters = trace.counters_under("lizard counters per frame");
        assert!(!counters.is_empty(), "lizard's counter tracks");
        let task_clock = counters
            .iter()
            .find(|(name, _)| name == "TaskClock")
            .expect("TaskClock, a software counter every Linux has");
        assert_eq!(
            task_clock.1.len() as u64,
            frames,
            "a value per frame: {:?}",
            trace.notes()
        );
        assert!(task_clock.1.iter().all(|&(_, v)| v >= 0.0));
        assert!(task_clock.1.iter().any(|&(_, v)| v > 0.0));
    }
}

/// The document's reading of `counter`.
fn reading(document: &lizard_core::capture::Capture, counter: &str) -> f64 {
    document
        .counters
        .iter()
        .find(|c| c.info.counter == counter)
        .unwrap_or_else(|| panic!("no {counter} in the document"))
        .value
        .as_ref()
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("{counter} has no value"))
}

#[test]
fn vkcube_has_one_render_pass_per_frame_with_the_cube_s_vertices() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("vkcube");
    let run = App::new("vkcube", &["--c", "300"]).run(&dir.join("cube.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    assert_eq!(trace.0["truncated_tail_bytes"], 0);
    check_cube(&trace, 300);
    let document = run.document();
    assert_eq!(reading(&document, "vk.frames"), 300.0);
    assert_eq!(reading(&document, "vk.render_pass.count"), 300.0);
    assert_eq!(
        reading(&document, "vk.render_pass.input_assembly_vertices"),
        (300 * VERTICES) as f64
    );
    assert!(reading(&document, "vk.render_pass.gpu_time") > 0.0);
    let frames = document
        .counters
        .iter()
        .find(|c| c.info.counter == "vk.frames")
        .unwrap();
    assert_eq!(frames.samples.len(), 300, "a sample per frame");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn vkcubepp_has_one_render_pass_per_frame_with_the_cube_s_vertices() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("vkcubepp");
    let run = App::new("vkcubepp", &["--c", "120"]).run(&dir.join("cube.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    check_cube(&trace, 120);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_runs_compare_counter_by_counter_as_lizard_diff_compares_them() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("diff");
    let a = App::new("vkcube", &["--c", "60"]).run(&dir.join("a.pftrace"));
    let b = App::new("vkcube", &["--c", "60"]).run(&dir.join("b.pftrace"));
    a.assert_success();
    b.assert_success();
    let changes = lizard_render::diff::compare(&a.document(), &b.document());
    let same = |name: &str| {
        let c = changes
            .iter()
            .find(|c| c.counter == name)
            .unwrap_or_else(|| panic!("{name} compared"));
        assert_eq!(c.ratio, Some(1.0), "{c:?}");
    };
    same("vk.frames");
    same("vk.render_pass.count");
    same("vk.render_pass.input_assembly_vertices");
    let time = changes
        .iter()
        .find(|c| c.counter == "vk.render_pass.gpu_time")
        .unwrap();
    assert!(time.ratio.is_some_and(|r| r > 0.0), "{time:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_frame_range_measures_those_frames_only() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("range");
    let mut app = App::new("vkcube", &["--c", "40"]);
    app.env.push(("LIZARD_VK_FRAMES", "10..20".to_owned()));
    let run = app.run(&dir.join("range.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    let frames: Vec<u64> = trace
        .workloads()
        .iter()
        .map(|s| s.uint("frame").unwrap())
        .collect();
    assert_eq!(frames, (10..20).collect::<Vec<_>>());
    let measured = trace
        .frames()
        .iter()
        .filter(|f| f.text("measured") == Some("yes"))
        .count();
    assert_eq!(measured, 10);
    if frame_counters_ran(&trace) {
        for (name, values) in trace.counters_under("lizard counters per frame") {
            assert_eq!(values.len(), 10, "{name}: one value per measured frame");
        }
    }
    let document = run.document();
    assert_eq!(reading(&document, "vk.frames"), 10.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn submit_mode_serialises_each_command_buffer_and_writes_what_it_cost() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("submit");
    let mut app = App::new("vkcube", &["--c", "60"]);
    app.env.push(("LIZARD_VK_MODE", "submit".to_owned()));
    app.env.push(("LIZARD_VK_FRAMES", "20..40".to_owned()));
    let run = app.run(&dir.join("submit.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    let passes: Vec<Slice> = trace.workloads();
    assert_eq!(passes.len(), 20);
    assert!(passes
        .iter()
        .all(|p| p.uint("input_assembly_vertices") == Some(VERTICES)));
    let windows: Vec<Slice> = trace
        .slices()
        .into_iter()
        .filter(|s| s.track.starts_with("command buffers, serialised"))
        .collect();
    assert_eq!(windows.len(), 20, "a window per command buffer");
    assert!(windows
        .iter()
        .all(|w| w.uint("layer_waits_ns").is_some_and(|n| n > 0)));
    let serialised: Vec<Slice> = trace
        .frames()
        .into_iter()
        .filter(|f| f.text("measured") == Some("yes"))
        .collect();
    assert_eq!(serialised.len(), 20);
    for f in &serialised {
        let waits = f.uint("layer_waits_ns").expect("the frame's waits");
        let without = f.uint("cpu_ns_without_layer_waits").unwrap();
        assert_eq!(without + waits, f.uint("cpu_ns").unwrap());
    }
    let notes = trace.notes();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("submit mode: mean frame time") && n.contains("not serialised")),
        "the frame time with and without: {notes:?}"
    );
    if frame_counters_ran(&trace) {
        let per_buffer = trace.counters_under("lizard counters per command buffer (submit mode)");
        let (_, values) = per_buffer
            .iter()
            .find(|(n, _)| n == "TaskClock")
            .expect("TaskClock per command buffer");
        assert_eq!(values.len(), 20);
    }
    let document = run.document();
    assert!(reading(&document, "vk.frame.layer_waits") > 0.0);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn renderpass_mode_is_refused_off_arm_s_driver_and_frame_mode_runs() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("renderpass");
    let mut app = App::new("vkcube", &["--c", "20"]);
    app.env.push(("LIZARD_VK_MODE", "renderpass".to_owned()));
    let run = app.run(&dir.join("rp.pftrace"));
    run.assert_success();
    assert!(
        run.text().contains("renderpass mode refused"),
        "{}",
        run.text()
    );
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    assert!(
        trace
            .notes()
            .iter()
            .any(|n| n.starts_with("renderpass mode refused") && n.contains("frame mode is used")),
        "{:?}",
        trace.notes()
    );
    assert_eq!(trace.workloads().len(), 20);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_queries_the_frames_and_counters_remain() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("noqueries");
    let mut app = App::new("vkcube", &["--c", "30"]);
    app.env.push(("LIZARD_VK_QUERIES", "none".to_owned()));
    let run = app.run(&dir.join("plain.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    assert!(trace.workloads().is_empty());
    assert_eq!(trace.frames().len(), 30);
    if frame_counters_ran(&trace) {
        let counters = trace.counters_under("lizard counters per frame");
        assert!(counters.iter().all(|(_, v)| v.len() == 30));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_settings_are_refused_by_name_and_the_defaults_run() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("badsettings");
    let mut app = App::new("vkcube", &["--c", "10"]);
    app.env.push(("LIZARD_VK_MODE", "fastest".to_owned()));
    app.env.push(("LIZARD_VK_FRAMES", "9..3".to_owned()));
    let run = app.run(&dir.join("bad.pftrace"));
    run.assert_success();
    let text = run.text();
    assert!(text.contains("LIZARD_VK_MODE=fastest"), "{text}");
    assert!(text.contains("LIZARD_VK_FRAMES=9..3"), "{text}");
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    assert!(trace
        .notes()
        .iter()
        .any(|n| n.contains("setting refused: LIZARD_VK_MODE=fastest")));
    assert_eq!(trace.workloads().len(), 10, "frame mode, every frame");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_failure_of_the_layer_turns_its_feature_off_and_the_application_goes_on() {
    if !vulkan_ready() {
        return;
    }
    let dir = scratch("fault");
    for (point, feature) in [
        (
            "record",
            "workload tracking turned off: vkCmdBeginRenderPass",
        ),
        ("submit", "workload timing turned off: vkQueueSubmit"),
        ("present", "frame boundaries turned off: vkQueuePresentKHR"),
    ] {
        let mut app = App::new("vkcube", &["--c", "40"]);
        app.env.push(("LIZARD_VK_FAULT", point.to_owned()));
        let run = app.run(&dir.join(format!("{point}.pftrace")));
        // The application's every call went down the chain: it rendered its 40 frames and exited 0.
        run.assert_success();
        let Some(trace) = decode(&run.trace) else {
            return;
        };
        let notes = trace.notes();
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with(feature) && n.contains("LIZARD_VK_FAULT")),
            "{point}: {notes:?}"
        );
        match point {
            // No render pass recorded: nothing timed; frames go on.
            "record" => {
                assert!(trace.workloads().is_empty());
                assert_eq!(trace.frames().len(), 40);
            }
            // The first submission's copies failed: nothing read; frames go on.
            "submit" => {
                assert!(trace.workloads().is_empty());
                assert_eq!(trace.frames().len(), 40);
            }
            // The first present's end failed: no frame written, the workloads still timed.
            _ => {
                assert!(trace.frames().is_empty());
                assert_eq!(trace.workloads().len(), 40);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
