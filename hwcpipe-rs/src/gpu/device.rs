//! The seam between the profiler and the kbase driver.
//!
//! [`GpuProfiler`](super::GpuProfiler) talks to a [`KbaseDevice`] in the driver's own terms: ioctl
//! request numbers, the bytes of the `#[repr(C)]` structs in [`ioctl`](super::ioctl), reader fds, one
//! mapping per reader, poll. [`MaliDevice`](super::MaliDevice) forwards each call to the kernel;
//! `SimulatedKbase` (feature `sim`) answers it from an in-memory model. The profiler cannot
//! tell them apart.

use std::io;
use std::time::Duration;

/// Which file an ioctl goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fd {
    /// The `/dev/mali<N>` device file itself.
    Device,
    /// A reader fd returned by a setup ioctl (hwcnt reader or kinstr_prfcnt).
    Reader(i32),
}

/// The third argument of an ioctl.
#[derive(Debug)]
pub enum IoctlArg<'a> {
    /// An integer passed by value (DUMP, CLEAR, SET_INTERVAL).
    Value(u64),
    /// A pointer to a struct, given as its bytes; the driver may write them back.
    Struct(&'a mut [u8]),
    /// A pointer to a struct whose field at `ptr_offset` is a user pointer to `buffer`
    /// (GET_GPUPROPS, KINSTR_PRFCNT_ENUM_INFO, KINSTR_PRFCNT_SETUP). The device writes the address of
    /// `buffer` into that field before the call; the driver reads or fills `buffer`.
    StructWithBuffer {
        /// The struct bytes.
        arg: &'a mut [u8],
        /// Offset of the u64 user-pointer field inside `arg`.
        ptr_offset: usize,
        /// The memory the pointer refers to.
        buffer: &'a mut [u8],
    },
}

/// What `poll(POLLIN)` on a reader fd saw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollOutcome {
    /// A filled buffer or sample is waiting.
    Ready,
    /// Nothing arrived before the timeout.
    TimedOut,
    /// POLLHUP or POLLERR: the reader is gone.
    HungUp,
}

/// One opened kbase device: every kernel call the GPU profiler makes goes through this trait.
///
/// Call order is the driver's: version check, SET_FLAGS, properties, reader setup, then reader
/// ioctls, `mmap`, `poll`, and `close` of the reader. Errors are the driver's errno as
/// [`io::Error`].
pub trait KbaseDevice: Send {
    /// A name for messages (`/dev/mali0`, `simulated Mali-G78`).
    fn name(&self) -> String;
    /// `ioctl(fd, request, arg)`; returns the non-negative return value (a new reader fd for the
    /// setup ioctls, a byte count for GET_GPUPROPS, else 0).
    fn ioctl(&mut self, fd: Fd, request: u32, arg: IoctlArg<'_>) -> io::Result<i32>;
    /// Maps `len` bytes of reader `reader` read-only (one mapping per reader).
    fn mmap(&mut self, reader: i32, len: usize) -> io::Result<()>;
    /// Copies `out.len()` bytes at `offset` of the reader's mapping into `out`.
    fn read_mapped(&self, reader: i32, offset: usize, out: &mut [u8]) -> io::Result<()>;
    /// Waits up to `timeout` for POLLIN on the reader.
    fn poll(&mut self, reader: i32, timeout: Duration) -> io::Result<PollOutcome>;
    /// Unmaps and closes a reader fd.
    fn close(&mut self, reader: i32) -> io::Result<()>;
}

/// A scripted stand-in for the driver in unit tests of single decoding steps (the full driver
/// model is `SimulatedKbase` (feature `sim`)).
#[cfg(test)]
pub(crate) mod fake {
    use super::*;

    type Answer = Box<dyn FnMut(u32, &mut [u8]) -> io::Result<i32> + Send>;

    /// Answers every ioctl with `answer(request, arg bytes)` and serves `memory` as the mapping.
    pub(crate) struct FakeDevice {
        pub(crate) answer: Answer,
        pub(crate) memory: Vec<u8>,
        pub(crate) poll: PollOutcome,
    }

    impl FakeDevice {
        pub(crate) fn new(
            answer: impl FnMut(u32, &mut [u8]) -> io::Result<i32> + Send + 'static,
        ) -> FakeDevice {
            FakeDevice {
                answer: Box::new(answer),
                memory: Vec::new(),
                poll: PollOutcome::Ready,
            }
        }
    }

    impl KbaseDevice for FakeDevice {
        fn name(&self) -> String {
            "fake".into()
        }
        fn ioctl(&mut self, _fd: Fd, request: u32, arg: IoctlArg<'_>) -> io::Result<i32> {
            match arg {
                IoctlArg::Value(_) => (self.answer)(request, &mut []),
                IoctlArg::Struct(b) => (self.answer)(request, b),
                IoctlArg::StructWithBuffer { arg, .. } => (self.answer)(request, arg),
            }
        }
        fn mmap(&mut self, _reader: i32, _len: usize) -> io::Result<()> {
            Ok(())
        }
        fn read_mapped(&self, _reader: i32, offset: usize, out: &mut [u8]) -> io::Result<()> {
            let src = self
                .memory
                .get(offset..offset + out.len())
                .ok_or_else(|| io::Error::from_raw_os_error(22))?;
            out.copy_from_slice(src);
            Ok(())
        }
        fn poll(&mut self, _reader: i32, _timeout: Duration) -> io::Result<PollOutcome> {
            Ok(self.poll)
        }
        fn close(&mut self, _reader: i32) -> io::Result<()> {
            Ok(())
        }
    }
}
