//! The `renderpass` mode's trap: after each workload of a primary command buffer the GPU sets an event
//! (`A`), waits for another (`B`) and resets it; at submission the layer polls `A`, reads lizard's counters
//! at that instant, resets `A` and sets `B`, so that each workload runs alone between two readings.
//!
//! Setting `B` from the host after the submission that waits for it is outside the Vulkan specification
//! (host-set events must be set before the submission that waits for them); Arm's own Mali driver honours
//! it, which is why the mode runs only there (or where `LIZARD_VK_RENDERPASS_ANY_DRIVER=1` forces it, to
//! test the mechanism). A submission of a trapped command buffer that the layer cannot serve gets every
//! `B` set before it is submitted — valid everywhere — so the GPU never waits for a host that does not
//! come.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ash::vk;

use crate::clock;
use crate::device::Device;
use crate::error::LayerError;
use crate::workload::Recording;

/// The longest the layer waits for one trap to be reached.
const TRAP_PATIENCE: Duration = Duration::from_secs(5);

/// A device's events: those free and every one created (destroyed with the device).
#[derive(Debug, Default)]
pub(crate) struct EventCache {
    free: Mutex<Vec<vk::Event>>,
    created: Mutex<Vec<vk::Event>>,
}

/// One trap's events, leased by a recording; back to the free list when dropped.
#[derive(Debug)]
pub(crate) struct Trap {
    /// Set by the GPU when the workload before it completed.
    pub reached: vk::Event,
    /// Set by the host to let the GPU go on.
    pub release: vk::Event,
    cache: Arc<EventCache>,
}

impl Drop for Trap {
    fn drop(&mut self) {
        let mut free = self.cache.free.lock().unwrap_or_else(|e| e.into_inner());
        free.push(self.reached);
        free.push(self.release);
    }
}

impl EventCache {
    fn event(&self, device: &Device) -> Option<vk::Event> {
        let free = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        if free.is_some() {
            return free;
        }
        let create = device.table.create_event?;
        let info = vk::EventCreateInfo::default();
        let mut event = vk::Event::null();
        // SAFETY: a live device; valid create info; output is ours.
        unsafe { create(device.handle, &info, std::ptr::null(), &mut event) }
            .result()
            .ok()?;
        self.created
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(event);
        Some(event)
    }

    /// A trap's two events (no lock is held across `vkCreateEvent`).
    pub(crate) fn lease(self: &Arc<Self>, device: &Device) -> Option<Trap> {
        let reached = self.event(device)?;
        let Some(release) = self.event(device) else {
            self.free
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(reached);
            return None;
        };
        Some(Trap {
            reached,
            release,
            cache: Arc::clone(self),
        })
    }

    /// Destroys every event (the device is being destroyed).
    pub(crate) fn destroy_all(&self, device: &Device) {
        let created = std::mem::take(&mut *self.created.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(destroy) = device.table.destroy_event {
            for event in created {
                // SAFETY: the layer's event on a live device, not in use any more.
                unsafe { destroy(device.handle, event, std::ptr::null()) };
            }
        }
        self.free.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// Records the trap after a workload into `cb` (outside a render pass, in a primary command buffer).
pub(crate) fn record(device: &Device, cb: vk::CommandBuffer, trap: &Trap) -> bool {
    let t = &device.table;
    let (Some(set), Some(wait), Some(reset)) =
        (t.cmd_set_event, t.cmd_wait_events, t.cmd_reset_event)
    else {
        return false;
    };
    // SAFETY: `cb` is recording outside a render pass; the events are the layer's. The wait's source stage
    // is HOST, as the event it waits for is set by the host.
    unsafe {
        set(cb, trap.reached, vk::PipelineStageFlags::ALL_COMMANDS);
        wait(
            cb,
            1,
            &trap.release,
            vk::PipelineStageFlags::HOST,
            vk::PipelineStageFlags::ALL_COMMANDS,
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
        );
        reset(cb, trap.release, vk::PipelineStageFlags::ALL_COMMANDS);
    }
    true
}

/// Whether `recording` holds traps (only primary command buffers do).
pub(crate) fn trapped(recording: &Recording) -> bool {
    !recording.traps.is_empty()
}

/// Before a submission of trapped `recording` that the layer will serve: both events of every trap
/// unsignalled (the command buffer is not pending, so no GPU work uses them).
pub(crate) fn arm(device: &Device, recording: &Recording) {
    if let Some(reset) = device.table.reset_event {
        for trap in &recording.traps {
            // SAFETY: the layer's events, not in use by pending work.
            unsafe {
                let _ = reset(device.handle, trap.reached);
                let _ = reset(device.handle, trap.release);
            }
        }
    }
}

/// Before a submission of trapped `recording` that the layer will not serve: every release set, so that
/// the GPU goes through each trap at once (host-set before submission: valid on every driver).
pub(crate) fn open(device: &Device, recording: &Recording) {
    let (Some(set), Some(reset)) = (device.table.set_event, device.table.reset_event) else {
        return;
    };
    for trap in &recording.traps {
        // SAFETY: the layer's events, not in use by pending work.
        unsafe {
            let _ = reset(device.handle, trap.reached);
            let _ = set(device.handle, trap.release);
        }
    }
}

/// Serves the traps of `recording`, just submitted: for each in order, waits until the GPU reached it,
/// notes `CLOCK_MONOTONIC` then, and lets the GPU go on. Returns the instants, one per trap reached; on a
/// trap not reached in time, every remaining trap is released at once and `Err` says why.
pub(crate) fn serve(device: &Device, recording: &Recording) -> Result<Vec<u64>, LayerError> {
    let t = &device.table;
    let (Some(status), Some(set), Some(reset)) = (t.get_event_status, t.set_event, t.reset_event)
    else {
        return Err(LayerError::Missing(
            "vkGetEventStatus, vkSetEvent or vkResetEvent",
        ));
    };
    let mut times = Vec::with_capacity(recording.traps.len());
    for (i, trap) in recording.traps.iter().enumerate() {
        let deadline = Instant::now() + TRAP_PATIENCE;
        loop {
            // SAFETY: the layer's event on a live device.
            match unsafe { status(device.handle, trap.reached) } {
                vk::Result::EVENT_SET => break,
                vk::Result::EVENT_RESET if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_micros(50));
                }
                other => {
                    for rest in &recording.traps[i..] {
                        // SAFETY: as above; releasing lets the GPU through.
                        let _ = unsafe { set(device.handle, rest.release) };
                    }
                    return Err(LayerError::TrapNotReached {
                        index: i,
                        seconds: TRAP_PATIENCE.as_secs(),
                        result: other,
                    });
                }
            }
        }
        times.push(clock::monotonic_ns());
        // SAFETY: as above: `reached` back to unsignalled for the next execution, then the GPU goes on.
        unsafe {
            let _ = reset(device.handle, trap.reached);
            let _ = set(device.handle, trap.release);
        }
    }
    Ok(times)
}
