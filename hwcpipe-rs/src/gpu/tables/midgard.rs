//! Midgard (Mali-T7xx/T8xx) counter layouts for the hwver 5 dump format.
//!
//! Arm's counter database starts at Mali-G31, so these are typed from the kbase hwcnt name tables
//! HWCPipe 1.x uses (indices) with gatord's names (`events-Mali-T*_hw.xml`), limited to the counters
//! the [`GpuCounter`](crate::gpu::GpuCounter) formulas read. T820/T830 place the tiler primitive
//! counters two slots lower than T760/T860/T880.

use super::HardwareLayout;

const FRONT_END: &[(&str, u32)] = &[
    ("GPU_ACTIVE", 6),
    ("JS0_JOBS", 8),
    ("JS0_TASKS", 9),
    ("JS0_ACTIVE", 10),
    ("JS1_JOBS", 16),
    ("JS1_ACTIVE", 18),
];

const SHADER_CORE: &[(&str, u32)] = &[
    ("FRAG_ACTIVE", 4),
    ("FRAG_QUADS_EZS_TEST", 15),
    ("FRAG_QUADS_EZS_KILL", 16),
    ("FRAG_THREADS_LZS_TEST", 17),
    ("FRAG_THREADS_LZS_KILL", 18),
    ("FRAG_TRANS_ELIM", 21),
    ("COMPUTE_ACTIVE", 22),
    ("TRIPIPE_ACTIVE", 26),
    ("ARITH_WORDS", 27),
    ("LS_ISSUES", 32),
    ("TEX_ISSUES", 42),
];

const MEMORY: &[(&str, u32)] = &[
    ("L2_EXT_WRITE_BEATS", 30),
    ("L2_EXT_READ_BEATS", 31),
    ("L2_READ_LOOKUP", 33),
    ("L2_WRITE_LOOKUP", 39),
    ("L2_EXT_READ", 48),
    ("L2_EXT_WRITE", 50),
    ("L2_EXT_AR_STALL", 54),
    ("L2_EXT_W_STALL", 58),
];

/// Mali-T760, T860 and T880.
pub static MIDGARD_T760_T860_T880: HardwareLayout = HardwareLayout {
    gpu: "Mali-T760/T860/T880",
    values_per_block: 64,
    blocks: [
        FRONT_END,
        &[
            ("TRIANGLES", 4),
            ("POINTS", 7),
            ("LINES", 8),
            ("PRIM_VISIBLE", 13),
            ("PRIM_CULLED", 14),
            ("PRIM_CLIPPED", 15),
        ],
        MEMORY,
        SHADER_CORE,
    ],
};

/// Mali-T820 and T830.
pub static MIDGARD_T820_T830: HardwareLayout = HardwareLayout {
    gpu: "Mali-T820/T830",
    values_per_block: 64,
    blocks: [
        FRONT_END,
        &[
            ("TRIANGLES", 4),
            ("POINTS", 7),
            ("LINES", 8),
            ("PRIM_VISIBLE", 11),
            ("PRIM_CULLED", 12),
            ("PRIM_CLIPPED", 13),
        ],
        MEMORY,
        SHADER_CORE,
    ],
};
