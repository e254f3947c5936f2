//! The simulated driver's device fd: call-order state machine, version checks, SET_FLAGS, GPU
//! properties, reader creation; reader calls are routed to the vinstr or kinstr_prfcnt model.

use std::collections::HashMap;
use std::io;

use rustix::io::Errno;

use super::config::{Fault, SimConfig, Workload};
use super::kinstr_model::KinstrModel;
use super::vinstr_model::VinstrModel;
use crate::gpu::device::{Fd, IoctlArg, PollOutcome};
use crate::gpu::ioctl::*;
use crate::gpu::props::{encode_record, prop, uk_offset};
use crate::gpu::version::{DriverVersion, Interface};

pub(super) fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

#[derive(Debug)]
pub(super) enum SimReader {
    Vinstr(VinstrModel),
    Kinstr(KinstrModel),
}

#[derive(Debug)]
pub(super) struct Driver {
    pub(super) config: SimConfig,
    pub(super) workload: Workload,
    pub(super) faults: Vec<Fault>,
    pub(super) device_calls: Vec<u32>,
    pub(super) reader_calls: Vec<u32>,
    pub(super) readers: HashMap<i32, SimReader>,
    pub(super) interval: u64,
    pub(super) time_ns: u64,
    versioned: bool,
    flags_set: bool,
    next_fd: i32,
}

/// Simulated time between two samples.
pub(super) const INTERVAL_NS: u64 = 1_000_000;

impl Driver {
    pub(super) fn new(config: SimConfig, workload: Workload) -> Driver {
        Driver {
            config,
            workload,
            faults: Vec::new(),
            device_calls: Vec::new(),
            reader_calls: Vec::new(),
            readers: HashMap::new(),
            interval: 0,
            time_ns: 1_000_000_000,
            versioned: false,
            flags_set: false,
            next_fd: 100,
        }
    }

    pub(super) fn has(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }

    /// Advances simulated time by one dump: `period_ns` for a periodic one (`None`: a manual dump, one
    /// [`INTERVAL_NS`]); returns `(interval, span, end timestamp)`. A periodic dump covers two periods
    /// under [`Fault::FoldedDumps`].
    pub(super) fn tick(&mut self, period_ns: Option<u64>) -> (u64, u64, u64) {
        let k = self.interval;
        self.interval += 1;
        let span = match period_ns {
            Some(period) if self.has(Fault::FoldedDumps) => period.saturating_mul(2),
            Some(period) => period,
            None => INTERVAL_NS,
        };
        self.time_ns += span;
        (k, span, self.time_ns)
    }

    /// Whether the dump of interval `k` counts: not under [`Fault::NotCountingFirst`] for the first dumps.
    pub(super) fn counting(&self, k: u64) -> bool {
        !self
            .faults
            .iter()
            .any(|f| matches!(*f, Fault::NotCountingFirst(n) if k < n))
    }

    fn kinstr_offered(&self) -> bool {
        let (major, minor) = self.config.version;
        self.config.kinstr
            && DriverVersion {
                interface: self.config.interface,
                major,
                minor,
            }
            .offers_kinstr()
    }

    fn vinstr_offered(&self) -> bool {
        let (major, minor) = self.config.version;
        self.config.values_per_block == 64
            && DriverVersion {
                interface: self.config.interface,
                major,
                minor,
            }
            .offers_vinstr()
    }

    pub(super) fn ioctl(&mut self, fd: Fd, request: u32, arg: IoctlArg<'_>) -> io::Result<i32> {
        match fd {
            Fd::Device => self.device_calls.push(request),
            Fd::Reader(_) => self.reader_calls.push(request),
        }
        for f in &self.faults {
            if let Fault::FailIoctl {
                request: r,
                errno: e,
            } = *f
            {
                if r == request {
                    return Err(errno(e));
                }
            }
        }
        match fd {
            Fd::Device => self.device_ioctl(request, arg),
            Fd::Reader(r) => {
                let mut reader = self.readers.remove(&r).ok_or(Errno::BADF)?;
                let result = match &mut reader {
                    SimReader::Vinstr(v) => v.ioctl(self, request, arg),
                    SimReader::Kinstr(k) => k.ioctl(self, request, arg),
                };
                self.readers.insert(r, reader);
                result
            }
        }
    }

    fn struct_arg<'a>(arg: IoctlArg<'a>, size: usize) -> io::Result<&'a mut [u8]> {
        match arg {
            IoctlArg::Struct(b) if b.len() >= size => Ok(b),
            _ => Err(Errno::FAULT.into()),
        }
    }

    fn device_ioctl(&mut self, request: u32, arg: IoctlArg<'_>) -> io::Result<i32> {
        let iface = self.config.interface;
        let (major, minor) = self.config.version;
        let is_version_check = matches!(
            request,
            UK_VERSION_CHECK | VERSION_CHECK_JM | VERSION_CHECK_CSF
        );
        if !self.versioned && !is_version_check {
            return Err(Errno::PERM.into());
        }
        match request {
            UK_VERSION_CHECK if iface == Interface::LegacyUk => {
                let b = Self::struct_arg(arg, UkVersionCheck::SIZE)?;
                if UkVersionCheck::decode(b).header != UK_FUNC_VERSION_CHECK {
                    return Err(Errno::INVAL.into());
                }
                UkVersionCheck {
                    header: 0,
                    major,
                    minor,
                    ..Default::default()
                }
                .encode(b);
                self.versioned = true;
                Ok(0)
            }
            VERSION_CHECK_JM if iface == Interface::Jm => self.version_check(arg),
            VERSION_CHECK_CSF if iface == Interface::Csf => self.version_check(arg),
            UK_SET_FLAGS if iface == Interface::LegacyUk => {
                let b = Self::struct_arg(arg, UkSetFlags::SIZE)?;
                let req = UkSetFlags::decode(b);
                let ok = req.header == UK_FUNC_SET_FLAGS && !self.flags_set;
                UkSetFlags {
                    header: if ok { 0 } else { 1 },
                    ..req
                }
                .encode(b);
                self.flags_set |= ok;
                Ok(0)
            }
            SET_FLAGS if iface != Interface::LegacyUk => {
                let b = Self::struct_arg(arg, SetFlags::SIZE)?;
                if self.flags_set || SetFlags::decode(b).create_flags & !0x7 != 0 {
                    return Err(Errno::INVAL.into());
                }
                self.flags_set = true;
                Ok(0)
            }
            _ if !self.flags_set => Err(Errno::PERM.into()),
            UK_GPU_PROPS if iface == Interface::LegacyUk => {
                let b = Self::struct_arg(arg, UK_GPU_PROPS_SIZE)?;
                self.encode_uk_props(b);
                Ok(0)
            }
            GET_GPUPROPS if iface != Interface::LegacyUk => {
                let props = self.props_buffer();
                match arg {
                    IoctlArg::Struct(b) => {
                        let req = GetGpuProps::decode(b);
                        if req.buffer != 0 || req.size != 0 {
                            return Err(Errno::FAULT.into());
                        }
                        Ok(props.len() as i32)
                    }
                    IoctlArg::StructWithBuffer { arg, buffer, .. } => {
                        let size = GetGpuProps::decode(arg).size as usize;
                        if size > buffer.len() {
                            return Err(Errno::FAULT.into());
                        }
                        if size < props.len() {
                            return Err(Errno::INVAL.into());
                        }
                        buffer[..props.len()].copy_from_slice(&props);
                        Ok(props.len() as i32)
                    }
                    IoctlArg::Value(_) => Err(Errno::FAULT.into()),
                }
            }
            UK_HWCNT_READER_SETUP if iface == Interface::LegacyUk && self.vinstr_offered() => {
                let b = Self::struct_arg(arg, UkHwcntReaderSetup::SIZE)?;
                let req = UkHwcntReaderSetup::decode(b);
                let masks = [req.jm_bm, req.tiler_bm, req.mmu_l2_bm, req.shader_bm];
                let fd = self.new_vinstr(req.buffer_count, masks)?;
                UkHwcntReaderSetup {
                    header: 0,
                    fd,
                    ..req
                }
                .encode(b);
                Ok(0)
            }
            HWCNT_READER_SETUP if iface != Interface::LegacyUk && self.vinstr_offered() => {
                let b = Self::struct_arg(arg, HwcntReaderSetup::SIZE)?;
                let req = HwcntReaderSetup::decode(b);
                self.new_vinstr(
                    req.buffer_count,
                    [req.fe_bm, req.tiler_bm, req.mmu_l2_bm, req.shader_bm],
                )
            }
            KINSTR_PRFCNT_ENUM_INFO if self.kinstr_offered() => KinstrModel::enum_info(self, arg),
            KINSTR_PRFCNT_SETUP if self.kinstr_offered() => {
                let model = KinstrModel::setup(self, arg)?;
                let fd = self.alloc_fd();
                self.readers.insert(fd, SimReader::Kinstr(model));
                Ok(fd)
            }
            _ => Err(Errno::NOTTY.into()),
        }
    }

    fn version_check(&mut self, arg: IoctlArg<'_>) -> io::Result<i32> {
        let b = Self::struct_arg(arg, VersionCheck::SIZE)?;
        let (major, minor) = self.config.version;
        VersionCheck { major, minor }.encode(b);
        self.versioned = true;
        Ok(0)
    }

    fn alloc_fd(&mut self) -> i32 {
        self.next_fd += 1;
        self.next_fd
    }

    fn new_vinstr(&mut self, buffer_count: u32, masks: [u32; 4]) -> io::Result<i32> {
        if !(1..=32).contains(&buffer_count) {
            return Err(Errno::INVAL.into());
        }
        let model = VinstrModel::new(&self.config, buffer_count, masks)?;
        let fd = self.alloc_fd();
        self.readers.insert(fd, SimReader::Vinstr(model));
        Ok(fd)
    }

    fn props_buffer(&self) -> Vec<u8> {
        let c = &self.config;
        let mut b = Vec::new();
        if c.dummy_model {
            for &(id, size, value) in R35P0_DUMMY_PROPS {
                let value = match id {
                    prop::PRODUCT_ID => c.gpu_id >> 16 & 0xFFFF,
                    prop::RAW_GPU_ID => c.gpu_id,
                    prop::L2_NUM_L2_SLICES => c.l2_slices.into(),
                    prop::RAW_SHADER_PRESENT | prop::COHERENCY_GROUP_0 => c.core_mask,
                    prop::RAW_L2_FEATURES => c.l2_features.into(),
                    _ => value,
                };
                encode_record(&mut b, id, size, value);
            }
            if self.has(Fault::TruncatedProps) {
                b.truncate(b.len() - 3);
            }
            return b;
        }
        encode_record(&mut b, prop::PRODUCT_ID, 2, (c.gpu_id as u32 >> 16).into());
        encode_record(&mut b, prop::L2_LOG2_CACHE_SIZE, 0, 19);
        encode_record(&mut b, prop::L2_NUM_L2_SLICES, 0, c.l2_slices.into());
        encode_record(&mut b, prop::RAW_SHADER_PRESENT, 3, c.core_mask);
        encode_record(&mut b, prop::RAW_L2_FEATURES, 2, c.l2_features.into());
        encode_record(
            &mut b,
            prop::RAW_GPU_ID,
            if c.gpu_id >> 32 != 0 { 3 } else { 2 },
            c.gpu_id,
        );
        encode_record(&mut b, prop::COHERENCY_NUM_CORE_GROUPS, 2, 1);
        encode_record(&mut b, prop::COHERENCY_GROUP_0, 3, c.core_mask);
        if self.has(Fault::TruncatedProps) {
            b.truncate(b.len() - 3);
        }
        b
    }

    fn encode_uk_props(&self, b: &mut [u8]) {
        let c = &self.config;
        b.fill(0);
        let mut put = |at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
        put(
            uk_offset::PRODUCT_ID,
            &((c.gpu_id as u32) >> 16).to_ne_bytes(),
        );
        put(uk_offset::NUM_L2_SLICES, &[c.l2_slices as u8]);
        put(uk_offset::SHADER_PRESENT, &c.core_mask.to_ne_bytes());
        put(uk_offset::L2_FEATURES, &c.l2_features.to_ne_bytes());
        put(uk_offset::GPU_ID, &(c.gpu_id as u32).to_ne_bytes());
        put(uk_offset::NUM_CORE_GROUPS, &1u32.to_ne_bytes());
        put(uk_offset::GROUP_0_CORE_MASK, &c.core_mask.to_ne_bytes());
    }

    pub(super) fn mmap(&mut self, reader: i32, len: usize) -> io::Result<()> {
        match self.readers.get_mut(&reader).ok_or(Errno::BADF)? {
            SimReader::Vinstr(v) => v.mmap(len),
            SimReader::Kinstr(k) => k.mmap(len),
        }
    }

    pub(super) fn read_mapped(&self, reader: i32, offset: usize, out: &mut [u8]) -> io::Result<()> {
        let (memory, mapped) = match self.readers.get(&reader).ok_or(Errno::BADF)? {
            SimReader::Vinstr(v) => v.memory(),
            SimReader::Kinstr(k) => k.memory(),
        };
        let end = offset.checked_add(out.len()).ok_or(Errno::INVAL)?;
        if end > mapped || end > memory.len() {
            return Err(Errno::INVAL.into());
        }
        out.copy_from_slice(&memory[offset..end]);
        Ok(())
    }

    pub(super) fn poll(&mut self, reader: i32) -> io::Result<PollOutcome> {
        // A reader in periodic mode with nothing waiting: the driver's timer fires during the wait.
        let mut model = self.readers.remove(&reader).ok_or(Errno::BADF)?;
        let fired = match &mut model {
            SimReader::Vinstr(v) => v.periodic_tick(self),
            SimReader::Kinstr(k) => k.periodic_tick(self),
        };
        self.readers.insert(reader, model);
        fired?;
        let ready = match self.readers.get(&reader).ok_or(Errno::BADF)? {
            SimReader::Vinstr(v) => v.ready(),
            SimReader::Kinstr(k) => k.ready(),
        };
        Ok(if self.has(Fault::HangUp) {
            PollOutcome::HungUp
        } else if ready {
            PollOutcome::Ready
        } else {
            PollOutcome::TimedOut
        })
    }

    pub(super) fn close(&mut self, reader: i32) -> io::Result<()> {
        self.readers
            .remove(&reader)
            .map(drop)
            .ok_or_else(|| io::Error::from(Errno::BADF))
    }
}

/// The GET_GPUPROPS records of kbase r35p0 over its dummy GPU model, in the driver's order:
/// `(property id, size code, value)`, 723 bytes in all, as the driver answered them for `tBEx`
/// (recorded in the emulated Arm system with `.ci/kbase-tests`' driver build). The identity and
/// topology records are replaced by the preset's own; other values that differ between the model's
/// GPUs (revision, features, thread limits) are tBEx's.
const R35P0_DUMMY_PROPS: &[(u32, u32, u64)] = &[
    (1, 2, 0x9202),
    (2, 1, 0),
    (3, 1, 0),
    (4, 1, 0),
    (6, 2, 0x1388),
    (8, 2, 0x18),
    (9, 2, 0xfffff),
    (10, 2, 0xffff),
    (11, 2, 0x9f81ffff),
    (80, 2, 0),
    (12, 3, 0x5c32e000),
    (82, 0, 0),
    (13, 0, 0x6),
    (14, 0, 0x10),
    (15, 0, 0x1),
    (16, 2, 0x200),
    (17, 2, 0x8),
    (18, 2, 0x180),
    (19, 2, 0x180),
    (20, 2, 0x180),
    (21, 1, 0x6000),
    (22, 0, 0x4),
    (23, 0, 0),
    (24, 0, 0x3),
    (84, 2, 0x180),
    (25, 3, 0xf),
    (26, 3, 0x1),
    (27, 3, 0x1),
    (28, 3, 0xf),
    (29, 2, 0x6100206),
    (30, 2, 0),
    (31, 2, 0x1),
    (32, 2, 0x2830),
    (33, 2, 0xff),
    (34, 2, 0x7),
    (35, 2, 0x20e),
    (36, 2, 0x1fe),
    (37, 2, 0x7e),
    (38, 2, 0),
    (39, 2, 0),
    (40, 2, 0),
    (41, 2, 0),
    (42, 2, 0),
    (43, 2, 0),
    (44, 2, 0),
    (45, 2, 0),
    (46, 2, 0),
    (47, 2, 0),
    (48, 2, 0),
    (49, 2, 0),
    (50, 2, 0),
    (51, 2, 0x809),
    (52, 2, 0xfffff),
    (53, 2, 0xffff),
    (54, 2, 0x9f81ffff),
    (81, 2, 0),
    (55, 2, 0x92020000),
    (56, 2, 0x180),
    (57, 2, 0x180),
    (58, 2, 0x180),
    (59, 2, 0xc0046000),
    (83, 2, 0),
    (60, 2, 0x1f),
    (85, 3, 0),
    (61, 2, 0x1),
    (62, 2, 0x1),
    (63, 2, 0x1),
    (64, 3, 0xf),
    (65, 3, 0),
    (66, 3, 0),
    (67, 3, 0),
    (68, 3, 0),
    (69, 3, 0),
    (70, 3, 0),
    (71, 3, 0),
    (72, 3, 0),
    (73, 3, 0),
    (74, 3, 0),
    (75, 3, 0),
    (76, 3, 0),
    (77, 3, 0),
    (78, 3, 0),
    (79, 3, 0),
];
