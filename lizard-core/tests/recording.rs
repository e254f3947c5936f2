//! A real local capture read back through [`Recording`]: `../shared/data/gatord-9.7.2/arm64-vm-local.apc/`,
//! gatord 9.7.2's own local capture on an emulated Cortex-A72 (`-icount shift=0`: one instruction per cycle at
//! a virtual 1 GHz), read in place. A missing data folder is a printed skip.

use lizard_core::{Recording, RecordingError, SamplePeriod, Value};

#[test]
fn the_arm_pmu_counters_of_gatords_own_capture_add_up() {
    let Some(dir) = test_data::gatord("arm64-vm-local.apc") else {
        eprintln!("skipped: gatord-9.7.2/arm64-vm-local.apc is missing");
        return;
    };
    let mut recording = Recording::open(&dir).expect("capture");
    assert_eq!(recording.protocol(), Some(950));
    assert!(recording
        .names()
        .name(0xa)
        .starts_with("ARMv8_Cortex_A72_ccnt (Cycles"));
    let (mut cycles, mut instructions) = ((0usize, 0i64), (0usize, 0i64));
    let summary = recording
        .walk(|v| -> Result<(), RecordingError> {
            let sum = match v.key {
                0xa => &mut cycles,
                0xc => &mut instructions,
                _ => return Ok(()),
            };
            let Value::Int(n) = v.value else {
                panic!("a float perf value")
            };
            sum.0 += 1;
            sum.1 += n;
            Ok(())
        })
        .expect("walk");
    assert_eq!((cycles.0, instructions.0), (4150, 4150));
    // Sums of the per-reading increases are the final totals: ≈ 3.005e9 each, 175 apart (first reading).
    assert_eq!(cycles.1 - instructions.1, 175);
    assert!(summary.issues.is_empty(), "{:?}", summary.issues);
    assert!(summary.samples >= 8300);
    assert!(summary.frames.contains_key("PerfAttrs"));
    let task_clock = summary
        .perf_events
        .iter()
        .find(|e| e.key == 0x66)
        .expect("0x66");
    assert_eq!(
        task_clock.values_text(),
        "never sent (opened for counting only)"
    );
    assert!(summary
        .perf_events
        .iter()
        .any(|e| matches!(e.sample_period, SamplePeriod::Events(_))));
}
