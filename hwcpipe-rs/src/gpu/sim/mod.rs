//! `SimulatedKbase`: an in-memory kbase driver behind the [`KbaseDevice`] seam.
//!
//! It answers the same request numbers with the same struct bytes as the real driver, enforces the
//! per-fd call order (version check, then SET_FLAGS, then everything else), keeps a ring of dump
//! buffers that the profiler reads through `read_mapped` exactly as it reads a real mapping, and
//! fills every dump from a scripted [`Workload`]. A [`SimHandle`] stays with the test to inject
//! [`Fault`]s and inspect the calls made.

mod config;
mod driver;
mod kinstr_model;
mod vinstr_model;

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub use config::{Fault, SimConfig, SimGpu, Workload, KBASE_R35P0_DUMMY_GPUS};

use super::device::{Fd, IoctlArg, KbaseDevice, PollOutcome};
use driver::Driver;

/// An in-memory Mali kbase driver (see the module documentation).
#[derive(Debug)]
pub struct SimulatedKbase {
    driver: Arc<Mutex<Driver>>,
}

/// A test's view of a [`SimulatedKbase`] after the profiler owns it.
#[derive(Clone, Debug)]
pub struct SimHandle {
    driver: Arc<Mutex<Driver>>,
}

fn lock(driver: &Mutex<Driver>) -> MutexGuard<'_, Driver> {
    driver
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl SimulatedKbase {
    /// A simulated preset GPU running `workload`.
    pub fn new(gpu: SimGpu, workload: Workload) -> SimulatedKbase {
        SimulatedKbase::with_config(gpu.config(), workload)
    }

    /// A simulated GPU of any configuration.
    pub fn with_config(config: SimConfig, workload: Workload) -> SimulatedKbase {
        SimulatedKbase {
            driver: Arc::new(Mutex::new(Driver::new(config, workload))),
        }
    }

    /// A handle for injecting faults and inspecting calls.
    pub fn handle(&self) -> SimHandle {
        SimHandle {
            driver: Arc::clone(&self.driver),
        }
    }
}

impl SimHandle {
    /// Adds a fault; it stays active until [`clear_faults`](Self::clear_faults).
    pub fn inject(&self, fault: Fault) {
        lock(&self.driver).faults.push(fault);
    }

    /// Removes all faults.
    pub fn clear_faults(&self) {
        lock(&self.driver).faults.clear();
    }

    /// Every ioctl request number received on the device fd, in order.
    pub fn device_calls(&self) -> Vec<u32> {
        lock(&self.driver).device_calls.clone()
    }

    /// Every ioctl request number received on reader fds, in order.
    pub fn reader_calls(&self) -> Vec<u32> {
        lock(&self.driver).reader_calls.clone()
    }

    /// Number of reader fds currently open.
    pub fn open_readers(&self) -> usize {
        lock(&self.driver).readers.len()
    }

    /// Number of samples taken so far (the next sample is interval `samples_taken()`).
    pub fn samples_taken(&self) -> u64 {
        lock(&self.driver).interval
    }
}

impl KbaseDevice for SimulatedKbase {
    fn name(&self) -> String {
        format!(
            "simulated kbase (GPU_ID {:#x})",
            lock(&self.driver).config.gpu_id
        )
    }

    fn ioctl(&mut self, fd: Fd, request: u32, arg: IoctlArg<'_>) -> io::Result<i32> {
        lock(&self.driver).ioctl(fd, request, arg)
    }

    fn mmap(&mut self, reader: i32, len: usize) -> io::Result<()> {
        lock(&self.driver).mmap(reader, len)
    }

    fn read_mapped(&self, reader: i32, offset: usize, out: &mut [u8]) -> io::Result<()> {
        lock(&self.driver).read_mapped(reader, offset, out)
    }

    fn poll(&mut self, reader: i32, _timeout: Duration) -> io::Result<PollOutcome> {
        lock(&self.driver).poll(reader)
    }

    fn close(&mut self, reader: i32) -> io::Result<()> {
        lock(&self.driver).close(reader)
    }
}
