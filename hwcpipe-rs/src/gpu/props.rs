//! GPU properties: the legacy UK `base_gpu_props` struct and the GET_GPUPROPS key/value buffer,
//! decoded into the few values counter sampling needs.

use super::device::{Fd, IoctlArg, KbaseDevice};
use super::error::GpuError;
use super::ioctl::{
    GetGpuProps, Wire, GET_GPUPROPS, UK_FUNC_GPU_PROPS, UK_GPU_PROPS, UK_GPU_PROPS_SIZE,
};
use super::version::{DriverVersion, Interface};

/// Largest GET_GPUPROPS buffer accepted (real drivers need well under 1 KiB).
pub const MAX_PROPS_BYTES: usize = 64 * 1024;

/// GET_GPUPROPS property ids used here.
pub mod prop {
    /// PRODUCT_ID (`GPU_ID[31:16]`).
    pub const PRODUCT_ID: u32 = 1;
    /// L2_LOG2_CACHE_SIZE.
    pub const L2_LOG2_CACHE_SIZE: u32 = 14;
    /// L2_NUM_L2_SLICES.
    pub const L2_NUM_L2_SLICES: u32 = 15;
    /// RAW_SHADER_PRESENT.
    pub const RAW_SHADER_PRESENT: u32 = 25;
    /// RAW_L2_FEATURES (bits 31:24 = log2 of the external bus width in bits).
    pub const RAW_L2_FEATURES: u32 = 29;
    /// RAW_GPU_ID.
    pub const RAW_GPU_ID: u32 = 55;
    /// COHERENCY_NUM_CORE_GROUPS.
    pub const COHERENCY_NUM_CORE_GROUPS: u32 = 62;
    /// COHERENCY_GROUP_0; groups 1..15 follow.
    pub const COHERENCY_GROUP_0: u32 = 64;
}

/// A malformed property answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PropsError {
    /// The driver announced a property buffer larger than [`MAX_PROPS_BYTES`].
    #[error("property buffer of {0} bytes exceeds the limit")]
    TooLarge(usize),
    /// A record's value runs past the end of the buffer.
    #[error("property {id} at byte {offset} is truncated")]
    Truncated {
        /// Property id of the record.
        id: u32,
        /// Offset of the record's key.
        offset: usize,
    },
    /// A key was cut off at the end of the buffer.
    #[error("{0} trailing bytes are too short for a property key")]
    TrailingBytes(usize),
    /// A property needed for sampling is missing.
    #[error("property {0} is missing")]
    Missing(&'static str),
    /// The GPU reports no shader cores or no L2 slices.
    #[error("GPU reports {cores:#x} core mask and {l2_slices} L2 slices")]
    NoCores {
        /// The core mask.
        cores: u64,
        /// L2 slices.
        l2_slices: u32,
    },
    /// The external bus width field is implausible (must be 32..=1024 bits).
    #[error("L2_FEATURES {0:#010x} gives an implausible bus width")]
    BusWidth(u32),
}

/// What the profiler needs to know about the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuProps {
    /// Raw GPU_ID register (32-bit, or 64-bit on the newest GPUs).
    pub gpu_id: u64,
    /// Shader cores present, one bit per physical core.
    pub shader_core_mask: u64,
    /// Number of L2 cache slices.
    pub l2_slices: u32,
    /// RAW_L2_FEATURES; bits 31:24 are log2 of the bus width in bits.
    pub l2_features: u32,
}

impl GpuProps {
    /// External memory bus width in bytes, `(1 << L2_FEATURES[31:24]) / 8`.
    pub fn bus_width_bytes(&self) -> u32 {
        (1u32 << ((self.l2_features >> 24) & 0x1F)) / 8
    }

    /// Number of shader cores present.
    pub fn num_cores(&self) -> u32 {
        self.shader_core_mask.count_ones()
    }

    fn validate(self) -> Result<GpuProps, PropsError> {
        if self.shader_core_mask == 0 || self.l2_slices == 0 || self.l2_slices > 64 {
            return Err(PropsError::NoCores {
                cores: self.shader_core_mask,
                l2_slices: self.l2_slices,
            });
        }
        let log2 = self.l2_features >> 24;
        if !(5..=10).contains(&log2) {
            return Err(PropsError::BusWidth(self.l2_features));
        }
        Ok(self)
    }
}

/// One decoded GET_GPUPROPS record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PropRecord {
    /// Property id (`key >> 2`).
    pub id: u32,
    /// Value, zero-extended.
    pub value: u64,
}

/// Iterates the packed little-endian records of a GET_GPUPROPS buffer: u32 key (`key & 3` = value
/// size 1/2/4/8 bytes, `key >> 2` = id), then the value, no padding.
pub fn parse_records(buf: &[u8]) -> impl Iterator<Item = Result<PropRecord, PropsError>> + '_ {
    let mut pos = 0usize;
    let mut failed = false;
    core::iter::from_fn(move || {
        if failed || pos >= buf.len() {
            return None;
        }
        let Some(key) = buf.get(pos..pos + 4) else {
            failed = true;
            return Some(Err(PropsError::TrailingBytes(buf.len() - pos)));
        };
        let key = u32::from_le_bytes([key[0], key[1], key[2], key[3]]);
        let size = 1usize << (key & 3);
        let id = key >> 2;
        let Some(v) = buf.get(pos + 4..pos + 4 + size) else {
            failed = true;
            return Some(Err(PropsError::Truncated { id, offset: pos }));
        };
        let mut wide = [0u8; 8];
        wide[..size].copy_from_slice(v);
        let record = PropRecord {
            id,
            value: u64::from_le_bytes(wide),
        };
        pos += 4 + size;
        Some(Ok(record))
    })
}

/// Decodes a GET_GPUPROPS buffer.
pub fn decode_props_buffer(buf: &[u8]) -> Result<GpuProps, PropsError> {
    let mut gpu_id = None;
    let mut product_id = None;
    let mut shader_present = None;
    let mut l2_slices = None;
    let mut l2_features = None;
    let mut num_groups = 0u64;
    let mut groups = [0u64; 16];
    for record in parse_records(buf) {
        let PropRecord { id, value } = record?;
        match id {
            prop::RAW_GPU_ID => gpu_id = Some(value),
            prop::PRODUCT_ID => product_id = Some(value),
            prop::RAW_SHADER_PRESENT => shader_present = Some(value),
            prop::L2_NUM_L2_SLICES => l2_slices = Some(value),
            prop::RAW_L2_FEATURES => l2_features = Some(value),
            prop::COHERENCY_NUM_CORE_GROUPS => num_groups = value,
            g if (prop::COHERENCY_GROUP_0..prop::COHERENCY_GROUP_0 + 16).contains(&g) => {
                groups[(g - prop::COHERENCY_GROUP_0) as usize] = value;
            }
            _ => {}
        }
    }
    let gpu_id = gpu_id
        .or(product_id.map(|p| p << 16))
        .ok_or(PropsError::Missing("RAW_GPU_ID"))?;
    let group_mask = groups
        .iter()
        .take(num_groups.min(16) as usize)
        .fold(0, |acc, g| acc | g);
    let shader_core_mask = if group_mask != 0 {
        group_mask
    } else {
        shader_present.unwrap_or(0)
    };
    GpuProps {
        gpu_id,
        shader_core_mask,
        l2_slices: l2_slices.ok_or(PropsError::Missing("L2_NUM_L2_SLICES"))? as u32,
        l2_features: l2_features.ok_or(PropsError::Missing("RAW_L2_FEATURES"))? as u32,
    }
    .validate()
}

/// Byte offsets inside the 536-byte legacy UK GPU props struct (header included).
pub mod uk_offset {
    /// `core_props.product_id` (u32).
    pub const PRODUCT_ID: usize = 8;
    /// `l2_props.num_l2_slices` (u8).
    pub const NUM_L2_SLICES: usize = 58;
    /// `raw_props.shader_present` (u64).
    pub const SHADER_PRESENT: usize = 104;
    /// `raw_props.l2_features` (u32).
    pub const L2_FEATURES: usize = 136;
    /// `raw_props.gpu_id` (u32).
    pub const GPU_ID: usize = 240;
    /// `coherency_info.num_core_groups` (u32).
    pub const NUM_CORE_GROUPS: usize = 268;
    /// `coherency_info.group[0].core_mask` (u64); groups are 16 bytes apart.
    pub const GROUP_0_CORE_MASK: usize = 280;
}

fn ne_u32(b: &[u8], at: usize) -> u32 {
    let mut v = [0u8; 4];
    v.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(v)
}

fn ne_u64(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(v)
}

/// Decodes the legacy UK GPU props struct (exactly [`UK_GPU_PROPS_SIZE`] bytes).
pub fn decode_uk_props(b: &[u8; UK_GPU_PROPS_SIZE]) -> Result<GpuProps, PropsError> {
    let groups = ne_u32(b, uk_offset::NUM_CORE_GROUPS).min(16) as usize;
    let group_mask = (0..groups).fold(0u64, |acc, i| {
        acc | ne_u64(b, uk_offset::GROUP_0_CORE_MASK + 16 * i)
    });
    let shader_core_mask = if group_mask != 0 {
        group_mask
    } else {
        ne_u64(b, uk_offset::SHADER_PRESENT)
    };
    let raw_id = ne_u32(b, uk_offset::GPU_ID);
    let gpu_id = if raw_id != 0 {
        raw_id
    } else {
        ne_u32(b, uk_offset::PRODUCT_ID) << 16
    };
    GpuProps {
        gpu_id: u64::from(gpu_id),
        shader_core_mask,
        l2_slices: u32::from(b[uk_offset::NUM_L2_SLICES]),
        l2_features: ne_u32(b, uk_offset::L2_FEATURES),
    }
    .validate()
}

/// Reads the GPU properties in the call convention of `version`.
pub fn read_props(dev: &mut dyn KbaseDevice, version: DriverVersion) -> Result<GpuProps, GpuError> {
    if version.interface == Interface::LegacyUk {
        const OP: &str = "UK GPU_PROPS_REG_DUMP";
        let mut b = [0u8; UK_GPU_PROPS_SIZE];
        b[..4].copy_from_slice(&UK_FUNC_GPU_PROPS.to_ne_bytes());
        dev.ioctl(Fd::Device, UK_GPU_PROPS, IoctlArg::Struct(&mut b))
            .map_err(|source| GpuError::Ioctl { op: OP, source })?;
        let ret = ne_u32(&b, 0);
        if ret != 0 {
            return Err(GpuError::UkStatus { op: OP, ret });
        }
        return Ok(decode_uk_props(&b)?);
    }
    const OP: &str = "KBASE_IOCTL_GET_GPUPROPS";
    let mut arg = GetGpuProps::default().to_bytes();
    let size = dev
        .ioctl(Fd::Device, GET_GPUPROPS, IoctlArg::Struct(&mut arg))
        .map_err(|source| GpuError::Ioctl { op: OP, source })?;
    let size = usize::try_from(size).unwrap_or(0);
    if size > MAX_PROPS_BYTES {
        return Err(PropsError::TooLarge(size).into());
    }
    let mut buffer = vec![0u8; size];
    let mut arg = GetGpuProps {
        buffer: 0,
        size: size as u32,
        flags: 0,
    }
    .to_bytes();
    let written = dev
        .ioctl(
            Fd::Device,
            GET_GPUPROPS,
            IoctlArg::StructWithBuffer {
                arg: &mut arg,
                ptr_offset: 0,
                buffer: &mut buffer,
            },
        )
        .map_err(|source| GpuError::Ioctl { op: OP, source })?;
    let written = usize::try_from(written).unwrap_or(0).min(size);
    Ok(decode_props_buffer(&buffer[..written])?)
}

/// Encodes one GET_GPUPROPS record (the driver side; used by the simulator and tests).
pub fn encode_record(out: &mut Vec<u8>, id: u32, size_code: u32, value: u64) {
    out.extend_from_slice(&((id << 2) | (size_code & 3)).to_le_bytes());
    out.extend_from_slice(&value.to_le_bytes()[..1 << (size_code & 3)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_buffer() -> Vec<u8> {
        let mut b = Vec::new();
        encode_record(&mut b, prop::PRODUCT_ID, 2, 0x9002);
        encode_record(&mut b, prop::L2_NUM_L2_SLICES, 0, 2);
        encode_record(&mut b, prop::RAW_L2_FEATURES, 2, 0x0713_0206);
        encode_record(&mut b, prop::RAW_GPU_ID, 3, 0x9002_0010);
        encode_record(&mut b, prop::COHERENCY_NUM_CORE_GROUPS, 2, 1);
        encode_record(&mut b, prop::COHERENCY_GROUP_0, 3, 0b1011);
        b
    }

    #[test]
    fn decodes_records() {
        let p = decode_props_buffer(&sample_buffer()).unwrap();
        assert_eq!(p.gpu_id, 0x9002_0010);
        assert_eq!(p.shader_core_mask, 0b1011);
        assert_eq!(p.num_cores(), 3);
        assert_eq!(p.l2_slices, 2);
        assert_eq!(p.bus_width_bytes(), 16);
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let b = sample_buffer();
        for n in 0..b.len() {
            assert!(decode_props_buffer(&b[..n]).is_err(), "prefix {n}");
        }
        assert_eq!(
            decode_props_buffer(&b[..2]),
            Err(PropsError::TrailingBytes(2))
        );
        assert_eq!(
            decode_props_buffer(&b[..5]),
            Err(PropsError::Truncated { id: 1, offset: 0 })
        );
    }

    #[test]
    fn missing_and_implausible_values_are_typed() {
        let mut b = Vec::new();
        encode_record(&mut b, prop::RAW_GPU_ID, 2, 0x9002_0010);
        assert_eq!(
            decode_props_buffer(&b),
            Err(PropsError::Missing("L2_NUM_L2_SLICES"))
        );
        assert_eq!(
            decode_props_buffer(&[]),
            Err(PropsError::Missing("RAW_GPU_ID"))
        );
        let mut b = sample_buffer();
        encode_record(&mut b, prop::RAW_L2_FEATURES, 2, 0x1F00_0000);
        assert_eq!(
            decode_props_buffer(&b),
            Err(PropsError::BusWidth(0x1F00_0000))
        );
        let mut b = sample_buffer();
        encode_record(&mut b, prop::COHERENCY_GROUP_0, 3, 0);
        encode_record(&mut b, prop::RAW_SHADER_PRESENT, 3, 0);
        assert!(matches!(
            decode_props_buffer(&b),
            Err(PropsError::NoCores { .. })
        ));
    }

    #[test]
    fn uk_struct_offsets() {
        let mut b = [0u8; UK_GPU_PROPS_SIZE];
        b[uk_offset::PRODUCT_ID..][..4].copy_from_slice(&0x0860u32.to_ne_bytes());
        b[uk_offset::NUM_L2_SLICES] = 1;
        b[uk_offset::L2_FEATURES..][..4].copy_from_slice(&0x0700_0000u32.to_ne_bytes());
        b[uk_offset::NUM_CORE_GROUPS..][..4].copy_from_slice(&1u32.to_ne_bytes());
        b[uk_offset::GROUP_0_CORE_MASK..][..8].copy_from_slice(&0xFu64.to_ne_bytes());
        let p = decode_uk_props(&b).unwrap();
        assert_eq!(p.gpu_id, 0x0860_0000);
        assert_eq!(p.shader_core_mask, 0xF);
        assert_eq!(p.bus_width_bytes(), 16);
    }

    use crate::gpu::device::fake::FakeDevice;
    use proptest::prelude::{any, prop_assert_eq, proptest};

    #[test]
    fn oversized_and_failing_property_answers() {
        let jm = DriverVersion {
            interface: Interface::Jm,
            major: 11,
            minor: 30,
        };
        let mut huge = FakeDevice::new(|_, _| Ok(1 << 20));
        assert!(matches!(
            read_props(&mut huge, jm),
            Err(GpuError::Props(PropsError::TooLarge(0x10_0000)))
        ));
        let uk = DriverVersion {
            interface: Interface::LegacyUk,
            major: 10,
            minor: 6,
        };
        let mut status = FakeDevice::new(|_, arg| {
            arg[..4].copy_from_slice(&5u32.to_ne_bytes());
            Ok(0)
        });
        assert!(matches!(
            read_props(&mut status, uk),
            Err(GpuError::UkStatus { ret: 5, .. })
        ));
    }

    proptest! {
        #[test]
        fn records_round_trip(records in proptest::collection::vec((0u32..100, 0u32..4, any::<u64>()), 0..40)) {
            let mut buf = Vec::new();
            for &(id, size, value) in &records {
                encode_record(&mut buf, id, size, value);
            }
            let parsed: Vec<PropRecord> = parse_records(&buf).collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(parsed.len(), records.len());
            for (p, &(id, size, value)) in parsed.iter().zip(&records) {
                let mask = if size == 3 { u64::MAX } else { (1u64 << (8 << size)) - 1 };
                prop_assert_eq!(*p, PropRecord { id, value: value & mask });
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode_props_buffer(&bytes);
            let mut uk = [0u8; UK_GPU_PROPS_SIZE];
            uk[..bytes.len()].copy_from_slice(&bytes);
            let _ = decode_uk_props(&uk);
        }
    }
}
