//! The simulated kinstr_prfcnt reader: block enumeration, request parsing, and sample slots of
//! metadata items plus u64 counter values in the mapped buffer.

use std::collections::VecDeque;
use std::io;

use rustix::io::Errno;

use super::config::Fault;
use super::driver::Driver;
use crate::gpu::device::IoctlArg;
use crate::gpu::dump::{FIRST_COUNTER, HEADER_ENABLE_MASK};
use crate::gpu::ioctl::*;
use crate::gpu::kinstr::{
    item, ENUM_ITEM_SIZE, METADATA_ITEM_SIZE, REQUEST_ITEM_SIZE, SAMPLE_FLAG_ERROR,
};
use crate::gpu::tables::BlockKind;

/// Sample slots in the mapping.
const SLOTS: usize = 4;

#[derive(Debug)]
pub(in crate::gpu::sim) struct KinstrModel {
    /// `(kind, block_idx, physical instance)` of every block in a sample.
    blocks: Vec<(BlockKind, u8, u32)>,
    values: usize,
    enable: [[u64; 2]; 4],
    slot_bytes: usize,
    memory: Vec<u8>,
    mapped: usize,
    started: bool,
    pending: VecDeque<(u64, usize)>,
    held: Vec<usize>,
    seq: u64,
    /// The period of periodic mode, `None` in manual mode.
    period_ns: Option<u64>,
}

fn instances(driver: &Driver) -> Vec<(BlockKind, u8, u32)> {
    // kbase lists blocks by slot number; over the dummy model every slot, absent ones reading
    // zero, on a real GPU only the present L2 slices and cores.
    let c = &driver.config;
    let [_, _, memory, shader] = c.slots();
    let mut v = vec![(BlockKind::FrontEnd, 0, 0), (BlockKind::Tiler, 0, 0)];
    let listed = |kind, i| c.dummy_model || c.is_present(kind, i);
    v.extend(
        (0..memory)
            .filter(|&i| listed(BlockKind::Memory, i))
            .map(|i| (BlockKind::Memory, i as u8, i)),
    );
    v.extend(
        (0..shader)
            .filter(|&i| listed(BlockKind::ShaderCore, i))
            .map(|i| (BlockKind::ShaderCore, i as u8, i)),
    );
    v
}

fn full_mask(values: u16) -> [u64; 2] {
    if values >= 128 {
        [u64::MAX, u64::MAX]
    } else {
        [u64::MAX, 0]
    }
}

impl KinstrModel {
    fn enum_items(driver: &Driver) -> Vec<u8> {
        let c = &driver.config;
        let [_, _, memory, shader] = c.slots();
        // Instance counts are slot counts, as kbase's hwcnt metadata has them (`fls64` of the core
        // mask on a real GPU, the model's maxima over the dummy model).
        let counts = [
            (BlockKind::FrontEnd, 1u16),
            (BlockKind::Tiler, 1),
            (BlockKind::Memory, memory as u16),
            (BlockKind::ShaderCore, shader as u16),
        ];
        let mut out = Vec::new();
        let mut push = |ty: u16, fill: &dyn Fn(&mut [u8])| {
            let mut it = [0u8; ENUM_ITEM_SIZE];
            it[0..2].copy_from_slice(&ty.to_ne_bytes());
            fill(&mut it);
            out.extend_from_slice(&it);
        };
        if c.dummy_model {
            // r35p0 lists its two request types (mode, enable) first, then the blocks, and has no
            // sample-information item.
            for request_type in 0u16..2 {
                push(item::ENUM_REQUEST, &|it| {
                    it[8..10].copy_from_slice(&request_type.to_ne_bytes());
                    it[12..16].copy_from_slice(&1u32.to_ne_bytes());
                });
            }
        }
        for (kind, n) in counts {
            push(item::ENUM_BLOCK, &|it| {
                it[8] = kind as u8;
                it[12..14].copy_from_slice(&n.to_ne_bytes());
                it[14..16].copy_from_slice(&c.values_per_block.to_ne_bytes());
                let m = full_mask(c.values_per_block);
                it[16..24].copy_from_slice(&m[0].to_ne_bytes());
                it[24..32].copy_from_slice(&m[1].to_ne_bytes());
            });
        }
        if !c.dummy_model {
            for request_type in 0u16..3 {
                push(item::ENUM_REQUEST, &|it| {
                    it[8..10].copy_from_slice(&request_type.to_ne_bytes());
                    it[12..16].copy_from_slice(&1u32.to_ne_bytes());
                });
            }
            push(item::ENUM_SAMPLE_INFO, &|it| {
                it[8..12].copy_from_slice(&2u32.to_ne_bytes())
            });
        }
        push(item::ENUM_BLOCK, &|_| {}); // sentinel
        out
    }

    pub(super) fn enum_info(driver: &mut Driver, arg: IoctlArg<'_>) -> io::Result<i32> {
        let items = Self::enum_items(driver);
        let count = (items.len() / ENUM_ITEM_SIZE) as u32;
        let item_size = if driver.has(Fault::ShortEnumItems) {
            16
        } else {
            ENUM_ITEM_SIZE as u32
        };
        match arg {
            IoctlArg::Struct(b) if b.len() >= KinstrEnumInfo::SIZE => {
                if KinstrEnumInfo::decode(b).info_list_ptr != 0 {
                    return Err(Errno::FAULT.into());
                }
                KinstrEnumInfo {
                    info_item_size: item_size,
                    info_item_count: count,
                    info_list_ptr: 0,
                }
                .encode(b);
                Ok(0)
            }
            IoctlArg::StructWithBuffer { arg, buffer, .. } => {
                let req = KinstrEnumInfo::decode(arg);
                if req.info_item_size as usize != ENUM_ITEM_SIZE || req.info_item_count != count {
                    return Err(Errno::INVAL.into());
                }
                if buffer.len() < items.len() {
                    return Err(Errno::FAULT.into());
                }
                buffer[..items.len()].copy_from_slice(&items);
                Ok(0)
            }
            _ => Err(Errno::FAULT.into()),
        }
    }

    pub(super) fn setup(driver: &mut Driver, arg: IoctlArg<'_>) -> io::Result<KinstrModel> {
        let IoctlArg::StructWithBuffer { arg, buffer, .. } = arg else {
            return Err(Errno::FAULT.into());
        };
        let req = KinstrSetup::decode(arg);
        if req.request_item_size as usize != REQUEST_ITEM_SIZE || req.request_item_count < 2 {
            return Err(Errno::INVAL.into());
        }
        let total = req.request_item_count as usize * REQUEST_ITEM_SIZE;
        let requests = buffer.get(..total).ok_or(Errno::FAULT)?;
        let values = driver.config.values_per_block;
        let mut enable = [[0u64; 2]; 4];
        let mut mode = None;
        let mut terminated = false;
        for it in requests.chunks_exact(REQUEST_ITEM_SIZE) {
            let u64_at = |at: usize| {
                let mut v = [0u8; 8];
                v.copy_from_slice(&it[at..at + 8]);
                u64::from_ne_bytes(v)
            };
            match u16::from_ne_bytes([it[0], it[1]]) {
                item::NONE => {
                    terminated = true;
                    break;
                }
                item::REQUEST_MODE => mode = Some((it[8], u64_at(16))),
                item::REQUEST_ENABLE => {
                    let kind = BlockKind::from_prfcnt(it[8]).ok_or(Errno::INVAL)?;
                    if it[9] != 0 {
                        return Err(Errno::INVAL.into());
                    }
                    let m = full_mask(values);
                    enable[kind.index()] = [u64_at(16) & m[0], u64_at(24) & m[1]];
                }
                item::REQUEST_SCOPE => {}
                _ => return Err(io::Error::from(Errno::INVAL)),
            }
        }
        // Manual mode, or periodic mode with a period of at least the driver's 100 µs.
        let period_ns = match mode {
            Some((0, _)) => None,
            Some((1, period)) if period >= 100_000 && !driver.has(Fault::NoPeriodicDumps) => {
                Some(period)
            }
            _ => return Err(io::Error::from(Errno::INVAL)),
        };
        if !terminated {
            return Err(Errno::INVAL.into());
        }
        let blocks = instances(driver);
        let meta_items = blocks.len() + 3;
        let slot_bytes = meta_items * METADATA_ITEM_SIZE + blocks.len() * usize::from(values) * 8;
        KinstrSetupOut {
            metadata_item_size: METADATA_ITEM_SIZE as u32,
            mmap_size_bytes: (slot_bytes * SLOTS) as u32,
        }
        .encode(arg);
        Ok(KinstrModel {
            blocks,
            values: usize::from(values),
            enable,
            slot_bytes,
            memory: vec![0; slot_bytes * SLOTS],
            mapped: 0,
            started: false,
            pending: VecDeque::new(),
            held: Vec::new(),
            seq: 0,
            period_ns,
        })
    }

    pub(super) fn memory(&self) -> (&[u8], usize) {
        (&self.memory, self.mapped)
    }

    pub(super) fn ready(&self) -> bool {
        !self.pending.is_empty()
    }

    /// In periodic mode, the sample the driver takes while a started reader waits for one.
    pub(super) fn periodic_tick(&mut self, driver: &mut Driver) -> io::Result<()> {
        if self.period_ns.is_none() || !self.started || !self.pending.is_empty() {
            return Ok(());
        }
        match self.take_sample(driver, 0) {
            Err(e) if e.raw_os_error() == Some(Errno::BUSY.raw_os_error()) => Ok(()),
            other => other,
        }
    }

    pub(super) fn mmap(&mut self, len: usize) -> io::Result<()> {
        if len == 0 || len > self.memory.len() || self.mapped != 0 {
            return Err(Errno::INVAL.into());
        }
        self.mapped = len;
        Ok(())
    }

    fn take_sample(&mut self, driver: &mut Driver, user_data: u64) -> io::Result<()> {
        let busy: Vec<usize> = self
            .pending
            .iter()
            .map(|p| p.1)
            .chain(self.held.iter().copied())
            .collect();
        let Some(slot) = (0..SLOTS)
            .map(|s| s * self.slot_bytes)
            .find(|o| !busy.contains(o))
        else {
            return Err(Errno::BUSY.into());
        };
        let (k, span, end) = driver.tick(self.period_ns);
        let counting = driver.counting(k);
        self.seq += 1;
        let flags = if driver.has(Fault::SampleErrorFlag) {
            SAMPLE_FLAG_ERROR
        } else {
            0
        };
        let mem = &mut self.memory[slot..slot + self.slot_bytes];
        mem.fill(0);
        let meta_len = (self.blocks.len() + 3) * METADATA_ITEM_SIZE;
        let mut put = |at: usize, bytes: &[u8]| mem[at..at + bytes.len()].copy_from_slice(bytes);
        put(0, &item::METADATA_SAMPLE.to_ne_bytes());
        put(8, &(end - span).to_ne_bytes());
        put(16, &end.to_ne_bytes());
        put(24, &self.seq.to_ne_bytes());
        put(32, &user_data.to_ne_bytes());
        put(40, &flags.to_ne_bytes());
        put(METADATA_ITEM_SIZE, &item::METADATA_CLOCK.to_ne_bytes());
        put(METADATA_ITEM_SIZE + 8, &1u32.to_ne_bytes());
        for (n, &(kind, block_idx, instance)) in self.blocks.iter().enumerate() {
            let at = (n + 2) * METADATA_ITEM_SIZE;
            let values_at = meta_len + n * self.values * 8;
            put(at, &item::METADATA_BLOCK.to_ne_bytes());
            put(at + 8, &[kind as u8, block_idx, 0]);
            put(at + 12, &0b1_0101u32.to_ne_bytes()); // on, available, normal
            put(at + 16, &((slot + values_at) as u32).to_ne_bytes());
            let mask = self.enable[kind.index()];
            put(values_at + HEADER_ENABLE_MASK * 8, &mask[0].to_ne_bytes());
            if !counting {
                continue;
            }
            for index in FIRST_COUNTER..self.values {
                if mask[index / 64] & (1 << (index % 64)) == 0
                    || !driver.config.is_present(kind, instance)
                {
                    continue;
                }
                let v = driver.workload.value(k, kind, instance, index as u32);
                put(values_at + index * 8, &v.to_ne_bytes());
            }
        }
        // The NONE terminator after the blocks is already zero.
        if !driver.has(Fault::DumpNeverCompletes) {
            self.pending.push_back((self.seq, slot));
        }
        Ok(())
    }

    pub(super) fn ioctl(
        &mut self,
        driver: &mut Driver,
        request: u32,
        arg: IoctlArg<'_>,
    ) -> io::Result<i32> {
        let IoctlArg::Struct(b) = arg else {
            return Err(Errno::FAULT.into());
        };
        if b.len() < 16 {
            return Err(Errno::FAULT.into());
        }
        match request {
            PRFCNT_ISSUE_COMMAND => {
                let cmd = KinstrControlCmd::decode(b);
                match cmd.cmd {
                    PRFCNT_CMD_START if !self.started => self.started = true,
                    PRFCNT_CMD_STOP if self.started => self.started = false,
                    PRFCNT_CMD_SAMPLE_SYNC | PRFCNT_CMD_SAMPLE_ASYNC if self.started => {
                        self.take_sample(driver, cmd.user_data)?
                    }
                    PRFCNT_CMD_DISCARD => self.pending.clear(),
                    _ => return Err(io::Error::from(Errno::INVAL)),
                }
                Ok(0)
            }
            PRFCNT_GET_SAMPLE => {
                let (sequence, offset) = self.pending.pop_front().ok_or(Errno::AGAIN)?;
                self.held.push(offset);
                let reported = if driver.has(Fault::TruncatedSampleMetadata) {
                    (self.mapped.saturating_sub(METADATA_ITEM_SIZE / 2)) as u64
                } else {
                    offset as u64
                };
                KinstrSampleAccess {
                    sequence,
                    sample_metadata_offset: reported,
                }
                .encode(b);
                Ok(0)
            }
            PRFCNT_PUT_SAMPLE => {
                let access = KinstrSampleAccess::decode(b);
                let pos = self
                    .held
                    .iter()
                    .position(|&o| o as u64 == access.sample_metadata_offset)
                    .or_else(|| {
                        driver
                            .has(Fault::TruncatedSampleMetadata)
                            .then_some(0)
                            .filter(|_| !self.held.is_empty())
                    })
                    .ok_or(Errno::INVAL)?;
                self.held.remove(pos);
                Ok(0)
            }
            _ => Err(Errno::NOTTY.into()),
        }
    }
}
