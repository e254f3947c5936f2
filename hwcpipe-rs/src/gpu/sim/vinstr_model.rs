//! The simulated vinstr hwcnt reader: a ring of dump buffers, filled by DUMP from the workload.

use std::collections::VecDeque;
use std::io;

use rustix::io::Errno;

use super::config::{Fault, SimConfig};
use super::driver::Driver;
use crate::gpu::device::IoctlArg;
use crate::gpu::dump::{
    BlockLayout, FIRST_COUNTER, HEADER_ENABLE_MASK, VINSTR_BLOCK_BYTES, VINSTR_VALUES_PER_BLOCK,
};
use crate::gpu::ioctl::*;

#[derive(Debug)]
pub(in crate::gpu::sim) struct VinstrModel {
    layout: BlockLayout,
    hwver: u32,
    masks: [u32; 4],
    buffer_count: u32,
    ring: Vec<u8>,
    filled: VecDeque<(u32, u64)>,
    held: Option<u32>,
    mapped: usize,
    interval_ns: u64,
    /// The periodic dump interval (SET_INTERVAL), 0 for manual dumps.
    period_ns: u64,
}

impl VinstrModel {
    pub(super) fn new(
        config: &SimConfig,
        buffer_count: u32,
        masks: [u32; 4],
    ) -> io::Result<VinstrModel> {
        let layout = if config.dummy_model {
            BlockLayout::from_enumeration(config.slots(), 64, config.core_mask, config.l2_slices)
        } else {
            BlockLayout::from_props(config.core_mask, config.l2_slices)
        }
        .map_err(|_| Errno::INVAL)?;
        Ok(VinstrModel {
            layout,
            hwver: config.hwver,
            masks,
            buffer_count,
            ring: vec![0; layout.dump_bytes() * buffer_count as usize],
            filled: VecDeque::new(),
            held: None,
            mapped: 0,
            interval_ns: 0,
            period_ns: 0,
        })
    }

    pub(super) fn memory(&self) -> (&[u8], usize) {
        (&self.ring, self.mapped)
    }

    pub(super) fn ready(&self) -> bool {
        !self.filled.is_empty()
    }

    /// In periodic mode, the dump the driver's timer takes while a reader waits for one.
    pub(super) fn periodic_tick(&mut self, driver: &mut Driver) -> io::Result<()> {
        if self.period_ns == 0 || !self.filled.is_empty() {
            return Ok(());
        }
        match self.dump(driver) {
            // A full ring skips the period, as the driver's dump worker does.
            Err(e) if e.raw_os_error() == Some(Errno::BUSY.raw_os_error()) => Ok(()),
            other => other,
        }
    }

    pub(super) fn mmap(&mut self, len: usize) -> io::Result<()> {
        if len == 0 || len > self.ring.len() || self.mapped != 0 {
            return Err(Errno::INVAL.into());
        }
        self.mapped = len;
        Ok(())
    }

    fn out_u32(arg: IoctlArg<'_>, value: u32) -> io::Result<i32> {
        match arg {
            IoctlArg::Struct(b) if b.len() >= 4 => {
                b[..4].copy_from_slice(&value.to_ne_bytes());
                Ok(0)
            }
            _ => Err(Errno::FAULT.into()),
        }
    }

    fn dump(&mut self, driver: &mut Driver) -> io::Result<()> {
        let busy: Vec<u32> = self.filled.iter().map(|f| f.0).chain(self.held).collect();
        let Some(idx) = (0..self.buffer_count).find(|i| !busy.contains(i)) else {
            return Err(Errno::BUSY.into());
        };
        let (k, _, timestamp) = driver.tick((self.period_ns > 0).then_some(self.period_ns));
        let counting = driver.counting(k);
        self.interval_ns = timestamp;
        let size = self.layout.dump_bytes();
        let buf = &mut self.ring[idx as usize * size..(idx as usize + 1) * size];
        buf.fill(0);
        for (kind, instance, pos) in self.layout.blocks() {
            let block = &mut buf[pos * VINSTR_BLOCK_BYTES..(pos + 1) * VINSTR_BLOCK_BYTES];
            let mask = self.masks[kind.index()];
            block[HEADER_ENABLE_MASK * 4..HEADER_ENABLE_MASK * 4 + 4]
                .copy_from_slice(&mask.to_ne_bytes());
            if !counting {
                continue;
            }
            for index in FIRST_COUNTER..VINSTR_VALUES_PER_BLOCK {
                if mask & (1 << (index / 4)) == 0 {
                    continue;
                }
                let v = driver.workload.value(k, kind, instance, index as u32) as u32;
                block[index * 4..index * 4 + 4].copy_from_slice(&v.to_ne_bytes());
            }
        }
        if !driver.has(Fault::DumpNeverCompletes) {
            self.filled.push_back((idx, timestamp));
        }
        Ok(())
    }

    pub(super) fn ioctl(
        &mut self,
        driver: &mut Driver,
        request: u32,
        arg: IoctlArg<'_>,
    ) -> io::Result<i32> {
        match request {
            READER_GET_HWVER => Self::out_u32(arg, self.hwver),
            READER_GET_BUFFER_SIZE => {
                let mut size = self.layout.dump_bytes() as u32;
                if driver.has(Fault::WrongBufferSize) {
                    size -= VINSTR_BLOCK_BYTES as u32;
                }
                Self::out_u32(arg, size)
            }
            READER_GET_API_VERSION => Self::out_u32(arg, 1),
            READER_GET_API_VERSION_WITH_FEATURES => match arg {
                IoctlArg::Struct(b) if b.len() >= ApiVersionWithFeatures::SIZE => {
                    ApiVersionWithFeatures {
                        version: 1,
                        features: 0,
                    }
                    .encode(b);
                    Ok(0)
                }
                _ => Err(Errno::FAULT.into()),
            },
            READER_DUMP => self.dump(driver).map(|_| 0),
            READER_CLEAR => {
                self.filled.clear();
                Ok(0)
            }
            READER_SET_INTERVAL => match arg {
                IoctlArg::Value(v)
                    if v == 0 || (v >= 100_000 && !driver.has(Fault::NoPeriodicDumps)) =>
                {
                    self.period_ns = v;
                    Ok(0)
                }
                _ => Err(Errno::INVAL.into()),
            },
            READER_GET_BUFFER => {
                let IoctlArg::Struct(b) = arg else {
                    return Err(Errno::FAULT.into());
                };
                if b.len() < HwcntReaderMetadata::SIZE {
                    return Err(Errno::FAULT.into());
                }
                if self.held.is_some() {
                    return Err(Errno::BUSY.into());
                }
                let (idx, timestamp) = self.filled.pop_front().ok_or(Errno::AGAIN)?;
                self.held = Some(idx);
                let reported = if driver.has(Fault::BadBufferIndex) {
                    self.buffer_count
                } else {
                    idx
                };
                HwcntReaderMetadata {
                    timestamp,
                    event_id: 0,
                    buffer_idx: reported,
                }
                .encode(b);
                Ok(0)
            }
            READER_PUT_BUFFER => {
                let IoctlArg::Struct(b) = arg else {
                    return Err(Errno::FAULT.into());
                };
                let idx = HwcntReaderMetadata::decode(b).buffer_idx;
                match self.held {
                    None => Err(Errno::PERM.into()),
                    Some(h) if h == idx || driver.has(Fault::BadBufferIndex) => {
                        self.held = None;
                        Ok(0)
                    }
                    Some(_) => Err(Errno::INVAL.into()),
                }
            }
            _ => Err(Errno::NOTTY.into()),
        }
    }
}
