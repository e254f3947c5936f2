//! The layer beside other layers. With the Khronos validation layer after it (so that validation sees
//! every command the layer adds), with synchronization validation on: vkcube, vkcubepp and the
//! `workloads` example in both modes give no validation message; the example's deliberately invalid
//! submission does give one, so a message would be seen. And beside MangoHud's layer, which draws its
//! overlay at each present: vkcube runs and every frame's cube is there.

mod common;

use common::{
    decode, layer_dir, scratch, validation_ready, vulkan_ready, workloads_example, App, Run, LAYER,
    VALIDATION,
};
use test_data::Fixture;

/// Ours first, validation below it.
fn with_validation<'a>(mut app: App<'a>, layers: &'a str) -> App<'a> {
    app.layers = layers;
    app.env.push((
        "VK_LAYER_PATH",
        format!(
            "{}:/usr/share/vulkan/explicit_layer.d",
            layer_dir().display()
        ),
    ));
    app.env.push((
        "VK_LAYER_ENABLES",
        "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT".to_owned(),
    ));
    app
}

/// The validation messages in a run's output.
fn messages(run: &Run) -> Vec<String> {
    run.text()
        .lines()
        .filter(|l| {
            l.contains("Validation Error")
                || l.contains("Validation Warning")
                || l.contains("VUID-")
                || l.contains("SYNC-HAZARD")
        })
        .map(str::to_owned)
        .collect()
}

fn layers() -> String {
    format!("{LAYER}:{VALIDATION}")
}

#[test]
fn validation_sees_no_message_caused_by_the_layer_in_vkcube_and_vkcubepp() {
    if !vulkan_ready() || !validation_ready() {
        return;
    }
    let dir = scratch("validation-cubes");
    let layers = layers();
    for (program, frames) in [("vkcube", 60), ("vkcubepp", 60)] {
        let f = frames.to_string();
        let run = with_validation(App::new(program, &["--c", &f]), &layers)
            .run(&dir.join(format!("{program}.pftrace")));
        run.assert_success();
        assert_eq!(messages(&run), Vec::<String>::new(), "{program}");
        let Some(trace) = decode(&run.trace) else {
            return;
        };
        assert_eq!(
            trace.workloads().len(),
            frames,
            "{program}: {:?}",
            trace.notes()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validation_sees_no_message_caused_by_the_layer_in_the_workloads_example() {
    if !vulkan_ready() || !validation_ready() {
        return;
    }
    let dir = scratch("validation-workloads");
    let layers = layers();
    let example = workloads_example();
    for mode in ["frame", "submit"] {
        let mut app = App::new(example.to_string_lossy(), &["--submits", "6"]);
        app.x = false;
        app.env.push(("LIZARD_VK_MODE", mode.to_owned()));
        let run = with_validation(app, &layers).run(&dir.join(format!("{mode}.pftrace")));
        run.assert_success();
        assert_eq!(messages(&run), Vec::<String>::new(), "{mode} mode");
        let Some(trace) = decode(&run.trace) else {
            return;
        };
        assert_eq!(trace.workloads().len(), 6 * 9 + 4, "{mode} mode");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_invalid_submission_of_the_application_is_reported_so_a_message_would_be_seen() {
    if !vulkan_ready() || !validation_ready() {
        return;
    }
    let dir = scratch("validation-invalid");
    let layers = layers();
    let mut app = App::new(
        workloads_example().to_string_lossy(),
        &["--submits", "2", "--invalid"],
    );
    app.x = false;
    let run = with_validation(app, &layers).run(&dir.join("invalid.pftrace"));
    let found = messages(&run);
    assert!(
        found
            .iter()
            .any(|m| m.contains("VUID-vkQueueSubmit-pCommandBuffers-00071")),
        "the validation layer reports the application's own error: {}",
        run.text()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn beside_mangohud_every_frame_s_cube_is_timed() {
    if !vulkan_ready() {
        return;
    }
    if !std::path::Path::new("/usr/share/vulkan/implicit_layer.d/MangoHud.json").exists() {
        test_data::skip!(
            Fixture::MangoHud,
            "MangoHud is not installed (Debian: mangohud)"
        );
        return;
    }
    let dir = scratch("mangohud");
    let mut app = App::new("vkcube", &["--c", "60"]);
    app.env.push(("MANGOHUD", "1".to_owned()));
    let run = app.run(&dir.join("hud.pftrace"));
    run.assert_success();
    let Some(trace) = decode(&run.trace) else {
        return;
    };
    let cubes: Vec<u64> = trace
        .workloads()
        .iter()
        .filter(|s| s.uint("input_assembly_vertices") == Some(36))
        .map(|s| s.uint("frame").unwrap())
        .collect();
    assert_eq!(cubes, (0..60).collect::<Vec<_>>(), "{:?}", trace.notes());
    assert_eq!(trace.frames().len(), 60);
    let _ = std::fs::remove_dir_all(&dir);
}
