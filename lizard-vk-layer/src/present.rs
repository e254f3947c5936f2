//! `vkQueuePresentKHR`: a frame ends. The worker reads lizard's counters over the frame and writes the
//! frame once its work is read.

use ash::vk;

use crate::boundary::{self, Feature};
use crate::clock;
use crate::message::{Message, Present};
use crate::registry;

/// The layer's `vkQueuePresentKHR`.
///
/// # Safety
///
/// Called with the arguments of `vkQueuePresentKHR`.
pub(crate) unsafe extern "system" fn queue_present_khr(
    queue: vk::Queue,
    info: *const vk::PresentInfoKHR<'_>,
) -> vk::Result {
    const COMMAND: &str = "vkQueuePresentKHR";
    boundary::entry(COMMAND, vk::Result::ERROR_DEVICE_LOST, || {
        // SAFETY: a live queue.
        let Some(dev) = (unsafe { registry::device(queue) }) else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let Some(next) = dev.table.queue_present_khr else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let at = clock::monotonic_ns();
        // SAFETY: the application's arguments, passed on.
        let result = unsafe { next(queue, info) };
        boundary::work(Feature::Frames, COMMAND, || {
            boundary::fault("present");
            let session = &dev.session;
            let (frame, waits_ns) = session.present();
            session.send(Message::Present(Present {
                frame,
                monotonic_ns: at,
                measured: session.measures(frame),
                waits_ns,
            }));
        });
        result
    })
}
