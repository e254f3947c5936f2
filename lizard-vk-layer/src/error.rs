//! Why the layer's own work could not be done: each turns a feature off, its text written in the trace.

use ash::vk;

/// A failure of the layer's own work on a device.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum LayerError {
    /// A queue the application got without `vkGetDeviceQueue` or `vkGetDeviceQueue2` passing the layer.
    #[error("a queue the layer did not see taken")]
    UnknownQueue,
    /// The next layer or the driver does not give a command the layer calls.
    #[error("the driver lacks {0}, which the layer needs")]
    Missing(&'static str),
    /// A command the layer called failed.
    #[error("{call} failed: {result}")]
    Call {
        /// The command.
        call: &'static str,
        /// What it returned.
        result: vk::Result,
    },
    /// The device has no memory the layer can read its results from.
    #[error("the device has no host-visible, coherent memory for the query results")]
    NoHostMemory,
    /// A trap of the `renderpass` mode the GPU did not reach in time.
    #[error("trap {index} was not reached within {seconds} s ({result}); the rest were released")]
    TrapNotReached {
        /// The trap's place in its command buffer.
        index: usize,
        /// How long the layer waited.
        seconds: u64,
        /// What the event's status was.
        result: vk::Result,
    },
}

impl LayerError {
    /// The error of `call` returning `result`.
    pub(crate) fn call(call: &'static str) -> impl Fn(vk::Result) -> LayerError {
        move |result| LayerError::Call { call, result }
    }
}
