//! What a simulated GPU is: product, driver, topology, workload, injected faults.

use std::fmt;

use crate::gpu::tables::BlockKind;
use crate::gpu::version::Interface;

/// Ready-made simulated GPUs, one or more per family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimGpu {
    /// Mali-T860 MP4 (Midgard), legacy UK driver 10.6, vinstr, 64-bit bus.
    T860,
    /// Mali-G71 MP7 with a hole in its core mask (Bifrost), JM r21+ 11.10, vinstr, 128-bit bus.
    G71,
    /// Mali-G76 MP3 (Bifrost), JM 11.25, vinstr, 128-bit bus.
    G76,
    /// Mali-G78 MP6 (Valhall JM), JM 11.30, vinstr, two L2 slices, 128-bit bus.
    G78,
    /// Mali-G78 MP6 on a JM 11.41 driver: read through kinstr_prfcnt with 64-counter blocks.
    G78Kinstr,
    /// Mali-G710 MP4 (Valhall CSF), CSF 1.10, vinstr, 128-bit bus.
    G710,
    /// Mali-G715 MP6 (Valhall CSF, 128 counters per block), CSF 1.20, kinstr_prfcnt, 256-bit bus.
    G715,
    /// Mali-G720 MP6 (5th Gen), CSF 1.22, kinstr_prfcnt, 256-bit bus.
    G720,
}

impl SimGpu {
    /// Every preset.
    pub const ALL: [SimGpu; 8] = [
        SimGpu::T860,
        SimGpu::G71,
        SimGpu::G76,
        SimGpu::G78,
        SimGpu::G78Kinstr,
        SimGpu::G710,
        SimGpu::G715,
        SimGpu::G720,
    ];

    /// The configuration of this preset.
    pub fn config(self) -> SimConfig {
        let c = |gpu_id, interface, version, core_mask, l2_slices, bus_log2: u32| SimConfig {
            gpu_id,
            interface,
            version,
            core_mask,
            l2_slices,
            l2_features: bus_log2 << 24,
            hwver: 5,
            kinstr: false,
            values_per_block: 64,
            dummy_model: false,
        };
        match self {
            SimGpu::T860 => c(0x0860_0002, Interface::LegacyUk, (10, 6), 0b1111, 1, 6),
            SimGpu::G71 => c(0x6000_0011, Interface::Jm, (11, 10), 0b1011_1111, 1, 7),
            SimGpu::G76 => c(0x7001_0000, Interface::Jm, (11, 25), 0b1101, 1, 7),
            SimGpu::G78 => c(0x9002_0010, Interface::Jm, (11, 30), 0b0111_0111, 2, 7),
            SimGpu::G78Kinstr => SimConfig {
                kinstr: true,
                ..c(0x9002_0010, Interface::Jm, (11, 41), 0b0111_0111, 2, 7)
            },
            SimGpu::G710 => c(0xA002_0000, Interface::Csf, (1, 10), 0b0101_0101, 2, 7),
            SimGpu::G715 => SimConfig {
                kinstr: true,
                values_per_block: 128,
                ..c(0xB002_0000, Interface::Csf, (1, 20), 0x7_0007, 4, 8)
            },
            SimGpu::G720 => SimConfig {
                kinstr: true,
                values_per_block: 128,
                ..c(0xC000_0000, Interface::Csf, (1, 22), 0x7_0007, 4, 8)
            },
        }
    }
}

/// The hardware and driver a [`SimulatedKbase`](super::SimulatedKbase) pretends to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// RAW_GPU_ID.
    pub gpu_id: u64,
    /// Driver generation.
    pub interface: Interface,
    /// Driver interface version `(major, minor)`.
    pub version: (u16, u16),
    /// Shader cores present.
    pub core_mask: u64,
    /// L2 slices.
    pub l2_slices: u32,
    /// RAW_L2_FEATURES (bus width in bits 31:24).
    pub l2_features: u32,
    /// vinstr layout version reported by GET_HWVER.
    pub hwver: u32,
    /// Whether the driver offers kinstr_prfcnt (and, for 128-counter GPUs, nothing else).
    pub kinstr: bool,
    /// Counters per block (64, or 128 for kinstr_prfcnt-only GPUs).
    pub values_per_block: u16,
    /// Arm's dummy GPU model behind the driver (`CONFIG_MALI_NO_MALI`, see
    /// [`SimConfig::kbase_r35p0_dummy`]): dumps have slots for the model's maxima (8 memory-system
    /// blocks, 32 shader cores) whatever is present, and kinstr_prfcnt lists every slot. Otherwise
    /// the driver lays dumps out as for a real GPU (a memory block per L2 slice, a shader slot per
    /// bit up to the highest present core) and lists the present blocks.
    pub dummy_model: bool,
}

/// The GPUs of kbase r35p0's dummy model (`no_mali_gpu=NAME`, `all_control_reg_values` in
/// `backend/gpu/mali_kbase_model_dummy.c`; tGOx in two revisions, so 17 names for 16 GPUs): name,
/// GPU_ID, and whether the CSF build of the driver serves it (else the Job Manager build).
pub const KBASE_R35P0_DUMMY_GPUS: [(&str, u32, bool); 17] = [
    ("tMIx", 0x60A0_0010, false),
    ("tHEx", 0x6201_0030, false),
    ("tSIx", 0x7000_1010, false),
    ("tDVx", 0x7003_0000, false),
    ("tNOx", 0x7211_0000, false),
    ("tGOx_r0p0", 0x7222_0000, false),
    ("tGOx_r1p0", 0x7402_1000, false),
    ("tTRx", 0x9080_0000, false),
    ("tNAx", 0x9081_0000, false),
    ("tBEx", 0x9202_0000, false),
    ("tBAx", 0x9E45_0000, false),
    ("tDUx", 0xA201_0000, false),
    ("tODx", 0xA802_0000, true),
    ("lODx", 0xA867_0000, true),
    ("tGRx", 0xAA03_0000, true),
    ("tVAx", 0xAC04_0000, true),
    ("tTUx", 0xB852_0000, true),
];

impl SimConfig {
    /// Arm's kbase driver r35p0 over its dummy GPU model pretending to be `name` (`"tBEx"`): JM
    /// interface 11.33 or CSF 1.8, both readers, 4 shader cores and one L2 slice present, a 64-bit
    /// bus (`L2_FEATURES` 0x06100206), dumps of 42 blocks (10752 bytes). `None` for a name the
    /// model does not know.
    pub fn kbase_r35p0_dummy(name: &str) -> Option<SimConfig> {
        let (gpu_id, csf) = KBASE_R35P0_DUMMY_GPUS
            .iter()
            .find(|g| g.0 == name)
            .map(|g| (g.1, g.2))?;
        let (interface, version) = if csf {
            (Interface::Csf, (1, 8))
        } else {
            (Interface::Jm, (11, 33))
        };
        Some(SimConfig {
            gpu_id: u64::from(gpu_id),
            interface,
            version,
            core_mask: 0xF,
            l2_slices: 1,
            l2_features: 0x0610_0206,
            hwver: 5,
            kinstr: true,
            values_per_block: 64,
            dummy_model: true,
        })
    }

    /// Whether block `instance` of `kind` belongs to a present L2 slice or core.
    pub fn is_present(&self, kind: BlockKind, instance: u32) -> bool {
        match kind {
            BlockKind::FrontEnd | BlockKind::Tiler => instance == 0,
            BlockKind::Memory => instance < self.l2_slices,
            BlockKind::ShaderCore => instance < 64 && self.core_mask & (1u64 << instance) != 0,
        }
    }

    /// Block slots of a dump: front end, tiler, memory system, shader cores.
    pub fn slots(&self) -> [u32; 4] {
        if self.dummy_model {
            [1, 1, 8, 32]
        } else {
            [1, 1, self.l2_slices, 64 - self.core_mask.leading_zeros()]
        }
    }
}

/// The counter values a scripted workload produces: `f(interval, block, instance, index)` is what
/// counter `index` of block `instance` of `block` counts during the `interval`-th sample (0-based).
/// Instances are L2 slice numbers and physical shader core bit positions.
pub struct Workload(Box<dyn Fn(u64, BlockKind, u32, u32) -> u64 + Send>);

impl Workload {
    /// A workload from a function.
    pub fn from_fn(f: impl Fn(u64, BlockKind, u32, u32) -> u64 + Send + 'static) -> Workload {
        Workload(Box::new(f))
    }

    /// A GPU doing nothing.
    pub fn idle() -> Workload {
        Workload::from_fn(|_, _, _, _| 0)
    }

    /// The default script: every counter distinct and growing with the interval,
    /// `1000 × (interval + 1) + 100 × block + 10 × instance + index`.
    pub fn ramp() -> Workload {
        Workload::from_fn(|k, kind, inst, idx| {
            1000 * (k + 1) + 100 * kind as u64 + 10 * u64::from(inst) + u64::from(idx)
        })
    }

    /// The value of one counter in one interval.
    pub fn value(&self, interval: u64, kind: BlockKind, instance: u32, index: u32) -> u64 {
        (self.0)(interval, kind, instance, index)
    }
}

impl fmt::Debug for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Workload(..)")
    }
}

/// A misbehaviour injected into the simulated driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Every ioctl with this request number fails with `errno`.
    FailIoctl {
        /// Request number.
        request: u32,
        /// errno returned.
        errno: i32,
    },
    /// DUMP / SAMPLE_SYNC is accepted but no buffer ever fills: poll times out.
    DumpNeverCompletes,
    /// poll reports POLLHUP.
    HangUp,
    /// GET_BUFFER returns a buffer index outside the ring.
    BadBufferIndex,
    /// GET_BUFFER_SIZE reports one block less than the layout needs.
    WrongBufferSize,
    /// ENUM_INFO reports 16-byte items.
    ShortEnumItems,
    /// GET_SAMPLE points at metadata cut off by the end of the mapping.
    TruncatedSampleMetadata,
    /// Samples carry the error flag.
    SampleErrorFlag,
    /// GET_GPUPROPS answers a buffer with the last record cut short.
    TruncatedProps,
    /// The first this many dumps (counted from the driver's start) count nothing: every counter
    /// zero, as a CSF driver's dumps before its firmware has enabled counting (their headers carry
    /// the client's enable masks all the same).
    NotCountingFirst(u64),
    /// Every periodic dump covers two periods, as when the driver folds a period it could not
    /// write into the next dump.
    FoldedDumps,
    /// The driver refuses to dump by itself: SET_INTERVAL with a period and kinstr_prfcnt's
    /// periodic mode fail with EINVAL (manual dumps still work).
    NoPeriodicDumps,
}
