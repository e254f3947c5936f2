//! What the layer records into a command buffer while the application records it: each workload, the
//! queries around it, the labels open, the draws in each render pass.
//!
//! Queries are placed outside render pass instances only: a timestamp before `vkCmdBeginRenderPass`
//! (top of pipe) and after `vkCmdEndRenderPass` (bottom of pipe), a pipeline-statistics query begun before
//! and ended after it, so that multiview and subpasses need nothing of the layer. The query blocks a
//! recording uses are reset in the command buffer before their first query, where no render pass is open.

use std::sync::Arc;

use ash::vk;

use crate::device::Device;
use crate::query_blocks::{Block, BlockKind};
use crate::trap::{self, Trap};
use crate::workload::{Entry, Kind, Labels, Recording, Slot, Workload};

/// What the layer may record into one command buffer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Allowed {
    /// Timestamps (the family has them and they are asked for).
    pub timestamps: bool,
    /// Graphics pipeline statistics around render passes.
    pub graphics_statistics: bool,
    /// Compute pipeline statistics around dispatches.
    pub compute_statistics: bool,
    /// The `renderpass` mode's trap after each workload (primary command buffers without
    /// `SIMULTANEOUS_USE` only).
    pub traps: bool,
}

/// How a render pass instance begins.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RenderPassBegin {
    /// `vkCmdBeginRenderPass`, `vkCmdBeginRenderPass2` or `vkCmdBeginRendering`.
    pub kind: Kind,
    /// The command's name.
    pub command: &'static str,
    /// The render area.
    pub area: vk::Rect2D,
    /// Its first subpass runs secondary command buffers.
    pub secondary_contents: bool,
    /// Its subpasses, when known (1 for dynamic rendering).
    pub subpasses: Option<u32>,
    /// Dynamic rendering suspending or resuming an instance that spans command buffers.
    pub split: bool,
}

/// A command buffer being recorded.
#[derive(Debug)]
pub(crate) struct Builder {
    secondary: bool,
    /// A secondary command buffer continuing its primary's render pass: no workload of its own.
    continues: bool,
    allowed: Allowed,
    entries: Vec<Entry>,
    blocks: Vec<Block>,
    traps: Vec<Trap>,
    labels: Vec<Arc<str>>,
    snapshot: Option<Labels>,
    /// The entry index of the render pass (or other workload) open.
    open: Option<usize>,
    loose_draws: u32,
    /// Pipeline-statistics queries of the application's own open here.
    app_statistics: u32,
}

impl Builder {
    /// A recording of a primary (`secondary` false) or secondary command buffer; `continues`: a secondary
    /// recorded with `RENDER_PASS_CONTINUE`.
    pub(crate) fn new(secondary: bool, continues: bool, allowed: Allowed) -> Builder {
        Builder {
            secondary,
            continues,
            allowed,
            entries: Vec::new(),
            blocks: Vec::new(),
            traps: Vec::new(),
            labels: Vec::new(),
            snapshot: None,
            open: None,
            loose_draws: 0,
            app_statistics: 0,
        }
    }

    /// The labels open now.
    fn labels(&mut self) -> Labels {
        self.snapshot
            .get_or_insert_with(|| self.labels.iter().cloned().collect())
            .clone()
    }

    /// A query of `kind`, from a block with room or a new block (reset here in `cb`).
    fn slot(&mut self, device: &Device, cb: vk::CommandBuffer, kind: BlockKind) -> Option<Slot> {
        let found = self
            .blocks
            .iter()
            .rposition(|b| b.kind == kind && b.used < kind.size());
        let index = match found {
            Some(i) => i,
            None => {
                let reset = device.table.cmd_reset_query_pool?;
                let block = device
                    .blocks
                    .lease(&device.table, device.handle, kind)
                    .ok()?;
                // SAFETY: `cb` is recording, outside any render pass (queries are only taken at a
                // workload's start, outside render passes); the pool is the layer's own.
                unsafe { reset(cb, block.pool, 0, kind.size()) };
                self.blocks.push(block);
                self.blocks.len() - 1
            }
        };
        let block = &mut self.blocks[index];
        let slot = Slot {
            block: index as u32,
            query: block.used,
        };
        block.used += 1;
        block.written.push(false);
        Some(slot)
    }

    /// Notes that `slot`'s query is complete once the command buffer runs to here.
    fn written(&mut self, slot: Slot) {
        if let Some(w) = self.blocks[slot.block as usize]
            .written
            .get_mut(slot.query as usize)
        {
            *w = true;
        }
    }

    fn pool(&self, slot: Slot) -> vk::QueryPool {
        self.blocks[slot.block as usize].pool
    }

    fn write_timestamp(
        &mut self,
        device: &Device,
        cb: vk::CommandBuffer,
        stage: vk::PipelineStageFlags,
        slot: Slot,
    ) {
        if let Some(write) = device.table.cmd_write_timestamp {
            // SAFETY: `cb` is recording; the query was reset in `cb` before and is written once per
            // execution.
            unsafe { write(cb, stage, self.pool(slot), slot.query) };
            self.written(slot);
        }
    }

    /// Timestamps before and after a workload, the first written now.
    fn timestamps(
        &mut self,
        device: &Device,
        cb: vk::CommandBuffer,
    ) -> (Option<[Slot; 2]>, Option<&'static str>) {
        if !self.allowed.timestamps {
            return (None, Some("timestamps are off here"));
        }
        let (Some(a), Some(b)) = (
            self.slot(device, cb, BlockKind::Timestamp),
            self.slot(device, cb, BlockKind::Timestamp),
        ) else {
            return (None, Some("the layer could not get a timestamp query"));
        };
        self.write_timestamp(device, cb, vk::PipelineStageFlags::TOP_OF_PIPE, a);
        (Some([a, b]), None)
    }

    /// A pipeline-statistics query of `kind` begun now.
    fn begin_statistics(
        &mut self,
        device: &Device,
        cb: vk::CommandBuffer,
        kind: BlockKind,
    ) -> Option<Slot> {
        let begin = device.table.cmd_begin_query?;
        let slot = self.slot(device, cb, kind)?;
        // SAFETY: `cb` is recording outside a render pass with no pipeline-statistics query open (the
        // application's are counted); the query was reset in `cb`.
        unsafe {
            begin(
                cb,
                self.pool(slot),
                slot.query,
                vk::QueryControlFlags::empty(),
            )
        };
        Some(slot)
    }

    /// Why a workload of this recording cannot have pipeline statistics, if so.
    fn statistics_refusal(&self) -> Option<&'static str> {
        if self.secondary {
            Some("no pipeline statistics in secondary command buffers (the primary may hold a query)")
        } else if self.app_statistics > 0 {
            Some("the application's own pipeline-statistics query is open")
        } else {
            None
        }
    }

    /// A render pass instance begins (called before the command goes down).
    pub(crate) fn begin_render_pass(
        &mut self,
        device: &Device,
        cb: vk::CommandBuffer,
        begin: RenderPassBegin,
    ) {
        if self.continues || self.open.is_some() {
            return;
        }
        crate::boundary::fault("record");
        let labels = self.labels();
        let mut workload = Workload {
            kind: begin.kind,
            command: begin.command,
            labels,
            area: Some(begin.area),
            draws: 0,
            clears: 0,
            executes: 0,
            timestamps: None,
            untimed: None,
            statistics: None,
            no_statistics: None,
            trap: None,
        };
        if begin.split {
            workload.untimed = Some(
                "a render pass instance suspended or resumed across command buffers is not timed",
            );
        } else {
            (workload.timestamps, workload.untimed) = self.timestamps(device, cb);
            if self.allowed.graphics_statistics {
                let secondaries_ok = device.info.inherited_queries
                    || (!begin.secondary_contents && begin.subpasses == Some(1));
                workload.no_statistics = self.statistics_refusal().or((!secondaries_ok).then_some(
                    "the render pass may run secondary command buffers and the device has no inheritedQueries",
                ));
                if workload.no_statistics.is_none() {
                    workload.statistics =
                        self.begin_statistics(device, cb, BlockKind::GraphicsStatistics);
                }
            }
        }
        self.entries.push(Entry::Workload(workload));
        self.open = Some(self.entries.len() - 1);
    }

    /// The open render pass instance ends (called after the command went down).
    pub(crate) fn end_render_pass(&mut self, device: &Device, cb: vk::CommandBuffer) {
        let Some(index) = self.open.take() else {
            return;
        };
        let Entry::Workload(workload) = &self.entries[index] else {
            return;
        };
        if !workload.kind.is_render_pass() {
            return;
        }
        let (statistics, timestamps) = (workload.statistics, workload.timestamps);
        self.end_queries(device, cb, statistics, timestamps);
        self.trap(device, cb, index);
    }

    /// In `renderpass` mode, the trap after the workload at entry `index`.
    fn trap(&mut self, device: &Device, cb: vk::CommandBuffer, index: usize) {
        if !self.allowed.traps || self.secondary {
            return;
        }
        let Some(leased) = device.events.lease(device) else {
            return;
        };
        if !trap::record(device, cb, &leased) {
            return;
        }
        self.traps.push(leased);
        if let Some(Entry::Workload(w)) = self.entries.get_mut(index) {
            w.trap = Some(self.traps.len() as u32 - 1);
        }
    }

    fn end_queries(
        &mut self,
        device: &Device,
        cb: vk::CommandBuffer,
        statistics: Option<Slot>,
        timestamps: Option<[Slot; 2]>,
    ) {
        if let (Some(slot), Some(end)) = (statistics, device.table.cmd_end_query) {
            // SAFETY: the query begun before the workload in `cb`, outside a render pass as now.
            unsafe { end(cb, self.pool(slot), slot.query) };
            self.written(slot);
        }
        if let Some([_, after]) = timestamps {
            self.write_timestamp(device, cb, vk::PipelineStageFlags::BOTTOM_OF_PIPE, after);
        }
    }

    /// A workload outside render passes (dispatch, copy, blit, resolve, clear) begins; `false` when none
    /// is recorded for it (inside a render pass, or continuing one).
    pub(crate) fn begin_work(
        &mut self,
        device: &Device,
        cb: vk::CommandBuffer,
        kind: Kind,
        command: &'static str,
    ) -> bool {
        if self.continues || self.open.is_some() {
            return false;
        }
        let labels = self.labels();
        let mut workload = Workload {
            kind,
            command,
            labels,
            area: None,
            draws: 0,
            clears: 0,
            executes: 0,
            timestamps: None,
            untimed: None,
            statistics: None,
            no_statistics: None,
            trap: None,
        };
        (workload.timestamps, workload.untimed) = self.timestamps(device, cb);
        if kind == Kind::Dispatch && self.allowed.compute_statistics {
            workload.no_statistics = self.statistics_refusal();
            if workload.no_statistics.is_none() {
                workload.statistics =
                    self.begin_statistics(device, cb, BlockKind::ComputeStatistics);
            }
        }
        self.entries.push(Entry::Workload(workload));
        self.open = Some(self.entries.len() - 1);
        true
    }

    /// The workload of [`begin_work`](Self::begin_work) ends.
    pub(crate) fn end_work(&mut self, device: &Device, cb: vk::CommandBuffer) {
        let Some(index) = self.open.take() else {
            return;
        };
        let Entry::Workload(workload) = &self.entries[index] else {
            return;
        };
        let (statistics, timestamps) = (workload.statistics, workload.timestamps);
        self.end_queries(device, cb, statistics, timestamps);
        self.trap(device, cb, index);
    }

    fn open_workload(&mut self) -> Option<&mut Workload> {
        match self.entries.get_mut(self.open?) {
            Some(Entry::Workload(w)) => Some(w),
            _ => None,
        }
    }

    /// A draw command.
    #[inline]
    pub(crate) fn draw(&mut self) {
        match self.open_workload() {
            Some(w) => w.draws += 1,
            None => self.loose_draws += 1,
        }
    }

    /// `vkCmdClearAttachments` inside a render pass.
    pub(crate) fn clear_attachments(&mut self) {
        if let Some(w) = self.open_workload() {
            w.clears += 1;
        }
    }

    /// Secondary command buffers executed here, by their recordings (those the layer recorded).
    pub(crate) fn execute(&mut self, recordings: Vec<Arc<Recording>>) {
        let labels = self.labels();
        for recording in recordings {
            if let Some(w) = self.open_workload() {
                w.draws += recording.loose_draws;
                w.executes += 1;
            } else {
                self.loose_draws += recording.loose_draws;
            }
            self.entries.push(Entry::Execute {
                recording,
                labels: labels.clone(),
            });
        }
    }

    /// A debug label opens.
    pub(crate) fn push_label(&mut self, label: String) {
        self.labels.push(label.into());
        self.snapshot = None;
    }

    /// The innermost debug label closes (one opened in another command buffer: nothing here).
    pub(crate) fn pop_label(&mut self) {
        if self.labels.pop().is_some() {
            self.snapshot = None;
        }
    }

    /// The application opens (`true`) or closes a query of `query_type`.
    pub(crate) fn app_query(&mut self, query_type: vk::QueryType, open: bool) {
        if query_type == vk::QueryType::PIPELINE_STATISTICS {
            if open {
                self.app_statistics += 1;
            } else {
                self.app_statistics = self.app_statistics.saturating_sub(1);
            }
        }
    }

    /// The finished recording.
    pub(crate) fn finish(self, command_buffer: u64, serial: u64) -> Recording {
        Recording {
            command_buffer,
            serial,
            secondary: self.secondary,
            entries: self.entries,
            blocks: self.blocks,
            traps: self.traps,
            loose_draws: self.loose_draws,
        }
    }
}
