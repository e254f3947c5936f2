//! kinstr_prfcnt, the counter interface of newer kbase drivers (required for Mali-G715 and later):
//! the flex-list items of ENUM_INFO, SETUP requests and sample metadata, and the reader built on them.

use std::time::Duration;

use super::device::{Fd, IoctlArg, KbaseDevice, PollOutcome};
use super::dump::{BlockSums, MAX_VALUES_PER_BLOCK};
use super::error::GpuError;
use super::ioctl::{
    KinstrControlCmd, KinstrEnumInfo, KinstrSampleAccess, KinstrSetup, KinstrSetupOut, Wire,
    KINSTR_PRFCNT_ENUM_INFO, KINSTR_PRFCNT_SETUP, PRFCNT_CMD_SAMPLE_SYNC, PRFCNT_CMD_START,
    PRFCNT_CMD_STOP, PRFCNT_GET_SAMPLE, PRFCNT_ISSUE_COMMAND, PRFCNT_PUT_SAMPLE,
};
use super::tables::BlockKind;

/// Size of an enumeration item.
pub const ENUM_ITEM_SIZE: usize = 32;
/// Size of a request item.
pub const REQUEST_ITEM_SIZE: usize = 32;
/// Size of a metadata item.
pub const METADATA_ITEM_SIZE: usize = 48;
/// Most enumeration items accepted.
pub const MAX_ENUM_ITEMS: u32 = 1024;

/// Item type codes: `list << 12 | subtype`.
pub mod item {
    /// Enumeration: a counter block type (also the list terminator when it has no instances).
    pub const ENUM_BLOCK: u16 = 0x0000;
    /// Enumeration: a supported request type.
    pub const ENUM_REQUEST: u16 = 0x0001;
    /// Enumeration: sample information (clock domains).
    pub const ENUM_SAMPLE_INFO: u16 = 0x0002;
    /// Request: sampling mode.
    pub const REQUEST_MODE: u16 = 0x1000;
    /// Request: enable counters of one block type.
    pub const REQUEST_ENABLE: u16 = 0x1001;
    /// Request: scope.
    pub const REQUEST_SCOPE: u16 = 0x1002;
    /// Terminator of request and metadata lists.
    pub const NONE: u16 = 0;
    /// Metadata: sample header.
    pub const METADATA_SAMPLE: u16 = 0x2000;
    /// Metadata: clock cycles.
    pub const METADATA_CLOCK: u16 = 0x2001;
    /// Metadata: one counter block.
    pub const METADATA_BLOCK: u16 = 0x2002;
}

/// Sample flag: the sample period was stretched (counters may have overflowed).
pub const SAMPLE_FLAG_OVERFLOW: u32 = 1 << 0;
/// Sample flag: the sample is erroneous.
pub const SAMPLE_FLAG_ERROR: u32 = 1 << 30;

/// Malformed kinstr_prfcnt data from the driver.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MetadataError {
    /// An item size smaller than the item it must hold.
    #[error("item size {size} is smaller than {needed}")]
    ItemTooSmall {
        /// Reported size.
        size: u32,
        /// Needed size.
        needed: usize,
    },
    /// More enumeration items than any driver reports.
    #[error("{0} enumeration items")]
    TooManyItems(u32),
    /// The list ended before its terminator.
    #[error("item list is truncated")]
    Truncated,
    /// The enumeration lists no counter blocks.
    #[error("the driver enumerates no counter blocks")]
    NoBlocks,
    /// Blocks disagree on set or number of values, or the number is not 64 or 128.
    #[error("inconsistent block enumeration ({0} values)")]
    InconsistentBlocks(u16),
    /// A metadata item has an unknown type.
    #[error("unknown metadata item type {0:#06x}")]
    UnknownItem(u16),
    /// A metadata block refers to values outside the mapping.
    #[error("block values at {offset} outside the {len}-byte mapping")]
    ValuesOutOfBounds {
        /// Values offset.
        offset: u64,
        /// Mapping length.
        len: usize,
    },
    /// The sample has no SAMPLE item.
    #[error("sample metadata without a SAMPLE item")]
    NoSampleItem,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_ne_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(v)
}

/// One enumerated counter block type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumBlock {
    /// Raw block type (0 FE, 1 tiler, 2 memory, 3 shader core, 4 firmware, 5 CSG).
    pub block_type: u8,
    /// Counter set (0 primary).
    pub set: u8,
    /// Number of instances.
    pub num_instances: u16,
    /// Counters per block.
    pub num_values: u16,
    /// Which counters exist.
    pub counter_mask: [u64; 2],
}

/// The decoded ENUM_INFO answer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnumInfo {
    /// Counter blocks.
    pub blocks: Vec<EnumBlock>,
    /// Number of clock domains in samples.
    pub clock_domains: u32,
    /// Request types offered: `(request_item_type, versions_mask)`.
    pub requests: Vec<(u16, u32)>,
}

impl EnumInfo {
    /// Counters per block shared by all blocks.
    pub fn values_per_block(&self) -> u16 {
        self.blocks.first().map_or(0, |b| b.num_values)
    }

    /// Block instances per counter kind (front end, tiler, memory, shader core), as the driver
    /// dumps them; block types without counters here (firmware, CSG) are not counted.
    pub fn slots(&self) -> [u32; 4] {
        let mut slots = [0u32; 4];
        for b in &self.blocks {
            if let Some(kind) = BlockKind::from_prfcnt(b.block_type) {
                slots[kind.index()] += u32::from(b.num_instances);
            }
        }
        slots
    }
}

/// Decodes `count` enumeration items of `size` bytes.
pub fn parse_enum(bytes: &[u8], size: u32, count: u32) -> Result<EnumInfo, MetadataError> {
    if (size as usize) < ENUM_ITEM_SIZE {
        return Err(MetadataError::ItemTooSmall {
            size,
            needed: ENUM_ITEM_SIZE,
        });
    }
    if count > MAX_ENUM_ITEMS {
        return Err(MetadataError::TooManyItems(count));
    }
    let mut info = EnumInfo::default();
    let mut terminated = false;
    for i in 0..count as usize {
        let Some(it) = bytes.get(i * size as usize..i * size as usize + ENUM_ITEM_SIZE) else {
            return Err(MetadataError::Truncated);
        };
        match u16_at(it, 0) {
            item::ENUM_BLOCK => {
                let block = EnumBlock {
                    block_type: it[8],
                    set: it[9],
                    num_instances: u16_at(it, 12),
                    num_values: u16_at(it, 14),
                    counter_mask: [u64_at(it, 16), u64_at(it, 24)],
                };
                if block.num_instances == 0 && block.num_values == 0 {
                    terminated = true;
                    break;
                }
                info.blocks.push(block);
            }
            item::ENUM_REQUEST => info.requests.push((u16_at(it, 8), u32_at(it, 12))),
            item::ENUM_SAMPLE_INFO => info.clock_domains = u32_at(it, 8),
            _ => {} // newer item types are skipped, as the driver's versioning intends
        }
    }
    if !terminated && count > 0 && info.blocks.is_empty() {
        return Err(MetadataError::Truncated);
    }
    let first = info.blocks.first().ok_or(MetadataError::NoBlocks)?;
    let (set, values) = (first.set, first.num_values);
    if !(values == 64 || values == 128)
        || info
            .blocks
            .iter()
            .any(|b| b.set != set || b.num_values != values)
    {
        return Err(MetadataError::InconsistentBlocks(values));
    }
    Ok(info)
}

/// Encodes the SETUP requests: manual mode (`period_ns` `None`) or periodic mode with that period,
/// every counter of every enumerated block type enabled, then the NONE terminator.
pub fn encode_requests(info: &EnumInfo, period_ns: Option<u64>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut push = |ty: u16, fill: &dyn Fn(&mut [u8])| {
        let mut it = [0u8; REQUEST_ITEM_SIZE];
        it[0..2].copy_from_slice(&ty.to_ne_bytes());
        fill(&mut it);
        out.extend_from_slice(&it);
    };
    push(item::REQUEST_MODE, &|it| {
        if let Some(period) = period_ns {
            it[8] = 1;
            it[16..24].copy_from_slice(&period.to_ne_bytes());
        }
    });
    for b in &info.blocks {
        push(item::REQUEST_ENABLE, &|it| {
            it[8] = b.block_type;
            it[9] = b.set;
            it[16..24].copy_from_slice(&b.counter_mask[0].to_ne_bytes());
            it[24..32].copy_from_slice(&b.counter_mask[1].to_ne_bytes());
        });
    }
    push(item::NONE, &|_| {});
    out
}

/// The header of one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleHeader {
    /// Start of the sample, ns.
    pub timestamp_start: u64,
    /// End of the sample, ns.
    pub timestamp_stop: u64,
    /// Sequence number.
    pub seq: u64,
    /// Flags (`SAMPLE_FLAG_*`).
    pub flags: u32,
}

/// The kinstr_prfcnt reader of one device.
#[derive(Debug)]
pub struct KinstrReader {
    fd: i32,
    mmap_len: usize,
    item_size: usize,
    values_per_block: usize,
}

/// ENUM_INFO (two calls): the counter blocks the driver dumps, with their instance counts.
pub fn enumerate(dev: &mut dyn KbaseDevice) -> Result<EnumInfo, GpuError> {
    const OP: &str = "KBASE_IOCTL_KINSTR_PRFCNT_ENUM_INFO";
    let mut arg = KinstrEnumInfo::default().to_bytes();
    dev.ioctl(
        Fd::Device,
        KINSTR_PRFCNT_ENUM_INFO,
        IoctlArg::Struct(&mut arg),
    )
    .map_err(|source| GpuError::Ioctl { op: OP, source })?;
    let first = KinstrEnumInfo::decode(&arg);
    if (first.info_item_size as usize) < ENUM_ITEM_SIZE {
        return Err(MetadataError::ItemTooSmall {
            size: first.info_item_size,
            needed: ENUM_ITEM_SIZE,
        }
        .into());
    }
    if first.info_item_count > MAX_ENUM_ITEMS || first.info_item_size > 4096 {
        return Err(MetadataError::TooManyItems(first.info_item_count).into());
    }
    let mut list = vec![0u8; first.info_item_size as usize * first.info_item_count as usize];
    let mut arg = first.to_bytes();
    dev.ioctl(
        Fd::Device,
        KINSTR_PRFCNT_ENUM_INFO,
        IoctlArg::StructWithBuffer {
            arg: &mut arg,
            ptr_offset: 8,
            buffer: &mut list,
        },
    )
    .map_err(|source| GpuError::Ioctl { op: OP, source })?;
    Ok(parse_enum(
        &list,
        first.info_item_size,
        first.info_item_count,
    )?)
}

impl KinstrReader {
    /// SETUP with every counter of every block `info` enumerates, in manual mode (`period_ns`
    /// `None`: a sample per SAMPLE_SYNC) or periodic mode (the driver samples every period by
    /// itself once started), then mmap.
    pub fn setup(
        dev: &mut dyn KbaseDevice,
        info: &EnumInfo,
        period_ns: Option<u64>,
    ) -> Result<KinstrReader, GpuError> {
        let mut requests = encode_requests(info, period_ns);
        let mut arg = KinstrSetup {
            request_item_count: (requests.len() / REQUEST_ITEM_SIZE) as u32,
            request_item_size: REQUEST_ITEM_SIZE as u32,
            requests_ptr: 0,
        }
        .to_bytes();
        let fd = dev
            .ioctl(
                Fd::Device,
                KINSTR_PRFCNT_SETUP,
                IoctlArg::StructWithBuffer {
                    arg: &mut arg,
                    ptr_offset: 8,
                    buffer: &mut requests,
                },
            )
            .map_err(|source| GpuError::Ioctl {
                op: "KBASE_IOCTL_KINSTR_PRFCNT_SETUP",
                source,
            })?;
        let out = KinstrSetupOut::decode(&arg);
        let reader = KinstrReader {
            fd,
            mmap_len: out.mmap_size_bytes as usize,
            item_size: out.metadata_item_size as usize,
            values_per_block: info.values_per_block() as usize,
        };
        if reader.item_size < METADATA_ITEM_SIZE {
            let _ = dev.close(fd);
            return Err(MetadataError::ItemTooSmall {
                size: out.metadata_item_size,
                needed: METADATA_ITEM_SIZE,
            }
            .into());
        }
        if let Err(source) = dev.mmap(fd, reader.mmap_len) {
            let _ = dev.close(fd);
            return Err(GpuError::Ioctl {
                op: "mmap of the kinstr_prfcnt buffer",
                source,
            });
        }
        Ok(reader)
    }

    /// The reader fd.
    pub fn fd(&self) -> i32 {
        self.fd
    }

    fn command(&self, dev: &mut dyn KbaseDevice, cmd: u16, user_data: u64) -> Result<(), GpuError> {
        let mut arg = KinstrControlCmd {
            cmd,
            user_data,
            ..Default::default()
        }
        .to_bytes();
        dev.ioctl(
            Fd::Reader(self.fd),
            PRFCNT_ISSUE_COMMAND,
            IoctlArg::Struct(&mut arg),
        )
        .map_err(|source| GpuError::Ioctl {
            op: "KINSTR_PRFCNT_ISSUE_COMMAND",
            source,
        })?;
        Ok(())
    }

    /// START.
    pub fn start(&self, dev: &mut dyn KbaseDevice) -> Result<(), GpuError> {
        self.command(dev, PRFCNT_CMD_START, 0)
    }

    /// Closes a reader that was never started.
    pub fn close(self, dev: &mut dyn KbaseDevice) -> Result<(), GpuError> {
        dev.close(self.fd).map_err(|source| GpuError::Ioctl {
            op: "close of the kinstr_prfcnt fd",
            source,
        })
    }

    /// STOP, then closes the reader.
    pub fn stop(self, dev: &mut dyn KbaseDevice) -> Result<(), GpuError> {
        let stopped = self.command(dev, PRFCNT_CMD_STOP, 0);
        dev.close(self.fd).map_err(|source| GpuError::Ioctl {
            op: "close of the kinstr_prfcnt fd",
            source,
        })?;
        stopped
    }

    /// SAMPLE_SYNC, poll, GET_SAMPLE, sum the blocks, PUT_SAMPLE.
    pub fn sample(
        &self,
        dev: &mut dyn KbaseDevice,
        timeout: Duration,
        sums: &mut BlockSums,
    ) -> Result<SampleHeader, GpuError> {
        self.command(dev, PRFCNT_CMD_SAMPLE_SYNC, 0)?;
        self.next_sample(dev, timeout, sums)
    }

    /// Waits up to `timeout` for the next sample (in periodic mode, the driver's own), sums its
    /// blocks and gives it back.
    pub fn next_sample(
        &self,
        dev: &mut dyn KbaseDevice,
        timeout: Duration,
        sums: &mut BlockSums,
    ) -> Result<SampleHeader, GpuError> {
        match dev
            .poll(self.fd, timeout)
            .map_err(|source| GpuError::Ioctl { op: "poll", source })?
        {
            PollOutcome::Ready => {}
            PollOutcome::TimedOut => return Err(GpuError::Timeout { waited: timeout }),
            PollOutcome::HungUp => return Err(GpuError::HungUp),
        }
        let mut arg = KinstrSampleAccess::default().to_bytes();
        dev.ioctl(
            Fd::Reader(self.fd),
            PRFCNT_GET_SAMPLE,
            IoctlArg::Struct(&mut arg),
        )
        .map_err(|source| GpuError::Ioctl {
            op: "KINSTR_PRFCNT_GET_SAMPLE",
            source,
        })?;
        let access = KinstrSampleAccess::decode(&arg);
        let parsed = self.read_metadata(dev, access.sample_metadata_offset, sums);
        let put = dev
            .ioctl(
                Fd::Reader(self.fd),
                PRFCNT_PUT_SAMPLE,
                IoctlArg::Struct(&mut arg),
            )
            .map_err(|source| GpuError::Ioctl {
                op: "KINSTR_PRFCNT_PUT_SAMPLE",
                source,
            });
        let header = parsed?;
        put?;
        if header.flags & SAMPLE_FLAG_ERROR != 0 {
            return Err(GpuError::SampleError);
        }
        Ok(header)
    }

    fn read_metadata(
        &self,
        dev: &dyn KbaseDevice,
        offset: u64,
        sums: &mut BlockSums,
    ) -> Result<SampleHeader, GpuError> {
        let len = self.mmap_len;
        if offset >= len as u64 {
            return Err(GpuError::BadBufferIndex {
                index: offset,
                count: len as u64,
            });
        }
        let mut pos = offset as usize;
        let mut header = None;
        let mut item_bytes = [0u8; METADATA_ITEM_SIZE];
        let mut values = vec![0u8; self.values_per_block * 8];
        let read = |dev: &dyn KbaseDevice, at: usize, out: &mut [u8]| {
            dev.read_mapped(self.fd, at, out)
                .map_err(|source| GpuError::Ioctl {
                    op: "read of the sample buffer",
                    source,
                })
        };
        loop {
            if pos
                .checked_add(METADATA_ITEM_SIZE)
                .is_none_or(|end| end > len)
            {
                return Err(MetadataError::Truncated.into());
            }
            read(dev, pos, &mut item_bytes)?;
            let it = &item_bytes;
            match u16_at(it, 0) {
                item::NONE => break,
                item::METADATA_SAMPLE => {
                    header = Some(SampleHeader {
                        timestamp_start: u64_at(it, 8),
                        timestamp_stop: u64_at(it, 16),
                        seq: u64_at(it, 24),
                        flags: u32_at(it, 40),
                    })
                }
                item::METADATA_CLOCK => {}
                item::METADATA_BLOCK => {
                    let values_offset = u64::from(u32_at(it, 16));
                    let end = values_offset + values.len() as u64;
                    if end > len as u64 {
                        return Err(MetadataError::ValuesOutOfBounds {
                            offset: values_offset,
                            len,
                        }
                        .into());
                    }
                    // Every block the driver lists is summed: a real GPU's driver lists the
                    // available ones, the dummy model's absent ones read zero.
                    if let Some(kind) = BlockKind::from_prfcnt(it[8]) {
                        read(dev, values_offset as usize, &mut values)?;
                        sums.add_block(
                            kind,
                            values
                                .chunks_exact(8)
                                .take(MAX_VALUES_PER_BLOCK)
                                .map(|c| u64_at(c, 0)),
                        );
                    }
                }
                other => return Err(MetadataError::UnknownItem(other).into()),
            }
            pos += self.item_size;
        }
        header.ok_or_else(|| MetadataError::NoSampleItem.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enum_item(ty: u16, f: impl Fn(&mut [u8])) -> [u8; 32] {
        let mut it = [0u8; 32];
        it[0..2].copy_from_slice(&ty.to_ne_bytes());
        f(&mut it);
        it
    }

    fn block(ty: u8, n: u16, values: u16) -> [u8; 32] {
        enum_item(item::ENUM_BLOCK, |it| {
            it[8] = ty;
            it[12..14].copy_from_slice(&n.to_ne_bytes());
            it[14..16].copy_from_slice(&values.to_ne_bytes());
        })
    }

    #[test]
    fn parses_blocks_until_the_sentinel() {
        let mut b = Vec::new();
        b.extend_from_slice(&block(0, 1, 128));
        b.extend_from_slice(&block(3, 4, 128));
        b.extend_from_slice(&enum_item(item::ENUM_SAMPLE_INFO, |it| it[8] = 2));
        b.extend_from_slice(&block(0, 0, 0));
        let info = parse_enum(&b, 32, 4).unwrap();
        assert_eq!(info.blocks.len(), 2);
        assert_eq!(info.clock_domains, 2);
        assert_eq!(info.values_per_block(), 128);
        let requests = encode_requests(&info, None);
        assert_eq!(requests.len(), 4 * REQUEST_ITEM_SIZE);
        assert_eq!(u16_at(&requests, 32), item::REQUEST_ENABLE);
    }

    #[test]
    fn malformed_enumerations_are_typed() {
        let good = block(0, 1, 64);
        assert_eq!(
            parse_enum(&good, 16, 1),
            Err(MetadataError::ItemTooSmall {
                size: 16,
                needed: 32
            })
        );
        assert_eq!(parse_enum(&good, 32, 2), Err(MetadataError::Truncated));
        assert_eq!(
            parse_enum(&good[..20], 32, 1),
            Err(MetadataError::Truncated)
        );
        assert_eq!(parse_enum(&[], 32, 0), Err(MetadataError::NoBlocks));
        assert_eq!(
            parse_enum(&good, 32, 5000),
            Err(MetadataError::TooManyItems(5000))
        );
        let mut mixed = Vec::new();
        mixed.extend_from_slice(&block(0, 1, 64));
        mixed.extend_from_slice(&block(1, 1, 128));
        assert_eq!(
            parse_enum(&mixed, 32, 2),
            Err(MetadataError::InconsistentBlocks(64))
        );
        assert_eq!(
            parse_enum(&block(0, 1, 100), 32, 1),
            Err(MetadataError::InconsistentBlocks(100))
        );
    }

    use crate::gpu::device::fake::FakeDevice;
    use crate::gpu::error::GpuError;

    fn metadata_item(ty: u16, fill: impl Fn(&mut [u8])) -> Vec<u8> {
        let mut it = vec![0u8; METADATA_ITEM_SIZE];
        it[0..2].copy_from_slice(&ty.to_ne_bytes());
        fill(&mut it);
        it
    }

    fn reader_over(memory: Vec<u8>) -> (KinstrReader, FakeDevice) {
        let mut dev = FakeDevice::new(|_, _| Ok(0));
        let reader = KinstrReader {
            fd: 3,
            mmap_len: memory.len(),
            item_size: METADATA_ITEM_SIZE,
            values_per_block: 64,
        };
        dev.memory = memory;
        (reader, dev)
    }

    #[test]
    fn malformed_sample_metadata_is_typed() {
        let sample = metadata_item(item::METADATA_SAMPLE, |_| {});
        let none = metadata_item(item::NONE, |_| {});
        let mut sums = BlockSums::default();

        let (r, dev) = reader_over([metadata_item(0x2FFF, |_| {}), none.clone()].concat());
        assert!(matches!(
            r.read_metadata(&dev, 0, &mut sums),
            Err(GpuError::Metadata(MetadataError::UnknownItem(0x2FFF)))
        ));

        let block = metadata_item(item::METADATA_BLOCK, |it| {
            it[16..20].copy_from_slice(&4000u32.to_ne_bytes())
        });
        let (r, dev) = reader_over([sample.clone(), block, none.clone()].concat());
        assert!(matches!(
            r.read_metadata(&dev, 0, &mut sums),
            Err(GpuError::Metadata(MetadataError::ValuesOutOfBounds {
                offset: 4000,
                ..
            }))
        ));

        let (r, dev) = reader_over([none.clone(), none.clone()].concat());
        assert!(matches!(
            r.read_metadata(&dev, 0, &mut sums),
            Err(GpuError::Metadata(MetadataError::NoSampleItem))
        ));

        let (r, dev) = reader_over([sample.clone(), none.clone()].concat());
        assert!(matches!(
            r.read_metadata(&dev, 96, &mut sums),
            Err(GpuError::BadBufferIndex {
                index: 96,
                count: 96
            })
        ));
        assert!(r.read_metadata(&dev, 0, &mut sums).is_ok());

        // Blocks of a type that carries no counters here (firmware) are skipped.
        let fw = metadata_item(item::METADATA_BLOCK, |it| it[8] = 4);
        let (r, dev) = reader_over([sample, fw, none, vec![0u8; 64 * 8]].concat());
        assert!(r.read_metadata(&dev, 0, &mut sums).is_ok());
    }

    #[test]
    fn setup_rejects_small_metadata_items() {
        let mut dev = FakeDevice::new(|request, arg| {
            match request {
                KINSTR_PRFCNT_ENUM_INFO => KinstrEnumInfo {
                    info_item_size: 32,
                    info_item_count: 1,
                    info_list_ptr: 0,
                }
                .encode(arg),
                KINSTR_PRFCNT_SETUP => KinstrSetupOut {
                    metadata_item_size: 8,
                    mmap_size_bytes: 4096,
                }
                .encode(arg),
                _ => {}
            }
            Ok(7)
        });
        // The fake leaves the enumeration buffer zeroed: a lone sentinel, no blocks.
        assert!(matches!(
            enumerate(&mut dev),
            Err(GpuError::Metadata(MetadataError::NoBlocks))
        ));
        let mut too_many = FakeDevice::new(|_, arg| {
            KinstrEnumInfo {
                info_item_size: 32,
                info_item_count: 5000,
                info_list_ptr: 0,
            }
            .encode(arg);
            Ok(0)
        });
        assert!(matches!(
            enumerate(&mut too_many),
            Err(GpuError::Metadata(MetadataError::TooManyItems(5000)))
        ));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_enumerations_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), size in 0u32..80, count in 0u32..12) {
            let _ = parse_enum(&bytes, size, count);
        }
    }
}
