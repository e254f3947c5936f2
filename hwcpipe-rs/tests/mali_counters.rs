//! Every counter of Arm's database, per GPU: each hardware counter resolves to one block and index of the
//! GPU's layout, each equation parses and every derived counter is computed; with distinct values injected
//! in every block and counter, the values equal what an independent evaluator of the database's own
//! equations (`tests/reference/mali_equations.py`, Python's expression evaluator over the XML) computes.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use hwcpipe::gpu::dump::BlockSums;
use hwcpipe::gpu::tables::arm_spec::SPEC_LAYOUTS;
use hwcpipe::gpu::tables::BlockKind;
use hwcpipe::gpu::{CounterSource, MaliConstants, MaliCounters, MaliUnavailable, MaliValues};

/// Distinct values in every block kind and index: no two counters of a GPU read the same number.
fn injected() -> BlockSums {
    let mut sums = BlockSums::default();
    for kind in BlockKind::ALL {
        let base = 1_000_000 * (kind.index() as u64 + 1);
        sums.add_block(kind, (0..128u64).map(|i| base + 7919 * i));
    }
    sums
}

const CONSTANTS: MaliConstants = MaliConstants {
    shader_cores: 10,
    l2_slices: 4,
    ext_bus_bytes: 16,
    time_span_s: 0.5,
};

#[test]
fn every_database_counter_of_every_gpu_is_resolved_and_computed() {
    let mut lines = Vec::new();
    for layout in SPEC_LAYOUTS {
        let catalog = MaliCounters::for_layout(layout, layout.values_per_block as usize);
        let unavailable: Vec<_> = catalog
            .iter()
            .filter_map(|(_, c)| c.availability.as_ref().err().map(|e| (c.name(), e.clone())))
            .collect();
        assert!(unavailable.is_empty(), "{}: {unavailable:?}", layout.gpu);
        let hardware = catalog.iter().filter(|(_, c)| c.is_hardware()).count();
        lines.push(format!(
            "{}: {} counters ({hardware} hardware, {} derived)",
            layout.gpu,
            catalog.len(),
            catalog.len() - hardware
        ));
        let mut values = MaliValues::default();
        catalog.evaluate(&injected(), &CONSTANTS, &mut values);
        for (id, info) in catalog.iter() {
            let value = values.get(id);
            assert!(value.is_some(), "{} {}", layout.gpu, info.name());
            if let CounterSource::Hardware { block, index, .. } = info.source {
                assert_eq!(value, Some(Ok(injected().get(block, index) as f64)));
            }
        }
    }
    println!("{}", lines.join("\n"));
    let g78 = MaliCounters::for_layout(
        SPEC_LAYOUTS.iter().find(|l| l.gpu == "Mali-G78").unwrap(),
        64,
    );
    assert_eq!(g78.len(), 256);
}

#[test]
fn the_values_equal_an_independent_evaluation_of_the_database() {
    let Some(db) = test_data::path("libgpucounters-spec/database") else {
        return;
    };
    if Command::new("python3").arg("--version").output().is_err() {
        test_data::skip!(test_data::Fixture::Python3, "python3 is not installed");
        return;
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/mali_equations.py"
    );
    let mut checked = Vec::new();
    for layout in SPEC_LAYOUTS {
        let catalog = MaliCounters::for_layout(layout, layout.values_per_block as usize);
        let sums = injected();
        let hardware: BTreeMap<&str, f64> = catalog
            .iter()
            .filter_map(|(_, c)| match c.source {
                CounterSource::Hardware { block, index, .. } => {
                    Some((c.name(), sums.get(block, index) as f64))
                }
                CounterSource::Derived { .. } => None,
            })
            .collect();
        let input = serde_json_like(&hardware);
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&db)
            .arg(layout.gpu)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", layout.gpu);
        let reference = parse_flat_json(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(reference.len(), catalog.len(), "{}", layout.gpu);
        let mut values = MaliValues::default();
        catalog.evaluate(&sums, &CONSTANTS, &mut values);
        for (id, info) in catalog.iter() {
            let want = reference[info.name()];
            let got = values.get(id).unwrap().ok();
            match (got, want) {
                (Some(g), Some(w)) => assert!(
                    (g - w).abs() <= 1e-9 * w.abs().max(1.0),
                    "{} {}: {g} vs {w}",
                    layout.gpu,
                    info.name()
                ),
                _ => assert_eq!(got, want, "{} {}", layout.gpu, info.name()),
            }
        }
        checked.push(format!("{} {}", layout.gpu, catalog.len()));
    }
    println!("checked against the reference: {}", checked.join(", "));
}

/// The evaluator's input document: the hardware values and the constants.
fn serde_json_like(hardware: &BTreeMap<&str, f64>) -> String {
    let hw: Vec<String> = hardware
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    format!(
        "{{\"hardware\": {{{}}}, \"constants\": {{\"MALI_CONFIG_SHADER_CORE_COUNT\": {}, \
         \"MALI_CONFIG_L2_CACHE_COUNT\": {}, \"MALI_CONFIG_EXT_BUS_BYTE_SIZE\": {}, \
         \"MALI_CONFIG_TIME_SPAN\": {}}}}}",
        hw.join(", "),
        CONSTANTS.shader_cores,
        CONSTANTS.l2_slices,
        CONSTANTS.ext_bus_bytes,
        CONSTANTS.time_span_s
    )
}

/// Parses the evaluator's flat `{"name": number or null, ...}`.
fn parse_flat_json(text: &str) -> BTreeMap<String, Option<f64>> {
    let body = text.trim().trim_start_matches('{').trim_end_matches('}');
    body.split(", \"")
        .filter(|s| !s.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once("\": ").unwrap();
            let v = v.trim();
            (
                k.trim_matches('"').to_owned(),
                (v != "null").then(|| v.parse().unwrap()),
            )
        })
        .collect()
}

#[test]
fn a_counter_the_driver_block_cannot_hold_is_unavailable_with_the_reason() {
    // Mali-G715 counts 128 values per block; a driver dumping 64 cannot give the upper half.
    let g715 = SPEC_LAYOUTS.iter().find(|l| l.gpu == "Mali-G715").unwrap();
    let catalog = MaliCounters::for_layout(g715, 64);
    let outside: Vec<_> = catalog
        .iter()
        .filter(|(_, c)| {
            matches!(
                c.availability,
                Err(MaliUnavailable::OutsideDriverBlock { .. })
            )
        })
        .collect();
    assert!(!outside.is_empty());
    // A derived counter over one of them says which input it lacks.
    assert!(catalog.iter().any(|(_, c)| matches!(
        c.availability,
        Err(MaliUnavailable::InputUnavailable { .. })
    )));
    // And the erratum of the G715 generation is said.
    let active = catalog.by_name("MaliGPUActiveCy").unwrap();
    assert!(catalog
        .info(active)
        .unwrap()
        .caveat
        .unwrap()
        .contains("#81"));
}

#[test]
fn fpk_kill_goes_negative_where_unsigned_arithmetic_wraps() {
    // libGPUCounters#93 on a Mali-G710: rasterized quads less the early-ZS-killed and shaded ones came out
    // as 13905622581249048576. Counters read a little apart can make the difference negative: it is kept
    // negative, as Arm's library computes it in floating point, so that it can be seen (the engine marks it
    // implausible) rather than hidden as 0.
    let g710 = SPEC_LAYOUTS.iter().find(|l| l.gpu == "Mali-G710").unwrap();
    let catalog = MaliCounters::for_layout(g710, 64);
    let id = |name| catalog.by_name(name).unwrap();
    let at = |name| match catalog.info(id(name)).unwrap().source {
        CounterSource::Hardware { block, index, .. } => (block, index),
        CounterSource::Derived { .. } => panic!("{name} is derived"),
    };
    let mut sums = BlockSums::default();
    let mut core = [0u64; 128];
    for (name, value) in [
        ("MaliFragRastQd", 1000),
        ("MaliFragEZSKillQd", 400),
        // Shaded quads are derived there: warps × the warp size (16) / 4 quads.
        ("MaliFragWarp", 175),
    ] {
        let (block, index) = at(name);
        assert_eq!(block, BlockKind::ShaderCore);
        core[index as usize] = value;
    }
    sums.add_block(BlockKind::ShaderCore, core.into_iter());
    let mut values = MaliValues::default();
    catalog.evaluate(&sums, &CONSTANTS, &mut values);
    assert_eq!(values.get(id("MaliFragShadedQd")), Some(Ok(700.0)));
    // 1000 - 400 - 700 is below zero: -100, not 2^64 - 100 and not a silent 0.
    assert_eq!(values.get(id("MaliFragFPKKillQd")), Some(Ok(-100.0)));
    assert_eq!(values.get(id("MaliFragFPKKillRate")), Some(Ok(-10.0)));
}

#[test]
fn the_generated_table_is_what_the_generator_makes_of_the_database() {
    let Some(db) = test_data::path("libgpucounters-spec/database") else {
        return;
    };
    let generator = concat!(env!("CARGO_MANIFEST_DIR"), "/gen/gen_counters.py");
    let Ok(out) = Command::new("python3")
        .arg(generator)
        .arg(db.parent().unwrap())
        .output()
    else {
        test_data::skip!(test_data::Fixture::Python3, "python3 is not installed");
        return;
    };
    assert!(out.status.success());
    let committed = include_str!("../src/gpu/tables/arm_counters.rs");
    assert!(
        String::from_utf8(out.stdout).unwrap() == committed,
        "src/gpu/tables/arm_counters.rs differs from gen/gen_counters.py's output: re-run the generator"
    );
}

proptest::proptest! {
    /// Any text at all parses or gives a typed error; nothing panics.
    #[test]
    fn any_equation_text_parses_or_is_refused(text in "[ -~]{0,64}") {
        let _ = hwcpipe::gpu::equation::parse(&text, |name| {
            if name.len() % 2 == 0 { Ok(name.len()) } else { Err(()) }
        })
        .map(|r| r.map(|e| e.eval(&[1.0, 0.0, 2.0])));
    }
}
