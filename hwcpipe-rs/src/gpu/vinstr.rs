//! The vinstr hwcnt reader: setup (legacy UK or r21+), GET_API_VERSION, GET_HWVER,
//! GET_BUFFER_SIZE, mmap of the buffer ring, then CLEAR / DUMP / poll / GET_BUFFER / PUT_BUFFER.

use std::io;
use std::time::Duration;

use rustix::io::Errno;

use super::device::{Fd, IoctlArg, KbaseDevice, PollOutcome};
use super::dump::{BlockLayout, BlockSums, DumpError};
use super::error::GpuError;
use super::ioctl::{
    ApiVersionWithFeatures, HwcntReaderMetadata, HwcntReaderSetup, UkHwcntReaderSetup, Wire,
    HWCNT_READER_SETUP, READER_CLEAR, READER_DUMP, READER_GET_API_VERSION,
    READER_GET_API_VERSION_WITH_FEATURES, READER_GET_BUFFER, READER_GET_BUFFER_SIZE,
    READER_GET_HWVER, READER_PUT_BUFFER, READER_SET_INTERVAL, UK_FUNC_HWCNT_READER_SETUP,
    UK_HWCNT_READER_SETUP,
};
use super::version::{DriverVersion, Interface};

/// Ring sizes tried in turn while the driver answers ENOMEM (contiguous buffers can be scarce).
pub const BUFFER_COUNTS: [u32; 5] = [32, 16, 8, 4, 2];
/// The only dump layout version decoded (HWCPipe rejects 4, the Midgard T60x/T62x/T72x layout).
pub const SUPPORTED_HWVER: u32 = 5;

/// An open vinstr reader.
#[derive(Debug)]
pub struct VinstrReader {
    fd: i32,
    layout: BlockLayout,
    buffer_count: u32,
    buffer: Vec<u8>,
}

fn ioctl_err(op: &'static str) -> impl FnOnce(io::Error) -> GpuError {
    move |source| GpuError::Ioctl { op, source }
}

fn read_u32(
    dev: &mut dyn KbaseDevice,
    fd: i32,
    request: u32,
    op: &'static str,
) -> Result<u32, GpuError> {
    let mut b = [0u8; 4];
    dev.ioctl(Fd::Reader(fd), request, IoctlArg::Struct(&mut b))
        .map_err(ioctl_err(op))?;
    Ok(u32::from_ne_bytes(b))
}

fn setup_once(
    dev: &mut dyn KbaseDevice,
    version: DriverVersion,
    buffer_count: u32,
) -> Result<i32, GpuError> {
    if version.interface == Interface::LegacyUk {
        const OP: &str = "UK HWCNT_READER_SETUP";
        let mut b = UkHwcntReaderSetup {
            header: UK_FUNC_HWCNT_READER_SETUP,
            buffer_count,
            jm_bm: u32::MAX,
            shader_bm: u32::MAX,
            tiler_bm: u32::MAX,
            mmu_l2_bm: u32::MAX,
            fd: -1,
            ..Default::default()
        }
        .to_bytes();
        dev.ioctl(Fd::Device, UK_HWCNT_READER_SETUP, IoctlArg::Struct(&mut b))
            .map_err(ioctl_err(OP))?;
        let answer = UkHwcntReaderSetup::decode(&b);
        if answer.header != 0 {
            return Err(GpuError::UkStatus {
                op: OP,
                ret: answer.header,
            });
        }
        Ok(answer.fd)
    } else {
        let mut b = HwcntReaderSetup {
            buffer_count,
            fe_bm: u32::MAX,
            shader_bm: u32::MAX,
            tiler_bm: u32::MAX,
            mmu_l2_bm: u32::MAX,
        }
        .to_bytes();
        dev.ioctl(Fd::Device, HWCNT_READER_SETUP, IoctlArg::Struct(&mut b))
            .map_err(ioctl_err("KBASE_IOCTL_HWCNT_READER_SETUP"))
    }
}

impl VinstrReader {
    /// Creates the reader with every counter enabled and checks API version, layout version and
    /// buffer size against `layout`.
    pub fn setup(
        dev: &mut dyn KbaseDevice,
        version: DriverVersion,
        layout: BlockLayout,
    ) -> Result<VinstrReader, GpuError> {
        let mut result = Err(GpuError::NotRunning);
        for count in BUFFER_COUNTS {
            result = setup_once(dev, version, count).map(|fd| (fd, count));
            match &result {
                Err(GpuError::Ioctl { source, .. })
                    if source.raw_os_error() == Some(Errno::NOMEM.raw_os_error()) =>
                {
                    continue
                }
                _ => break,
            }
        }
        let (fd, buffer_count) = result?;
        let reader = VinstrReader {
            fd,
            layout,
            buffer_count,
            buffer: vec![0; layout.dump_bytes()],
        };
        match reader.check(dev) {
            Ok(()) => Ok(reader),
            Err(e) => {
                let _ = dev.close(fd);
                Err(e)
            }
        }
    }

    fn check(&self, dev: &mut dyn KbaseDevice) -> Result<(), GpuError> {
        let mut b = [0u8; ApiVersionWithFeatures::SIZE];
        let api = match dev.ioctl(
            Fd::Reader(self.fd),
            READER_GET_API_VERSION_WITH_FEATURES,
            IoctlArg::Struct(&mut b),
        ) {
            Ok(_) => ApiVersionWithFeatures::decode(&b).version,
            Err(_) => read_u32(
                dev,
                self.fd,
                READER_GET_API_VERSION,
                "KBASE_HWCNT_READER_GET_API_VERSION",
            )?,
        };
        if api != 1 {
            return Err(GpuError::UnsupportedReaderApi(api));
        }
        let hwver = read_u32(
            dev,
            self.fd,
            READER_GET_HWVER,
            "KBASE_HWCNT_READER_GET_HWVER",
        )?;
        if hwver != SUPPORTED_HWVER {
            return Err(GpuError::UnsupportedHwVersion(hwver));
        }
        let size = read_u32(
            dev,
            self.fd,
            READER_GET_BUFFER_SIZE,
            "KBASE_HWCNT_READER_GET_BUFFER_SIZE",
        )? as usize;
        if size != self.layout.dump_bytes() {
            return Err(DumpError::SizeMismatch {
                expected: self.layout.dump_bytes(),
                actual: size,
            }
            .into());
        }
        dev.mmap(self.fd, size * self.buffer_count as usize)
            .map_err(ioctl_err("mmap of the hwcnt buffer ring"))
    }

    /// The reader fd.
    pub fn fd(&self) -> i32 {
        self.fd
    }

    /// Buffers in the ring.
    pub fn buffer_count(&self) -> u32 {
        self.buffer_count
    }

    /// SET_INTERVAL 0 (manual dumps only), then CLEAR: the next dump counts from now.
    pub fn start(&self, dev: &mut dyn KbaseDevice) -> Result<(), GpuError> {
        dev.ioctl(Fd::Reader(self.fd), READER_SET_INTERVAL, IoctlArg::Value(0))
            .map_err(ioctl_err("KBASE_HWCNT_READER_SET_INTERVAL"))?;
        dev.ioctl(Fd::Reader(self.fd), READER_CLEAR, IoctlArg::Value(0))
            .map_err(ioctl_err("KBASE_HWCNT_READER_CLEAR"))?;
        Ok(())
    }

    /// CLEAR, then SET_INTERVAL `period_ns`: the driver dumps into the ring every period by itself
    /// (its timer; vinstr's shortest interval is 100 µs), and [`next_dump`](Self::next_dump) takes
    /// them one by one. No dump request of the caller's waits in the kernel.
    pub fn start_periodic(
        &self,
        dev: &mut dyn KbaseDevice,
        period_ns: u64,
    ) -> Result<(), GpuError> {
        dev.ioctl(Fd::Reader(self.fd), READER_CLEAR, IoctlArg::Value(0))
            .map_err(ioctl_err("KBASE_HWCNT_READER_CLEAR"))?;
        dev.ioctl(
            Fd::Reader(self.fd),
            READER_SET_INTERVAL,
            IoctlArg::Value(period_ns),
        )
        .map_err(ioctl_err("KBASE_HWCNT_READER_SET_INTERVAL"))?;
        Ok(())
    }

    /// The next dump the driver took on its own (periodic mode): waits up to `timeout` for one,
    /// sums it into `sums` and gives the buffer back. Returns the dump's timestamp (ns).
    pub fn next_dump(
        &mut self,
        dev: &mut dyn KbaseDevice,
        timeout: Duration,
        sums: &mut BlockSums,
    ) -> Result<u64, GpuError> {
        match dev.poll(self.fd, timeout).map_err(ioctl_err("poll"))? {
            PollOutcome::Ready => {}
            PollOutcome::TimedOut => return Err(GpuError::Timeout { waited: timeout }),
            PollOutcome::HungUp => return Err(GpuError::HungUp),
        }
        self.take_buffer(dev, sums)
    }

    /// Closes the reader (and its mapping).
    pub fn stop(self, dev: &mut dyn KbaseDevice) -> Result<(), GpuError> {
        dev.close(self.fd)
            .map_err(ioctl_err("close of the hwcnt reader"))
    }

    /// DUMP, poll up to `timeout`, GET_BUFFER, copy and sum the dump, PUT_BUFFER. Returns the
    /// metadata timestamp (ns).
    pub fn sample(
        &mut self,
        dev: &mut dyn KbaseDevice,
        timeout: Duration,
        sums: &mut BlockSums,
    ) -> Result<u64, GpuError> {
        dev.ioctl(Fd::Reader(self.fd), READER_DUMP, IoctlArg::Value(0))
            .map_err(ioctl_err("KBASE_HWCNT_READER_DUMP"))?;
        self.next_dump(dev, timeout, sums)
    }

    /// GET_BUFFER, copy and sum the dump, PUT_BUFFER; the metadata timestamp (ns).
    fn take_buffer(
        &mut self,
        dev: &mut dyn KbaseDevice,
        sums: &mut BlockSums,
    ) -> Result<u64, GpuError> {
        let mut meta = [0u8; HwcntReaderMetadata::SIZE];
        dev.ioctl(
            Fd::Reader(self.fd),
            READER_GET_BUFFER,
            IoctlArg::Struct(&mut meta),
        )
        .map_err(ioctl_err("KBASE_HWCNT_READER_GET_BUFFER"))?;
        let m = HwcntReaderMetadata::decode(&meta);
        let copied = if m.buffer_idx < self.buffer_count {
            let offset = m.buffer_idx as usize * self.buffer.len();
            dev.read_mapped(self.fd, offset, &mut self.buffer)
                .map_err(ioctl_err("read of the hwcnt buffer"))
        } else {
            Err(GpuError::BadBufferIndex {
                index: u64::from(m.buffer_idx),
                count: u64::from(self.buffer_count),
            })
        };
        let put = dev
            .ioctl(
                Fd::Reader(self.fd),
                READER_PUT_BUFFER,
                IoctlArg::Struct(&mut meta),
            )
            .map_err(ioctl_err("KBASE_HWCNT_READER_PUT_BUFFER"));
        copied?;
        put?;
        self.layout.accumulate(&self.buffer, sums)?;
        Ok(m.timestamp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::fake::FakeDevice;

    fn layout() -> BlockLayout {
        BlockLayout::from_props(1, 1).unwrap()
    }

    #[test]
    fn api_and_uk_status_errors() {
        let jm = DriverVersion {
            interface: Interface::Jm,
            major: 11,
            minor: 30,
        };
        let mut api2 = FakeDevice::new(|request, arg| {
            if request == READER_GET_API_VERSION_WITH_FEATURES {
                ApiVersionWithFeatures {
                    version: 2,
                    features: 0,
                }
                .encode(arg);
            }
            Ok(5)
        });
        assert!(matches!(
            VinstrReader::setup(&mut api2, jm, layout()),
            Err(GpuError::UnsupportedReaderApi(2))
        ));
        // Without the features variant, the plain API version query is used.
        let mut plain = FakeDevice::new(|request, arg| match request {
            READER_GET_API_VERSION_WITH_FEATURES => Err(Errno::NOTTY.into()),
            READER_GET_API_VERSION | READER_GET_HWVER => {
                arg[..4].copy_from_slice(
                    &(if request == READER_GET_HWVER { 4u32 } else { 1 }).to_ne_bytes(),
                );
                Ok(0)
            }
            _ => Ok(5),
        });
        assert!(matches!(
            VinstrReader::setup(&mut plain, jm, layout()),
            Err(GpuError::UnsupportedHwVersion(4))
        ));
        let uk = DriverVersion {
            interface: Interface::LegacyUk,
            major: 10,
            minor: 6,
        };
        let mut status = FakeDevice::new(|_, arg| {
            arg[..4].copy_from_slice(&9u32.to_ne_bytes());
            Ok(0)
        });
        assert!(matches!(
            VinstrReader::setup(&mut status, uk, layout()),
            Err(GpuError::UkStatus { ret: 9, .. })
        ));
    }
}
