//! Arm's kbase driver over its dummy GPU model (`CONFIG_MALI_NO_MALI`), as `.ci/kbase-tests` loads
//! it in the emulated Arm system: which GPU it pretends to be, and setting its counters from user
//! space with `KBASE_IOCTL_HWCNT_SET` (a NO_MALI-only ioctl; a test helper, not the crate's API).
//!
//! Shared by hwcpipe-rs' `gpu_kbase` test and lizard-cli's and lizard-capi's guest tests (through
//! `#[path]`).
#![allow(dead_code)]

use std::path::Path;

use hwcpipe::gpu::formula::{formula, Combine, Scale};
use hwcpipe::gpu::ioctl::ioc;
use hwcpipe::gpu::tables::BlockKind;
use hwcpipe::gpu::version::{set_flags, version_check};
use hwcpipe::gpu::{Fd, GpuCounter, GpuProfiler, GpuSample, IoctlArg, KbaseDevice, MaliDevice};

/// `KBASE_IOCTL_HWCNT_SET`: `_IOW(0x80, 32, struct kbase_ioctl_hwcnt_values { u64 data; u32 size;
/// u32 padding; })`.
pub const HWCNT_SET: u32 = ioc(1, 0x80, 32, 16);
/// Counter values per block the model takes (counters 4..63; `KBASE_DUMMY_MODEL_COUNTER_PER_CORE`).
pub const VALUES_PER_BLOCK: usize = 60;
/// Memory-system block slots of the model (`KBASE_DUMMY_MODEL_MAX_MEMSYS_BLOCKS`).
pub const MEMSYS_SLOTS: usize = 8;
/// Shader-core block slots of the model (`KBASE_DUMMY_MODEL_MAX_SHADER_CORES`).
pub const SHADER_SLOTS: usize = 32;
/// Blocks in one injection: front end, tiler, memory-system slots, shader-core slots.
pub const BLOCKS: usize = 2 + MEMSYS_SLOTS + SHADER_SLOTS;
/// Shader cores the model has present (`DUMMY_IMPLEMENTATION_SHADER_PRESENT`).
pub const CORE_MASK: u64 = 0xF;
/// L2 slices the model has present (`DUMMY_IMPLEMENTATION_L2_PRESENT`).
pub const L2_SLICES: u32 = 1;

/// The dummy GPU the guest loaded (`no_mali_gpu=`), from `LIZARD_KBASE_GPU`, when `/dev/mali0`
/// exists; otherwise `None`, after saying why the test skips.
pub fn loaded_gpu() -> Option<String> {
    if !Path::new("/dev/mali0").exists() {
        test_data::skip!(
            test_data::Fixture::Kbase,
            "no /dev/mali0 (these tests run in the emulated Arm system of .ci/kbase-tests, \
             with Arm's kbase driver over its dummy GPU model)"
        );
        return None;
    }
    match std::env::var("LIZARD_KBASE_GPU") {
        Ok(name) => Some(name),
        Err(_) => {
            test_data::skip!(
                test_data::Fixture::Kbase,
                "/dev/mali0 exists but LIZARD_KBASE_GPU does not name the dummy GPU"
            );
            None
        }
    }
}

/// The slot a block of `kind` and `instance` takes in an injection.
pub fn slot(kind: BlockKind, instance: u32) -> usize {
    let i = instance as usize;
    match kind {
        BlockKind::FrontEnd => 0,
        BlockKind::Tiler => 1,
        BlockKind::Memory => 2 + i,
        BlockKind::ShaderCore => 2 + MEMSYS_SLOTS + i,
    }
}

/// Whether the model dumps counters for this block (absent slices and cores read zero).
pub fn present(kind: BlockKind, instance: u32) -> bool {
    match kind {
        BlockKind::FrontEnd | BlockKind::Tiler => instance == 0,
        BlockKind::Memory => instance < L2_SLICES,
        BlockKind::ShaderCore => instance < 64 && CORE_MASK & (1 << instance) != 0,
    }
}

/// The values a test injects: counter `index` (4..63) of block `slot` counts
/// `(slot + 1) × 1000 + index`, distinct in every block and counter, so a block read from the
/// wrong slot or a header word counted as a counter shows.
pub fn distinct(slot: usize, index: u32) -> u32 {
    (slot as u32 + 1) * 1000 + index
}

/// What a present block's counter `index` reads after [`set_counters`] with `value`; 0 for header
/// words and absent blocks.
pub fn injected(
    value: &dyn Fn(usize, u32) -> u32,
    kind: BlockKind,
    instance: u32,
    index: u32,
) -> u64 {
    if !(4..64).contains(&index) || !present(kind, instance) {
        return 0;
    }
    u64::from(value(slot(kind, instance), index))
}

/// Sets every counter of every model block: `value(slot, index)` for counters 4..63, slots in the
/// model's order (front end, tiler, 8 memory-system, 32 shader-core). The values stay until set
/// again, and every dump reports them again.
pub fn set_counters(value: &dyn Fn(usize, u32) -> u32) -> std::io::Result<()> {
    let mut data = Vec::with_capacity(BLOCKS * VALUES_PER_BLOCK * 4);
    for slot in 0..BLOCKS {
        for i in 0..VALUES_PER_BLOCK as u32 {
            data.extend_from_slice(&value(slot, 4 + i).to_ne_bytes());
        }
    }
    let mut dev = MaliDevice::open("/dev/mali0").map_err(std::io::Error::other)?;
    let version = version_check(&mut dev).map_err(std::io::Error::other)?;
    set_flags(&mut dev, version).map_err(std::io::Error::other)?;
    let mut arg = [0u8; 16];
    arg[8..12].copy_from_slice(&(data.len() as u32).to_ne_bytes());
    dev.ioctl(
        Fd::Device,
        HWCNT_SET,
        IoctlArg::StructWithBuffer {
            arg: &mut arg,
            ptr_offset: 0,
            buffer: &mut data,
        },
    )?;
    Ok(())
}

/// What `counter` must read after injecting `value` (k whole dumps folded into one sample): its
/// formula over the injected values of the present blocks, from the model's slot layout.
pub fn expected(
    profiler: &GpuProfiler,
    counter: GpuCounter,
    value: &dyn Fn(usize, u32) -> u32,
    k: u64,
) -> f64 {
    let info = profiler.info();
    let layout = info.product.layout.expect("a layout");
    let f = formula(info.product.family, counter).expect("a formula");
    let terms = f
        .alternatives
        .iter()
        .find(|alt| {
            alt.iter().all(|&(kind, name, _)| {
                layout
                    .index_of(kind, name)
                    .is_some_and(|i| (i as usize) < info.layout.values_per_block)
            })
        })
        .expect("an alternative the layout has");
    let block_sum = |kind: BlockKind, index: u32| -> u64 {
        (0..64)
            .map(|instance| injected(value, kind, instance, index))
            .sum::<u64>()
            * k
    };
    let values = terms.iter().map(|&(kind, name, weight)| {
        block_sum(kind, layout.index_of(kind, name).expect("resolved")) * weight
    });
    let combined = match f.combine {
        Combine::Sum => values.sum::<u64>(),
        Combine::Max => values.max().unwrap_or(0),
    };
    let scale = match f.scale {
        Scale::Const(c) => c as f64,
        Scale::BusWidthBytes => f64::from(info.props.bus_width_bytes()),
    };
    combined as f64 * scale
}

/// Checks every counter of `sample` against `k` dumps of `value`; the number of counters checked.
pub fn check_sample(
    profiler: &GpuProfiler,
    sample: &GpuSample,
    value: &dyn Fn(usize, u32) -> u32,
    k: u64,
) -> usize {
    let mut checked = 0;
    for &counter in profiler.enabled_counters() {
        let got = sample
            .get(counter)
            .unwrap_or_else(|| panic!("{counter} has no value"));
        let want = expected(profiler, counter, value, k);
        assert_eq!(got, want, "{counter} over {k} dump(s)");
        checked += 1;
    }
    checked
}

/// The dump count a sample folds: GpuCycles over its one-dump value (0 when nothing was counted).
pub fn dumps_in(
    profiler: &GpuProfiler,
    sample: &GpuSample,
    value: &dyn Fn(usize, u32) -> u32,
) -> u64 {
    let one = expected(profiler, GpuCounter::GpuCycles, value, 1);
    let got = sample.get(GpuCounter::GpuCycles).expect("GpuCycles");
    assert!(
        one > 0.0 && got % one == 0.0,
        "GpuCycles {got} is not a multiple of {one}"
    );
    (got / one) as u64
}

/// Samples until the driver counts (GpuCycles non-zero), 5 s at most; returns the empty samples.
///
/// kbase's CSF backend enables counting asynchronously, through the firmware interface: samples
/// taken right after a reader's setup can find nothing counted yet (one in about 60 first samples
/// on a quiet machine, several in a row on a loaded one). After the first counted sample every
/// sample holds exactly its own dump.
pub fn warm_up(profiler: &mut GpuProfiler, value: &dyn Fn(usize, u32) -> u32) -> usize {
    let started = std::time::Instant::now();
    let mut empty = 0;
    loop {
        let sample = profiler.sample().expect("sample").clone();
        if dumps_in(profiler, &sample, value) > 0 {
            return empty;
        }
        empty += 1;
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "nothing counted in {empty} samples over 5 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
