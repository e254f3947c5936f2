//! The `submit` mode: each `vkQueueSubmit` of a measured frame split into one submission per command
//! buffer, each waited for before the next, so that lizard's counters read between them belong to one
//! command buffer. Valid on every driver: the first piece of a batch waits for the batch's semaphores,
//! the last signals its semaphores, and the application's fence is signalled after the last piece. What
//! it costs is written down: the time waited is added to the frame (the worker writes it beside the
//! frame time), and each piece's window is kept.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;

use crate::boundary::{self, Feature};
use crate::clock;
use crate::command_buffer::recording;
use crate::device::Device;
use crate::message::Message;
use crate::queue::{self, QueueShared, QueueState};
use crate::submit::{plan, recordings, Plan};
use crate::trap;

/// The longest the layer waits for one piece: past it, serialising turns off.
const WAIT_NS: u64 = 10_000_000_000;

static CHAINED: AtomicBool = AtomicBool::new(false);

/// Says once that batches with `pNext` chains are not split.
fn chained(device: &Device) {
    if !CHAINED.swap(true, Ordering::Relaxed) {
        device.session.send(Message::Note(
            "submit mode: a submission whose batches have pNext chains (timeline semaphore values, device \
             groups, protected work) is not split; it is timed as in frame mode"
                .to_owned(),
        ));
    }
}

/// One piece submitted: waits for it and tells the worker. `Err` carries a failed submission's result.
#[allow(clippy::too_many_arguments)]
fn piece(
    device: &Arc<Device>,
    queue: vk::Queue,
    shared: &Arc<QueueShared>,
    state: &mut QueueState,
    cb: vk::CommandBuffer,
    frame: u64,
    measured: bool,
    submit: impl FnOnce(Option<vk::CommandBuffer>, vk::Fence) -> vk::Result,
) -> Result<(), vk::Result> {
    let plan: Option<Plan> = if measured {
        recordings(device, &[vec![cb]]).map(|r| plan(device, state, &r))
    } else {
        None
    };
    let trapped = recording(device, cb).filter(|r| trap::trapped(r));
    if let Some(r) = &trapped {
        trap::arm(device, r);
    }
    let post = plan.as_ref().and_then(|p| p.posts[0][0]);
    let fence = match state.fence(device) {
        Ok(f) => f,
        Err(e) => {
            boundary::turn_off(Feature::Serialise, format!("no fence for a piece: {e}"));
            // The piece is still submitted, without a wait, its traps opened.
            if let Some(r) = &trapped {
                trap::open(device, r);
            }
            let result = submit(post, vk::Fence::null());
            if let Some(p) = plan {
                p.finish(
                    device,
                    queue,
                    shared,
                    state,
                    result,
                    frame,
                    clock::monotonic_ns(),
                    None,
                );
            }
            return if result == vk::Result::SUCCESS {
                Ok(())
            } else {
                Err(result)
            };
        }
    };
    let before = clock::monotonic_ns();
    let result = submit(post, fence);
    if result != vk::Result::SUCCESS {
        state.unused_fence(fence);
        if let Some(p) = plan {
            p.finish(device, queue, shared, state, result, frame, before, None);
        }
        return Err(result);
    }
    let submitted = clock::monotonic_ns();
    let trap_times = match &trapped {
        Some(r) => match trap::serve(device, r) {
            Ok(times) => times,
            Err(why) => {
                boundary::turn_off(Feature::Serialise, format!("renderpass mode: {why}"));
                Vec::new()
            }
        },
        None => Vec::new(),
    };
    let waited = match device.table.wait_for_fences {
        // SAFETY: the layer's fence, just submitted; the wait has a deadline.
        Some(wait) => unsafe { wait(device.handle, 1, &fence, vk::TRUE, WAIT_NS) },
        None => vk::Result::ERROR_EXTENSION_NOT_PRESENT,
    };
    let after = clock::monotonic_ns();
    if waited != vk::Result::SUCCESS {
        boundary::turn_off(
            Feature::Serialise,
            format!("a piece of a split submission did not complete within 10 s ({waited})"),
        );
    }
    let waited_ns = after - submitted;
    if measured {
        device.session.add_wait(waited_ns);
    }
    match plan {
        Some(mut p) => {
            if let Some(b) = p.buffers.first_mut() {
                b.window = Some((before, after));
                b.waited_ns = waited_ns;
                b.trap_times = trap_times;
            }
            p.finish(
                device,
                queue,
                shared,
                state,
                vk::Result::SUCCESS,
                frame,
                before,
                Some(fence),
            );
        }
        None if waited == vk::Result::SUCCESS => {
            if let Some(reset) = device.table.reset_fences {
                // SAFETY: the layer's fence, signalled and no longer in use.
                if unsafe { reset(device.handle, 1, &fence) } == vk::Result::SUCCESS {
                    state.unused_fence(fence);
                }
            }
        }
        // A fence still pending is not reused.
        None => {}
    }
    Ok(())
}

/// `vkQueueSubmit` split into pieces; `None` when the submission is not split (it is then submitted as in
/// frame mode). Unless `measured` (a frame outside the range whose trapped command buffers the layer must
/// still serve), nothing is read and no wait is counted.
///
/// # Safety
///
/// `list` are the application's valid submit infos for `queue`, and `fence` its fence.
pub(crate) unsafe fn submit(
    device: &Arc<Device>,
    queue: vk::Queue,
    list: &[vk::SubmitInfo<'_>],
    fence: vk::Fence,
    frame: u64,
    measured: bool,
) -> Option<vk::Result> {
    if list.iter().any(|s| !s.p_next.is_null()) {
        chained(device);
        return None;
    }
    let next = device.table.queue_submit?;
    let (mut state, shared) = queue::take(device, queue).ok()?;
    let outcome = (|| {
        for info in list {
            let cbs: &[vk::CommandBuffer] = if info.p_command_buffers.is_null() {
                &[]
            } else {
                // SAFETY: the application's array of `command_buffer_count` handles.
                unsafe {
                    std::slice::from_raw_parts(
                        info.p_command_buffers,
                        info.command_buffer_count as usize,
                    )
                }
            };
            if cbs.is_empty() {
                // SAFETY: the application's batch, passed on whole.
                let result = unsafe { next(queue, 1, info, vk::Fence::null()) };
                if result != vk::Result::SUCCESS {
                    return result;
                }
                continue;
            }
            for (j, &cb) in cbs.iter().enumerate() {
                let (first, last) = (j == 0, j + 1 == cbs.len());
                let submit = |post: Option<vk::CommandBuffer>, our: vk::Fence| {
                    let array: Vec<vk::CommandBuffer> = std::iter::once(cb).chain(post).collect();
                    let mut one = vk::SubmitInfo {
                        command_buffer_count: array.len() as u32,
                        p_command_buffers: array.as_ptr(),
                        ..Default::default()
                    };
                    if first {
                        one.wait_semaphore_count = info.wait_semaphore_count;
                        one.p_wait_semaphores = info.p_wait_semaphores;
                        one.p_wait_dst_stage_mask = info.p_wait_dst_stage_mask;
                    }
                    if last {
                        one.signal_semaphore_count = info.signal_semaphore_count;
                        one.p_signal_semaphores = info.p_signal_semaphores;
                    }
                    // SAFETY: one command buffer of the application's batch (with the layer's copy), its
                    // semaphores on the first and last pieces; every pointer is live during the call.
                    unsafe { next(queue, 1, &one, our) }
                };
                if let Err(result) = piece(
                    device, queue, &shared, &mut state, cb, frame, measured, submit,
                ) {
                    return result;
                }
            }
        }
        if fence != vk::Fence::null() {
            // SAFETY: signals the application's fence once every piece completed.
            return unsafe { next(queue, 0, std::ptr::null(), fence) };
        }
        vk::Result::SUCCESS
    })();
    queue::put_back(device, queue, state);
    Some(outcome)
}

/// `vkQueueSubmit2` split into pieces; `None` when the submission is not split.
///
/// # Safety
///
/// As [`submit`]; `next` is the next layer's `vkQueueSubmit2` (or its KHR form).
pub(crate) unsafe fn submit2(
    device: &Arc<Device>,
    queue: vk::Queue,
    list: &[vk::SubmitInfo2<'_>],
    fence: vk::Fence,
    frame: u64,
    measured: bool,
    next: vk::PFN_vkQueueSubmit2,
) -> Option<vk::Result> {
    if list
        .iter()
        .any(|s| !s.p_next.is_null() || !s.flags.is_empty())
    {
        chained(device);
        return None;
    }
    let (mut state, shared) = queue::take(device, queue).ok()?;
    let outcome = (|| {
        for info in list {
            let cbs: &[vk::CommandBufferSubmitInfo<'_>] = if info.p_command_buffer_infos.is_null() {
                &[]
            } else {
                // SAFETY: the application's array of `command_buffer_info_count` infos.
                unsafe {
                    std::slice::from_raw_parts(
                        info.p_command_buffer_infos,
                        info.command_buffer_info_count as usize,
                    )
                }
            };
            if cbs.is_empty() {
                // SAFETY: the application's batch, passed on whole.
                let result = unsafe { next(queue, 1, info, vk::Fence::null()) };
                if result != vk::Result::SUCCESS {
                    return result;
                }
                continue;
            }
            for (j, cb_info) in cbs.iter().enumerate() {
                let (first, last) = (j == 0, j + 1 == cbs.len());
                let submit = |post: Option<vk::CommandBuffer>, our: vk::Fence| {
                    let mut array = vec![*cb_info];
                    if let Some(p) = post {
                        array.push(vk::CommandBufferSubmitInfo::default().command_buffer(p));
                    }
                    let mut one = vk::SubmitInfo2 {
                        command_buffer_info_count: array.len() as u32,
                        p_command_buffer_infos: array.as_ptr(),
                        ..Default::default()
                    };
                    if first {
                        one.wait_semaphore_info_count = info.wait_semaphore_info_count;
                        one.p_wait_semaphore_infos = info.p_wait_semaphore_infos;
                    }
                    if last {
                        one.signal_semaphore_info_count = info.signal_semaphore_info_count;
                        one.p_signal_semaphore_infos = info.p_signal_semaphore_infos;
                    }
                    // SAFETY: one command buffer of the application's batch (with the layer's copy), its
                    // semaphores on the first and last pieces; every pointer is live during the call.
                    unsafe { next(queue, 1, &one, our) }
                };
                if let Err(result) = piece(
                    device,
                    queue,
                    &shared,
                    &mut state,
                    cb_info.command_buffer,
                    frame,
                    measured,
                    submit,
                ) {
                    return result;
                }
            }
        }
        if fence != vk::Fence::null() {
            // SAFETY: signals the application's fence once every piece completed.
            return unsafe { next(queue, 0, std::ptr::null(), fence) };
        }
        vk::Result::SUCCESS
    })();
    queue::put_back(device, queue, state);
    Some(outcome)
}
