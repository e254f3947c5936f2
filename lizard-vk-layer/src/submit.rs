//! `vkQueueSubmit` and `vkQueueSubmit2`: after each application command buffer whose recording holds the
//! layer's queries, a command buffer of the layer's copies their results into the queue's readback buffer;
//! after the submission, the layer submits its own fence. The worker reads the results once that fence
//! signals, on its own thread: the application never waits for them.

use std::sync::Arc;

use ash::vk;

use crate::boundary::{self, Feature};
use crate::clock;
use crate::command_buffer::recording;
use crate::config::Mode;
use crate::device::Device;
use crate::message::{Message, Submission, Submitted};
use crate::queue::{self, QueueShared, QueueState};
use crate::registry;
use crate::serialise;
use crate::trap;
use crate::workload::Recording;

/// What the layer adds to one submission.
pub(crate) struct Plan {
    /// For each batch, for each application command buffer: the layer's copy to submit after it.
    pub posts: Vec<Vec<Option<vk::CommandBuffer>>>,
    /// The application's command buffers the worker reads.
    pub buffers: Vec<Submitted>,
    /// The readback range used.
    pub range: Option<u64>,
}

/// The readback bytes the queries of `tree` take.
fn bytes(tree: &[Arc<Recording>]) -> u64 {
    tree.iter()
        .flat_map(|r| r.blocks.iter())
        .map(|b| u64::from(b.used) * b.kind.stride())
        .sum()
}

/// Records the layer's copy of the query results of `copies` into the readback buffer.
fn record_copy(
    device: &Device,
    state: &mut QueueState,
    copies: &[(Arc<Recording>, Vec<u64>)],
) -> Result<vk::CommandBuffer, vk::Result> {
    let t = &device.table;
    let (Some(begin), Some(end), Some(barrier), Some(copy)) = (
        t.begin_command_buffer,
        t.end_command_buffer,
        t.cmd_pipeline_barrier,
        t.cmd_copy_query_pool_results,
    ) else {
        return Err(vk::Result::ERROR_EXTENSION_NOT_PRESENT);
    };
    let cb = state.command_buffer(device)?;
    let info =
        vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
    // SAFETY: the layer's command buffer, not pending (given back by the worker after its fence), from a
    // pool whose buffers may be reset by beginning them.
    if let Err(e) = unsafe { begin(cb, &info) }.result() {
        state.unused_command_buffer(cb);
        return Err(e);
    }
    // No execution dependency before the copies: each waits for its queries (WAIT), which the application's
    // command buffer before wrote.
    for (recording, offsets) in copies {
        for (block, &offset) in recording.blocks.iter().zip(offsets) {
            for (first, count) in block.written_runs() {
                let stride = block.kind.stride();
                // SAFETY: the layer's pool and buffer; the offset and the stride are multiples of 8 and the
                // range lies in the buffer (allocated from its ring). Only queries the recording writes are
                // copied, so the wait for each ends once the command buffer before ran.
                unsafe {
                    copy(
                        cb,
                        block.pool,
                        first,
                        count,
                        state.readback.buffer,
                        offset + u64::from(first) * stride,
                        stride,
                        vk::QueryResultFlags::TYPE_64
                            | vk::QueryResultFlags::WITH_AVAILABILITY
                            | vk::QueryResultFlags::WAIT,
                    )
                };
            }
        }
    }
    let to_host = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    // SAFETY: recording; the copies' writes made visible to the host.
    unsafe {
        barrier(
            cb,
            vk::PipelineStageFlags::TRANSFER,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            1,
            &to_host,
            0,
            std::ptr::null(),
            0,
            std::ptr::null(),
        )
    };
    // SAFETY: the command buffer begun above.
    if let Err(e) = unsafe { end(cb) }.result() {
        state.unused_command_buffer(cb);
        return Err(e);
    }
    Ok(cb)
}

/// The recordings with queries of `batches` (each the application's command buffers of one batch; a
/// batch the layer must leave alone is empty); `None` when none has any.
pub(crate) fn recordings(
    device: &Device,
    batches: &[Vec<vk::CommandBuffer>],
) -> Option<Vec<Vec<Option<Arc<Recording>>>>> {
    let recordings: Vec<Vec<Option<Arc<Recording>>>> = batches
        .iter()
        .map(|cbs| {
            cbs.iter()
                .map(|cb| recording(device, *cb).filter(|r| r.has_queries()))
                .collect()
        })
        .collect();
    (!recordings.iter().flatten().all(Option::is_none)).then_some(recordings)
}

/// Plans the layer's part of a submission of `recordings` (of [`recordings`]) on a queue whose state is
/// `state`: a copy after each command buffer with queries, into one range of the readback buffer.
pub(crate) fn plan(
    device: &Device,
    state: &mut QueueState,
    recordings: &[Vec<Option<Arc<Recording>>>],
) -> Plan {
    let trees: Vec<Vec<Option<Vec<Arc<Recording>>>>> = recordings
        .iter()
        .map(|batch| batch.iter().map(|r| r.as_ref().map(|r| r.tree())).collect())
        .collect();
    let total: u64 = trees.iter().flatten().flatten().map(|t| bytes(t)).sum();
    let range = state.ring.alloc(total);
    let mut at = range.unwrap_or(0);
    let mut posts = Vec::with_capacity(recordings.len());
    let mut buffers = Vec::new();
    for (batch, tree) in recordings.iter().zip(&trees) {
        let mut batch_posts = Vec::with_capacity(batch.len());
        for (recording, tree) in batch.iter().zip(tree) {
            let (Some(recording), Some(tree)) = (recording, tree) else {
                batch_posts.push(None);
                continue;
            };
            let mut submitted = Submitted {
                recording: Arc::clone(recording),
                copies: Vec::new(),
                untimed: None,
                window: None,
                waited_ns: 0,
                trap_times: Vec::new(),
            };
            if range.is_none() {
                submitted.untimed = Some(
                    "the readback buffer was full (the results of earlier submissions are not read yet)"
                        .to_owned(),
                );
                batch_posts.push(None);
                buffers.push(submitted);
                continue;
            }
            let copies: Vec<(Arc<Recording>, Vec<u64>)> = tree
                .iter()
                .map(|r| {
                    let offsets = r
                        .blocks
                        .iter()
                        .map(|b| {
                            let o = at;
                            at += u64::from(b.used) * b.kind.stride();
                            o
                        })
                        .collect();
                    (Arc::clone(r), offsets)
                })
                .collect();
            match record_copy(device, state, &copies) {
                Ok(cb) => {
                    submitted.copies = copies;
                    batch_posts.push(Some(cb));
                }
                Err(e) => {
                    submitted.untimed = Some(format!("recording the layer's copy failed: {e}"));
                    batch_posts.push(None);
                }
            }
            buffers.push(submitted);
        }
        posts.push(batch_posts);
    }
    Plan {
        posts,
        buffers,
        range,
    }
}

impl Plan {
    /// The layer's command buffers in the submission.
    fn post_buffers(&self) -> Vec<vk::CommandBuffer> {
        self.posts.iter().flatten().flatten().copied().collect()
    }

    /// After the application's submission returned `result`: the layer's fence follows it (unless one is
    /// given, already submitted) and the worker is told; when it failed, everything is given back at once.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish(
        self,
        device: &Arc<Device>,
        queue: vk::Queue,
        shared: &Arc<QueueShared>,
        state: &mut QueueState,
        result: vk::Result,
        frame: u64,
        submitted_ns: u64,
        fence: Option<vk::Fence>,
    ) {
        let post = self.post_buffers();
        if result != vk::Result::SUCCESS {
            for cb in post {
                state.unused_command_buffer(cb);
            }
            if let Some(at) = self.range {
                state.ring.free(at);
            }
            return;
        }
        let fence = match fence {
            Some(f) => Some(f),
            None => signal_fence(device, queue, state),
        };
        if fence.is_none() {
            // Without a fence the worker cannot know when the copies are done: the range stays in use and
            // the command buffers are not reused.
            boundary::turn_off(
                Feature::Timing,
                "the layer could not submit its fence after a submission".to_owned(),
            );
            return;
        }
        device
            .session
            .send(Message::Submission(Box::new(Submission {
                device: Arc::clone(device),
                queue,
                shared: Arc::clone(shared),
                readback: Some(Arc::clone(&state.readback)),
                range: self.range,
                fence,
                post,
                frame,
                serial: device.session.next_submission_serial(),
                submitted_ns,
                buffers: self.buffers,
            })));
    }
}

/// Submits a fence of the layer's on `queue`, signalled when everything submitted before completes.
pub(crate) fn signal_fence(
    device: &Device,
    queue: vk::Queue,
    state: &mut QueueState,
) -> Option<vk::Fence> {
    let submit = device.table.queue_submit?;
    let fence = state.fence(device).ok()?;
    // SAFETY: the application holds `queue` for its own submission now; an empty submission signals the
    // layer's unsignalled fence once the queue's earlier work completes.
    match unsafe { submit(queue, 0, std::ptr::null(), fence) } {
        vk::Result::SUCCESS => Some(fence),
        _ => {
            state.unused_fence(fence);
            None
        }
    }
}

/// Whether the layer must leave a batch with this `pNext` chain alone: device-group masks count the
/// batch's command buffers one by one, and a protected batch cannot hold the layer's command buffers.
///
/// # Safety
///
/// `chain` is null or the valid `pNext` chain of a submit info.
unsafe fn unsuited(mut chain: *const std::ffi::c_void) -> bool {
    while !chain.is_null() {
        // SAFETY: a structure of the application's valid chain.
        let base = unsafe { &*(chain as *const vk::BaseInStructure<'_>) };
        if base.s_type == vk::StructureType::DEVICE_GROUP_SUBMIT_INFO
            || base.s_type == vk::StructureType::PROTECTED_SUBMIT_INFO
        {
            return true;
        }
        chain = base.p_next as *const std::ffi::c_void;
    }
    false
}

/// The command buffers of each of `submits` (none for a batch the layer leaves alone).
///
/// # Safety
///
/// `submits` are the application's valid submit infos.
pub(crate) unsafe fn batches(submits: &[vk::SubmitInfo<'_>]) -> Vec<Vec<vk::CommandBuffer>> {
    submits
        .iter()
        .map(|s| {
            // SAFETY: the application's chain.
            if s.p_command_buffers.is_null() || unsafe { unsuited(s.p_next) } {
                Vec::new()
            } else {
                // SAFETY: the application's array of `command_buffer_count` handles.
                unsafe {
                    std::slice::from_raw_parts(s.p_command_buffers, s.command_buffer_count as usize)
                }
                .to_vec()
            }
        })
        .collect()
}

/// The command buffers of each of `submits` (none for a batch the layer leaves alone).
///
/// # Safety
///
/// `submits` are the application's valid submit infos.
unsafe fn batches2(submits: &[vk::SubmitInfo2<'_>]) -> Vec<Vec<vk::CommandBuffer>> {
    submits
        .iter()
        .map(|s| {
            // SAFETY: the application's chain.
            let chained = unsafe { unsuited(s.p_next) };
            if s.p_command_buffer_infos.is_null()
                || s.flags.contains(vk::SubmitFlags::PROTECTED)
                || chained
            {
                return Vec::new();
            }
            // SAFETY: the application's array of `command_buffer_info_count` infos.
            unsafe {
                std::slice::from_raw_parts(
                    s.p_command_buffer_infos,
                    s.command_buffer_info_count as usize,
                )
            }
            .iter()
            .map(|i| i.command_buffer)
            .collect()
        })
        .collect()
}

/// Every command buffer of `submits`.
///
/// # Safety
///
/// `submits` are the application's valid submit infos.
unsafe fn all_command_buffers(submits: &[vk::SubmitInfo<'_>]) -> Vec<vk::CommandBuffer> {
    let mut all = Vec::new();
    for s in submits {
        if !s.p_command_buffers.is_null() {
            // SAFETY: the application's array of `command_buffer_count` handles.
            all.extend_from_slice(unsafe {
                std::slice::from_raw_parts(s.p_command_buffers, s.command_buffer_count as usize)
            });
        }
    }
    all
}

/// Every command buffer of `submits`.
///
/// # Safety
///
/// `submits` are the application's valid submit infos.
unsafe fn all_command_buffers2(submits: &[vk::SubmitInfo2<'_>]) -> Vec<vk::CommandBuffer> {
    let mut all = Vec::new();
    for s in submits {
        if !s.p_command_buffer_infos.is_null() {
            // SAFETY: the application's array of `command_buffer_info_count` infos.
            let infos = unsafe {
                std::slice::from_raw_parts(
                    s.p_command_buffer_infos,
                    s.command_buffer_info_count as usize,
                )
            };
            all.extend(infos.iter().map(|i| i.command_buffer));
        }
    }
    all
}

/// Whether a recording among `buffers` holds traps.
fn has_traps(device: &Device, buffers: &[vk::CommandBuffer]) -> bool {
    buffers
        .iter()
        .any(|cb| recording(device, *cb).is_some_and(|r| trap::trapped(&r)))
}

/// Opens the traps of every trapped recording among `buffers`: the layer does not serve this submission.
fn open_traps(device: &Device, buffers: &[vk::CommandBuffer]) {
    for cb in buffers {
        if let Some(r) = recording(device, *cb).filter(|r| trap::trapped(r)) {
            trap::open(device, &r);
        }
    }
}

/// The queue's state taken and the plan made for `batches`; `None` when there is nothing to read.
fn ready(
    device: &Device,
    queue: vk::Queue,
    batches: &[Vec<vk::CommandBuffer>],
) -> Option<(Box<QueueState>, Arc<QueueShared>, Plan)> {
    let recordings = recordings(device, batches)?;
    boundary::fault("submit");
    let (mut state, shared) = match queue::take(device, queue) {
        Ok(taken) => taken,
        Err(reason) => {
            boundary::turn_off(
                Feature::Timing,
                format!("the layer has no readback objects on a queue: {reason}"),
            );
            return None;
        }
    };
    let plan = plan(device, &mut state, &recordings);
    Some((state, shared, plan))
}

/// The layer's `vkQueueSubmit`.
///
/// # Safety
///
/// Called with the arguments of `vkQueueSubmit`.
pub(crate) unsafe extern "system" fn queue_submit(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo<'_>,
    fence: vk::Fence,
) -> vk::Result {
    const COMMAND: &str = "vkQueueSubmit";
    boundary::entry(COMMAND, vk::Result::ERROR_DEVICE_LOST, || {
        // SAFETY: a live queue.
        let Some(dev) = (unsafe { registry::device(queue) }) else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let Some(next) = dev.table.queue_submit else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let session = &dev.session;
        let frame = session.frame();
        if count == 0 || submits.is_null() {
            // SAFETY: the application's arguments, passed on.
            return unsafe { next(queue, count, submits, fence) };
        }
        // SAFETY: the application's array of `count` submit infos.
        let list = unsafe { std::slice::from_raw_parts(submits, count as usize) };
        let mode = session.mode_on(&dev);
        let measured = session.measures(frame) && boundary::is_on(Feature::Timing);
        // A submission of trapped command buffers is served whatever the frame.
        let serve = mode == Mode::RenderPass
            // SAFETY: the application's submit infos.
            && has_traps(&dev, &unsafe { all_command_buffers(list) });
        if (measured || serve) && mode.serialises() && boundary::is_on(Feature::Serialise) {
            if let Some(result) = boundary::work(Feature::Serialise, COMMAND, || {
                // SAFETY: the application's arguments.
                unsafe { serialise::submit(&dev, queue, list, fence, frame, measured) }
            })
            .flatten()
            {
                return result;
            }
        }
        if mode == Mode::RenderPass {
            // Traps the layer does not serve are opened before the submission.
            boundary::always(Feature::Serialise, COMMAND, || {
                // SAFETY: the application's submit infos.
                open_traps(&dev, &unsafe { all_command_buffers(list) })
            });
        }
        if !measured {
            // SAFETY: the application's arguments, passed on.
            return unsafe { next(queue, count, submits, fence) };
        }
        let submitted_ns = clock::monotonic_ns();
        let ready = boundary::work(Feature::Timing, COMMAND, || {
            // SAFETY: the application's submit infos.
            ready(&dev, queue, &unsafe { batches(list) })
        })
        .flatten();
        let Some((mut state, shared, plan)) = ready else {
            // SAFETY: the application's arguments, passed on.
            return unsafe { next(queue, count, submits, fence) };
        };
        // The application's batches, each command buffer followed by the layer's copy of its results.
        let arrays: Vec<Vec<vk::CommandBuffer>> = list
            .iter()
            .zip(&plan.posts)
            .map(|(info, posts)| {
                let mut array = Vec::with_capacity(posts.len() * 2);
                for (i, post) in posts.iter().enumerate() {
                    // SAFETY: the application's array of `command_buffer_count` handles (as many as posts).
                    array.push(unsafe { *info.p_command_buffers.add(i) });
                    array.extend(post);
                }
                array
            })
            .collect();
        let infos: Vec<vk::SubmitInfo<'_>> = list
            .iter()
            .zip(&arrays)
            .map(|(info, array)| {
                let mut copy = *info;
                if !array.is_empty() {
                    copy.command_buffer_count = array.len() as u32;
                    copy.p_command_buffers = array.as_ptr();
                }
                copy
            })
            .collect();
        // SAFETY: the application's submission with the layer's command buffers after its own; every
        // pointer in `infos` is live during the call.
        let result = unsafe { next(queue, infos.len() as u32, infos.as_ptr(), fence) };
        boundary::work(Feature::Timing, COMMAND, || {
            plan.finish(
                &dev,
                queue,
                &shared,
                &mut state,
                result,
                frame,
                submitted_ns,
                None,
            )
        });
        queue::put_back(&dev, queue, state);
        result
    })
}

/// `vkQueueSubmit2` and its KHR form.
///
/// # Safety
///
/// Called with the arguments of `vkQueueSubmit2`.
unsafe fn queue_submit2_with(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
    command: &'static str,
    khr: bool,
) -> vk::Result {
    boundary::entry(command, vk::Result::ERROR_DEVICE_LOST, || {
        // SAFETY: a live queue.
        let Some(dev) = (unsafe { registry::device(queue) }) else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let next = if khr {
            dev.table.queue_submit2_khr
        } else {
            dev.table.queue_submit2
        };
        let Some(next) = next else {
            return vk::Result::ERROR_DEVICE_LOST;
        };
        let session = &dev.session;
        let frame = session.frame();
        if count == 0 || submits.is_null() {
            // SAFETY: the application's arguments, passed on.
            return unsafe { next(queue, count, submits, fence) };
        }
        // SAFETY: the application's array of `count` submit infos.
        let list = unsafe { std::slice::from_raw_parts(submits, count as usize) };
        let mode = session.mode_on(&dev);
        let measured = session.measures(frame) && boundary::is_on(Feature::Timing);
        // A submission of trapped command buffers is served whatever the frame.
        let serve = mode == Mode::RenderPass
            // SAFETY: the application's submit infos.
            && has_traps(&dev, &unsafe { all_command_buffers2(list) });
        if (measured || serve) && mode.serialises() && boundary::is_on(Feature::Serialise) {
            if let Some(result) = boundary::work(Feature::Serialise, command, || {
                // SAFETY: the application's arguments.
                unsafe { serialise::submit2(&dev, queue, list, fence, frame, measured, next) }
            })
            .flatten()
            {
                return result;
            }
        }
        if mode == Mode::RenderPass {
            // Traps the layer does not serve are opened before the submission.
            boundary::always(Feature::Serialise, command, || {
                // SAFETY: the application's submit infos.
                open_traps(&dev, &unsafe { all_command_buffers2(list) })
            });
        }
        if !measured {
            // SAFETY: the application's arguments, passed on.
            return unsafe { next(queue, count, submits, fence) };
        }
        let submitted_ns = clock::monotonic_ns();
        let ready = boundary::work(Feature::Timing, command, || {
            // SAFETY: the application's submit infos.
            ready(&dev, queue, &unsafe { batches2(list) })
        })
        .flatten();
        let Some((mut state, shared, plan)) = ready else {
            // SAFETY: the application's arguments, passed on.
            return unsafe { next(queue, count, submits, fence) };
        };
        let arrays: Vec<Vec<vk::CommandBufferSubmitInfo<'_>>> = list
            .iter()
            .zip(&plan.posts)
            .map(|(info, posts)| {
                let mut array = Vec::with_capacity(posts.len() * 2);
                for (i, post) in posts.iter().enumerate() {
                    // SAFETY: the application's array of `command_buffer_info_count` infos (as many as posts).
                    array.push(unsafe { *info.p_command_buffer_infos.add(i) });
                    if let Some(cb) = post {
                        array.push(vk::CommandBufferSubmitInfo::default().command_buffer(*cb));
                    }
                }
                array
            })
            .collect();
        let infos: Vec<vk::SubmitInfo2<'_>> = list
            .iter()
            .zip(&arrays)
            .map(|(info, array)| {
                let mut copy = *info;
                if !array.is_empty() {
                    copy.command_buffer_info_count = array.len() as u32;
                    copy.p_command_buffer_infos = array.as_ptr();
                }
                copy
            })
            .collect();
        // SAFETY: the application's submission with the layer's command buffers added; every pointer in
        // `infos` is live during the call.
        let result = unsafe { next(queue, infos.len() as u32, infos.as_ptr(), fence) };
        boundary::work(Feature::Timing, command, || {
            plan.finish(
                &dev,
                queue,
                &shared,
                &mut state,
                result,
                frame,
                submitted_ns,
                None,
            )
        });
        queue::put_back(&dev, queue, state);
        result
    })
}

/// The layer's `vkQueueSubmit2`.
///
/// # Safety
///
/// Called with the arguments of `vkQueueSubmit2`.
pub(crate) unsafe extern "system" fn queue_submit2(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the caller's arguments.
    unsafe { queue_submit2_with(queue, count, submits, fence, "vkQueueSubmit2", false) }
}

/// The layer's `vkQueueSubmit2KHR`.
///
/// # Safety
///
/// Called with the arguments of `vkQueueSubmit2KHR`.
pub(crate) unsafe extern "system" fn queue_submit2_khr(
    queue: vk::Queue,
    count: u32,
    submits: *const vk::SubmitInfo2<'_>,
    fence: vk::Fence,
) -> vk::Result {
    // SAFETY: the caller's arguments.
    unsafe { queue_submit2_with(queue, count, submits, fence, "vkQueueSubmit2KHR", true) }
}
