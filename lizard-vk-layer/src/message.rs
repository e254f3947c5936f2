//! What the application's threads tell the worker: devices, submissions to read, presents, notes.

use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::queue::{QueueShared, Readback};
use crate::workload::Recording;

/// One application command buffer of a submission, and where its queries' results were copied.
#[derive(Debug)]
pub(crate) struct Submitted {
    /// Its recording.
    pub recording: Arc<Recording>,
    /// Each recording of its tree (itself and the secondaries it executes) with the readback offset of
    /// each of its query blocks; empty when its results were not copied.
    pub copies: Vec<(Arc<Recording>, Vec<u64>)>,
    /// Why its results were not copied, if so.
    pub untimed: Option<String>,
    /// In a serialised submission: `CLOCK_MONOTONIC` before it was submitted and after the layer's wait
    /// for it ended.
    pub window: Option<(u64, u64)>,
    /// In a serialised submission: how long the layer waited for it, in ns.
    pub waited_ns: u64,
    /// In `renderpass` mode: `CLOCK_MONOTONIC` when the GPU reached each trap of the recording.
    pub trap_times: Vec<u64>,
}

/// A submission whose results the worker reads once the layer's fence signals.
#[derive(Debug)]
pub(crate) struct Submission {
    /// The device.
    pub device: Arc<Device>,
    /// The queue.
    pub queue: vk::Queue,
    /// Where the worker gives back what the submission used.
    pub shared: Arc<QueueShared>,
    /// The readback buffer the results were copied into.
    pub readback: Option<Arc<Readback>>,
    /// The readback range (by offset) to give back.
    pub range: Option<u64>,
    /// The layer's fence, signalled when the submission (and the layer's copies) completed.
    pub fence: Option<vk::Fence>,
    /// The layer's command buffers in it, to give back.
    pub post: Vec<vk::CommandBuffer>,
    /// The frame it belongs to.
    pub frame: u64,
    /// Its number in the session, from 1.
    pub serial: u64,
    /// `CLOCK_MONOTONIC` when the application submitted it.
    pub submitted_ns: u64,
    /// The application's command buffers, in submission order.
    pub buffers: Vec<Submitted>,
}

/// The application presented.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Present {
    /// The frame that ends with this present.
    pub frame: u64,
    /// `CLOCK_MONOTONIC` when the application called `vkQueuePresentKHR`.
    pub monotonic_ns: u64,
    /// Whether the frame lies in the measured range.
    pub measured: bool,
    /// Time the layer waited for the GPU inside the application's calls during the frame (serialising
    /// modes), in ns.
    pub waits_ns: u64,
}

/// A message to the worker.
#[derive(Debug)]
pub(crate) enum Message {
    /// A device was created.
    Device(Arc<Device>),
    /// A submission to read.
    Submission(Box<Submission>),
    /// A present.
    Present(Present),
    /// Something to say in the trace.
    Note(String),
    /// A device is being destroyed: finish with it, then answer.
    Closing {
        /// The device.
        device: Arc<Device>,
        /// Where to answer.
        ack: SyncSender<()>,
    },
    /// The session ends.
    Stop,
}
