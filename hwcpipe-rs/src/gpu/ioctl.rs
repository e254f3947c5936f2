//! kbase ioctl request numbers and the `#[repr(C)]` structs they carry, byte for byte as the driver
//! defines them. The real device and `SimulatedKbase` (feature `sim`) both speak these.
//!
//! Every struct implements [`Wire`]: it is encoded into and decoded from native-endian bytes at the
//! field offsets of its `#[repr(C)]` layout (checked at compile time), so the bytes handed to the kernel
//! are exactly the C struct.

/// A `#[repr(C)]` ioctl payload that converts to and from its exact in-memory bytes.
pub trait Wire: Sized {
    /// `size_of::<Self>()`, the size encoded in the ioctl number.
    const SIZE: usize;
    /// Writes the struct into `out[..SIZE]` (padding bytes are zero). Shorter `out` is filled as far
    /// as it goes.
    fn encode(&self, out: &mut [u8]);
    /// Reads the struct from `bytes`; missing trailing bytes read as zero.
    fn decode(bytes: &[u8]) -> Self;
    /// The struct as a freshly allocated byte vector of length `SIZE`.
    fn to_bytes(&self) -> Vec<u8> {
        let mut v = vec![0u8; Self::SIZE];
        self.encode(&mut v);
        v
    }
}

macro_rules! wire_struct {
    ($(#[$m:meta])* pub struct $name:ident, size $size:literal { $( $(#[$fm:meta])* pub $f:ident : $t:ty ),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name { $( $(#[$fm])* pub $f: $t ),* }

        const _: () = assert!(core::mem::size_of::<$name>() == $size);

        impl Wire for $name {
            const SIZE: usize = $size;
            fn encode(&self, out: &mut [u8]) {
                let mut buf = [0u8; $size];
                $(
                    let off = core::mem::offset_of!($name, $f);
                    let bytes = self.$f.to_ne_bytes();
                    buf[off..off + bytes.len()].copy_from_slice(&bytes);
                )*
                let n = out.len().min($size);
                out[..n].copy_from_slice(&buf[..n]);
            }
            fn decode(bytes: &[u8]) -> Self {
                let mut buf = [0u8; $size];
                let n = bytes.len().min($size);
                buf[..n].copy_from_slice(&bytes[..n]);
                Self { $( $f: {
                    let off = core::mem::offset_of!($name, $f);
                    let mut field = [0u8; core::mem::size_of::<$t>()];
                    field.copy_from_slice(&buf[off..off + core::mem::size_of::<$t>()]);
                    <$t>::from_ne_bytes(field)
                } ),* }
            }
        }
    };
}

/// Encodes an ioctl number the generic Linux way (arm, arm64, x86, riscv):
/// `dir << 30 | size << 16 | type << 8 | nr`.
pub const fn ioc(dir: u32, ty: u32, nr: u32, size: u32) -> u32 {
    (dir << 30) | (size << 16) | (ty << 8) | nr
}
const WRITE: u32 = 1;
const READ: u32 = 2;
const KBASE: u32 = 0x80;
const VINSTR: u32 = 0xBE;
const PRFCNT: u32 = 0xBF;

/// Legacy (pre-r21) UK call: the function id overflows the 8-bit nr field into the type field.
const fn uk(id: u32, size: u32) -> u32 {
    ((READ | WRITE) << 30) | (size << 16) | ((KBASE << 8) + id)
}

/// UK function id of the version check.
pub const UK_FUNC_VERSION_CHECK: u32 = 0;
/// UK function id of SET_FLAGS (512 + 18).
pub const UK_FUNC_SET_FLAGS: u32 = 530;
/// UK function id of the GPU properties dump (512 + 14).
pub const UK_FUNC_GPU_PROPS: u32 = 526;
/// UK function id of the hwcnt reader setup (512 + 36).
pub const UK_FUNC_HWCNT_READER_SETUP: u32 = 548;

/// Legacy UK version check, 16-byte [`UkVersionCheck`].
pub const UK_VERSION_CHECK: u32 = uk(UK_FUNC_VERSION_CHECK, 16);
/// Legacy UK SET_FLAGS, 16-byte [`UkSetFlags`].
pub const UK_SET_FLAGS: u32 = uk(UK_FUNC_SET_FLAGS, 16);
/// Legacy UK GPU properties, 536-byte [`UK_GPU_PROPS_SIZE`] struct.
pub const UK_GPU_PROPS: u32 = uk(UK_FUNC_GPU_PROPS, UK_GPU_PROPS_SIZE as u32);
/// Legacy UK hwcnt reader setup, 32-byte [`UkHwcntReaderSetup`]; the reader fd comes back in the struct.
pub const UK_HWCNT_READER_SETUP: u32 = uk(UK_FUNC_HWCNT_READER_SETUP, 32);
/// Size of the legacy UK GPU properties struct (8-byte header + 528-byte `base_gpu_props`).
pub const UK_GPU_PROPS_SIZE: usize = 536;

/// KBASE_IOCTL_VERSION_CHECK (Job Manager GPUs, r21+), [`VersionCheck`].
pub const VERSION_CHECK_JM: u32 = ioc(READ | WRITE, KBASE, 0, 4);
/// KBASE_IOCTL_VERSION_CHECK (CSF GPUs), [`VersionCheck`].
pub const VERSION_CHECK_CSF: u32 = ioc(READ | WRITE, KBASE, 0x34, 4);
/// KBASE_IOCTL_SET_FLAGS, [`SetFlags`].
pub const SET_FLAGS: u32 = ioc(WRITE, KBASE, 1, 4);
/// KBASE_IOCTL_GET_GPUPROPS, [`GetGpuProps`]; returns the byte count.
pub const GET_GPUPROPS: u32 = ioc(WRITE, KBASE, 3, 16);
/// KBASE_IOCTL_HWCNT_READER_SETUP, [`HwcntReaderSetup`]; returns the reader fd.
pub const HWCNT_READER_SETUP: u32 = ioc(WRITE, KBASE, 8, 20);
/// KBASE_IOCTL_KINSTR_PRFCNT_ENUM_INFO, [`KinstrEnumInfo`].
pub const KINSTR_PRFCNT_ENUM_INFO: u32 = ioc(READ | WRITE, KBASE, 0x38, 16);
/// KBASE_IOCTL_KINSTR_PRFCNT_SETUP, [`KinstrSetup`]; returns the reader fd.
pub const KINSTR_PRFCNT_SETUP: u32 = ioc(READ | WRITE, KBASE, 0x39, 16);

/// Reader fd: layout version (4 or 5), out u32.
pub const READER_GET_HWVER: u32 = ioc(READ, VINSTR, 0x00, 4);
/// Reader fd: bytes per dump, out u32.
pub const READER_GET_BUFFER_SIZE: u32 = ioc(READ, VINSTR, 0x01, 4);
/// Reader fd: request a manual dump (argument 0 by value).
pub const READER_DUMP: u32 = ioc(WRITE, VINSTR, 0x10, 4);
/// Reader fd: zero the client's accumulators (argument 0 by value).
pub const READER_CLEAR: u32 = ioc(WRITE, VINSTR, 0x11, 4);
/// Reader fd: take the next filled buffer, out [`HwcntReaderMetadata`].
pub const READER_GET_BUFFER: u32 = ioc(READ, VINSTR, 0x20, 16);
/// Reader fd: take the next filled buffer with cycle counts, out [`HwcntReaderMetadataCycles`].
pub const READER_GET_BUFFER_WITH_CYCLES: u32 = ioc(READ, VINSTR, 0x20, 32);
/// Reader fd: give a buffer back, [`HwcntReaderMetadata`].
pub const READER_PUT_BUFFER: u32 = ioc(WRITE, VINSTR, 0x21, 16);
/// Reader fd: give a buffer back, [`HwcntReaderMetadataCycles`].
pub const READER_PUT_BUFFER_WITH_CYCLES: u32 = ioc(WRITE, VINSTR, 0x21, 32);
/// Reader fd: periodic dump interval in ns by value, 0 = manual.
pub const READER_SET_INTERVAL: u32 = ioc(WRITE, VINSTR, 0x30, 4);
/// Reader fd: API version, out u32 (the driver declares it `_IOW`).
pub const READER_GET_API_VERSION: u32 = ioc(WRITE, VINSTR, 0xFF, 4);
/// Reader fd: API version and features, out [`ApiVersionWithFeatures`].
pub const READER_GET_API_VERSION_WITH_FEATURES: u32 = ioc(WRITE, VINSTR, 0xFF, 8);

/// kinstr_prfcnt fd: issue a command, [`KinstrControlCmd`].
pub const PRFCNT_ISSUE_COMMAND: u32 = ioc(WRITE, PRFCNT, 0x00, 16);
/// kinstr_prfcnt fd: take the next sample, out [`KinstrSampleAccess`].
pub const PRFCNT_GET_SAMPLE: u32 = ioc(READ, PRFCNT, 0x01, 16);
/// kinstr_prfcnt fd: give a sample back, [`KinstrSampleAccess`].
pub const PRFCNT_PUT_SAMPLE: u32 = ioc(WRITE, PRFCNT, 0x10, 16);

/// `BASE_CONTEXT_SYSTEM_MONITOR_SUBMIT_DISABLED`, the flag HWCPipe passes to SET_FLAGS.
pub const CONTEXT_SYSTEM_MONITOR_SUBMIT_DISABLED: u32 = 1 << 1;

/// kinstr_prfcnt command: start counting.
pub const PRFCNT_CMD_START: u16 = 1;
/// kinstr_prfcnt command: stop counting.
pub const PRFCNT_CMD_STOP: u16 = 2;
/// kinstr_prfcnt command: take a sample now, synchronously.
pub const PRFCNT_CMD_SAMPLE_SYNC: u16 = 3;
/// kinstr_prfcnt command: take a sample now, asynchronously.
pub const PRFCNT_CMD_SAMPLE_ASYNC: u16 = 4;
/// kinstr_prfcnt command: throw away pending samples.
pub const PRFCNT_CMD_DISCARD: u16 = 5;

wire_struct! {
    /// Legacy UK version check. `header` is the union `{u32 id | u32 ret | u64 sizer}`: the caller
    /// writes the function id, the driver writes its status back into the same word.
    pub struct UkVersionCheck, size 16 {
        /// In: function id 0. Out: status (0 = success).
        pub header: u32,
        /// Upper half of the 8-byte header union.
        pub header_hi: u32,
        /// In: wanted major; out: driver major.
        pub major: u16,
        /// In: wanted minor; out: driver minor.
        pub minor: u16,
        /// Padding.
        pub padding: u32,
    }
}

wire_struct! {
    /// Legacy UK SET_FLAGS.
    pub struct UkSetFlags, size 16 {
        /// In: function id 530. Out: status.
        pub header: u32,
        /// Upper half of the header union.
        pub header_hi: u32,
        /// Context creation flags.
        pub create_flags: u32,
        /// Padding.
        pub padding: u32,
    }
}

wire_struct! {
    /// Legacy UK hwcnt reader setup.
    pub struct UkHwcntReaderSetup, size 32 {
        /// In: function id 548. Out: status.
        pub header: u32,
        /// Upper half of the header union.
        pub header_hi: u32,
        /// Number of dump buffers in the ring (1..=32).
        pub buffer_count: u32,
        /// Job manager / front-end enable mask (bit i = counters 4i..4i+3).
        pub jm_bm: u32,
        /// Shader core enable mask.
        pub shader_bm: u32,
        /// Tiler enable mask.
        pub tiler_bm: u32,
        /// MMU/L2 enable mask.
        pub mmu_l2_bm: u32,
        /// Out: the reader fd.
        pub fd: i32,
    }
}

wire_struct! {
    /// KBASE_IOCTL_VERSION_CHECK payload (JM and CSF).
    pub struct VersionCheck, size 4 {
        /// In 0; out: driver interface major.
        pub major: u16,
        /// In 0; out: driver interface minor.
        pub minor: u16,
    }
}

wire_struct! {
    /// KBASE_IOCTL_SET_FLAGS payload.
    pub struct SetFlags, size 4 {
        /// Context creation flags.
        pub create_flags: u32,
    }
}

wire_struct! {
    /// KBASE_IOCTL_GET_GPUPROPS payload. Call with `buffer = 0, size = 0` for the byte count, then
    /// with a buffer of that size.
    pub struct GetGpuProps, size 16 {
        /// User pointer to the property buffer.
        pub buffer: u64,
        /// Size of the buffer.
        pub size: u32,
        /// Must be 0.
        pub flags: u32,
    }
}

wire_struct! {
    /// KBASE_IOCTL_HWCNT_READER_SETUP payload.
    pub struct HwcntReaderSetup, size 20 {
        /// Number of dump buffers in the ring (1..=32).
        pub buffer_count: u32,
        /// Front-end / job manager enable mask.
        pub fe_bm: u32,
        /// Shader core enable mask.
        pub shader_bm: u32,
        /// Tiler enable mask.
        pub tiler_bm: u32,
        /// MMU/L2 enable mask.
        pub mmu_l2_bm: u32,
    }
}

wire_struct! {
    /// `kbase_hwcnt_reader_metadata`.
    pub struct HwcntReaderMetadata, size 16 {
        /// End of the sample, ns of CLOCK_MONOTONIC_RAW.
        pub timestamp: u64,
        /// 0 manual, 1 periodic, 2 pre-job, 3 post-job.
        pub event_id: u32,
        /// Index of the filled buffer in the ring.
        pub buffer_idx: u32,
    }
}

wire_struct! {
    /// `kbase_hwcnt_reader_metadata` followed by the cycle counts.
    pub struct HwcntReaderMetadataCycles, size 32 {
        /// End of the sample, ns.
        pub timestamp: u64,
        /// Event id.
        pub event_id: u32,
        /// Index of the filled buffer in the ring.
        pub buffer_idx: u32,
        /// GPU top-level cycles.
        pub top_cycles: u64,
        /// Shader core cycles.
        pub shader_cycles: u64,
    }
}

wire_struct! {
    /// Answer of GET_API_VERSION_WITH_FEATURES.
    pub struct ApiVersionWithFeatures, size 8 {
        /// API version (1).
        pub version: u32,
        /// Bit 0 top cycles, bit 1 shader core cycles.
        pub features: u32,
    }
}

wire_struct! {
    /// KBASE_IOCTL_KINSTR_PRFCNT_ENUM_INFO payload.
    pub struct KinstrEnumInfo, size 16 {
        /// Out (first call): size of one enumeration item.
        pub info_item_size: u32,
        /// Out (first call): number of items.
        pub info_item_count: u32,
        /// In (second call): user pointer to `count × size` bytes.
        pub info_list_ptr: u64,
    }
}

wire_struct! {
    /// KBASE_IOCTL_KINSTR_PRFCNT_SETUP input. The same 16 bytes carry [`KinstrSetupOut`] back.
    pub struct KinstrSetup, size 16 {
        /// Number of request items, including the terminating NONE item.
        pub request_item_count: u32,
        /// Size of one request item.
        pub request_item_size: u32,
        /// User pointer to the request items.
        pub requests_ptr: u64,
    }
}

wire_struct! {
    /// KBASE_IOCTL_KINSTR_PRFCNT_SETUP output (union with [`KinstrSetup`]).
    pub struct KinstrSetupOut, size 8 {
        /// Size of one metadata item in the mapped buffer.
        pub metadata_item_size: u32,
        /// Bytes to map from the reader fd.
        pub mmap_size_bytes: u32,
    }
}

wire_struct! {
    /// kinstr_prfcnt ISSUE_COMMAND payload.
    pub struct KinstrControlCmd, size 16 {
        /// Command (`PRFCNT_CMD_*`).
        pub cmd: u16,
        /// Padding.
        pub pad0: u16,
        /// Padding.
        pub pad1: u32,
        /// Echoed in the sample metadata.
        pub user_data: u64,
    }
}

wire_struct! {
    /// kinstr_prfcnt GET_SAMPLE / PUT_SAMPLE payload.
    pub struct KinstrSampleAccess, size 16 {
        /// Sample sequence number.
        pub sequence: u64,
        /// Offset of the sample's metadata items from the start of the mapping.
        pub sample_metadata_offset: u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_numbers_match_the_driver() {
        assert_eq!(UK_VERSION_CHECK, 0xC010_8000);
        assert_eq!(UK_SET_FLAGS, 0xC010_8212);
        assert_eq!(UK_GPU_PROPS, 0xC218_820E);
        assert_eq!(UK_HWCNT_READER_SETUP, 0xC020_8224);
        assert_eq!(VERSION_CHECK_JM, 0xC004_8000);
        assert_eq!(VERSION_CHECK_CSF, 0xC004_8034);
        assert_eq!(SET_FLAGS, 0x4004_8001);
        assert_eq!(GET_GPUPROPS, 0x4010_8003);
        assert_eq!(HWCNT_READER_SETUP, 0x4014_8008);
        assert_eq!(KINSTR_PRFCNT_ENUM_INFO, 0xC010_8038);
        assert_eq!(KINSTR_PRFCNT_SETUP, 0xC010_8039);
        assert_eq!(READER_GET_HWVER, 0x8004_BE00);
        assert_eq!(READER_GET_BUFFER_SIZE, 0x8004_BE01);
        assert_eq!(READER_DUMP, 0x4004_BE10);
        assert_eq!(READER_CLEAR, 0x4004_BE11);
        assert_eq!(READER_GET_BUFFER, 0x8010_BE20);
        assert_eq!(READER_GET_BUFFER_WITH_CYCLES, 0x8020_BE20);
        assert_eq!(READER_PUT_BUFFER, 0x4010_BE21);
        assert_eq!(READER_PUT_BUFFER_WITH_CYCLES, 0x4020_BE21);
        assert_eq!(READER_SET_INTERVAL, 0x4004_BE30);
        assert_eq!(READER_GET_API_VERSION, 0x4004_BEFF);
        assert_eq!(READER_GET_API_VERSION_WITH_FEATURES, 0x4008_BEFF);
        assert_eq!(PRFCNT_ISSUE_COMMAND, 0x4010_BF00);
        assert_eq!(PRFCNT_GET_SAMPLE, 0x8010_BF01);
        assert_eq!(PRFCNT_PUT_SAMPLE, 0x4010_BF10);
    }

    #[test]
    fn sizes_in_numbers_match_structs() {
        let size = |req: u32| ((req >> 16) & 0x3FFF) as usize;
        assert_eq!(size(UK_VERSION_CHECK), UkVersionCheck::SIZE);
        assert_eq!(size(UK_SET_FLAGS), UkSetFlags::SIZE);
        assert_eq!(size(UK_HWCNT_READER_SETUP), UkHwcntReaderSetup::SIZE);
        assert_eq!(size(VERSION_CHECK_JM), VersionCheck::SIZE);
        assert_eq!(size(SET_FLAGS), SetFlags::SIZE);
        assert_eq!(size(GET_GPUPROPS), GetGpuProps::SIZE);
        assert_eq!(size(HWCNT_READER_SETUP), HwcntReaderSetup::SIZE);
        assert_eq!(size(READER_GET_BUFFER), HwcntReaderMetadata::SIZE);
        assert_eq!(
            size(READER_GET_BUFFER_WITH_CYCLES),
            HwcntReaderMetadataCycles::SIZE
        );
        assert_eq!(size(KINSTR_PRFCNT_ENUM_INFO), KinstrEnumInfo::SIZE);
        assert_eq!(size(KINSTR_PRFCNT_SETUP), KinstrSetup::SIZE);
        assert_eq!(size(PRFCNT_ISSUE_COMMAND), KinstrControlCmd::SIZE);
        assert_eq!(size(PRFCNT_GET_SAMPLE), KinstrSampleAccess::SIZE);
    }

    #[test]
    fn encode_places_fields_at_c_offsets() {
        let s = UkHwcntReaderSetup {
            header: 548,
            fd: -1,
            buffer_count: 16,
            ..Default::default()
        };
        let b = s.to_bytes();
        assert_eq!(&b[0..4], &548u32.to_ne_bytes());
        assert_eq!(&b[8..12], &16u32.to_ne_bytes());
        assert_eq!(&b[28..32], &(-1i32).to_ne_bytes());
        assert_eq!(UkHwcntReaderSetup::decode(&b), s);
        // A short buffer decodes with zeros instead of panicking.
        assert_eq!(UkHwcntReaderSetup::decode(&b[..8]).buffer_count, 0);
    }

    proptest::proptest! {
        #[test]
        fn wire_structs_round_trip(a in proptest::prelude::any::<u64>(), b in proptest::prelude::any::<u32>(), c in proptest::prelude::any::<i32>()) {
            let s = UkHwcntReaderSetup { header: b, header_hi: 0, buffer_count: b ^ 1, jm_bm: b, shader_bm: !b, tiler_bm: 7, mmu_l2_bm: 9, fd: c };
            proptest::prop_assert_eq!(UkHwcntReaderSetup::decode(&s.to_bytes()), s);
            let m = HwcntReaderMetadataCycles { timestamp: a, event_id: b, buffer_idx: b >> 3, top_cycles: !a, shader_cycles: a ^ 5 };
            proptest::prop_assert_eq!(HwcntReaderMetadataCycles::decode(&m.to_bytes()), m);
            let k = KinstrControlCmd { cmd: b as u16, pad0: 0, pad1: 0, user_data: a };
            let bytes = k.to_bytes();
            proptest::prop_assert_eq!(&bytes[8..16], &a.to_ne_bytes()[..]);
            proptest::prop_assert_eq!(KinstrControlCmd::decode(&bytes), k);
        }
    }
}
