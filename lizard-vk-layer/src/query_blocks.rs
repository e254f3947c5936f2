//! The layer's own query pools, in blocks a command buffer's recording leases: a block of timestamps, of
//! graphics pipeline statistics or of compute pipeline statistics. A recording resets each block it
//! leases inside its own command buffer, before the first query it writes there, so every execution of
//! the command buffer (recorded once, submitted every frame) starts from reset queries. A block goes back
//! to its free list when the recording that leased it is dropped: the command buffer was reset, freed or
//! recorded anew, and no submission of it is being read.

use std::sync::{Arc, Mutex};

use ash::vk;

use crate::table::DeviceTable;

/// What a block's queries measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BlockKind {
    /// `VK_QUERY_TYPE_TIMESTAMP`.
    Timestamp,
    /// Pipeline statistics of graphics work ([`GRAPHICS_STATISTICS`]).
    GraphicsStatistics,
    /// Pipeline statistics of compute work ([`COMPUTE_STATISTICS`]).
    ComputeStatistics,
}

/// The graphics statistics read around a render pass, in the order results come (by bit).
pub(crate) const GRAPHICS_STATISTICS: [(vk::QueryPipelineStatisticFlags, &str); 6] = [
    (
        vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_VERTICES,
        "input_assembly_vertices",
    ),
    (
        vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_PRIMITIVES,
        "input_assembly_primitives",
    ),
    (
        vk::QueryPipelineStatisticFlags::VERTEX_SHADER_INVOCATIONS,
        "vertex_shader_invocations",
    ),
    (
        vk::QueryPipelineStatisticFlags::CLIPPING_INVOCATIONS,
        "clipping_invocations",
    ),
    (
        vk::QueryPipelineStatisticFlags::CLIPPING_PRIMITIVES,
        "clipping_primitives",
    ),
    (
        vk::QueryPipelineStatisticFlags::FRAGMENT_SHADER_INVOCATIONS,
        "fragment_shader_invocations",
    ),
];

/// The compute statistics read around a dispatch.
pub(crate) const COMPUTE_STATISTICS: [(vk::QueryPipelineStatisticFlags, &str); 1] = [(
    vk::QueryPipelineStatisticFlags::COMPUTE_SHADER_INVOCATIONS,
    "compute_shader_invocations",
)];

impl BlockKind {
    /// Queries per block.
    pub(crate) fn size(self) -> u32 {
        match self {
            BlockKind::Timestamp => 64,
            BlockKind::GraphicsStatistics | BlockKind::ComputeStatistics => 32,
        }
    }

    /// The 64-bit values of one query's result (without the availability word).
    pub(crate) fn values(self) -> usize {
        match self {
            BlockKind::Timestamp => 1,
            BlockKind::GraphicsStatistics => GRAPHICS_STATISTICS.len(),
            BlockKind::ComputeStatistics => COMPUTE_STATISTICS.len(),
        }
    }

    /// Bytes of one query's result as the layer copies it: its values and an availability word, 64-bit each.
    pub(crate) fn stride(self) -> u64 {
        (self.values() as u64 + 1) * 8
    }

    fn index(self) -> usize {
        self as usize
    }

    fn create_info(self) -> vk::QueryPoolCreateInfo<'static> {
        let (query_type, statistics) = match self {
            BlockKind::Timestamp => (
                vk::QueryType::TIMESTAMP,
                vk::QueryPipelineStatisticFlags::empty(),
            ),
            BlockKind::GraphicsStatistics => (
                vk::QueryType::PIPELINE_STATISTICS,
                GRAPHICS_STATISTICS
                    .iter()
                    .fold(vk::QueryPipelineStatisticFlags::empty(), |a, (b, _)| a | *b),
            ),
            BlockKind::ComputeStatistics => {
                (vk::QueryType::PIPELINE_STATISTICS, COMPUTE_STATISTICS[0].0)
            }
        };
        vk::QueryPoolCreateInfo::default()
            .query_type(query_type)
            .query_count(self.size())
            .pipeline_statistics(statistics)
    }
}

/// A device's query pools: those free, by kind, and every one created (destroyed with the device).
#[derive(Debug, Default)]
pub(crate) struct BlockCache {
    free: Mutex<[Vec<vk::QueryPool>; 3]>,
    created: Mutex<Vec<vk::QueryPool>>,
}

/// A block leased by a recording; back to the free list when dropped.
#[derive(Debug)]
pub(crate) struct Block {
    /// The pool.
    pub pool: vk::QueryPool,
    /// What its queries measure.
    pub kind: BlockKind,
    /// Queries used by the recording, from 0.
    pub used: u32,
    /// Which of them the recording completes (written, or begun and ended): only those are copied, with a
    /// wait for each (a query never written would be waited for forever).
    pub written: Vec<bool>,
    cache: Arc<BlockCache>,
}

impl Block {
    /// The runs of written queries: `(first, count)`.
    pub(crate) fn written_runs(&self) -> Vec<(u32, u32)> {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for (i, &w) in self.written.iter().enumerate() {
            if !w {
                continue;
            }
            match runs.last_mut() {
                Some((first, count)) if *first + *count == i as u32 => *count += 1,
                _ => runs.push((i as u32, 1)),
            }
        }
        runs
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        let mut free = self.cache.free.lock().unwrap_or_else(|e| e.into_inner());
        free[self.kind.index()].push(self.pool);
    }
}

impl BlockCache {
    /// A free block of `kind`, creating a pool when none is free. No lock is held across the driver's
    /// `vkCreateQueryPool`.
    pub(crate) fn lease(
        self: &Arc<Self>,
        table: &DeviceTable,
        device: vk::Device,
        kind: BlockKind,
    ) -> Result<Block, vk::Result> {
        let free = {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            free[kind.index()].pop()
        };
        let pool = match free {
            Some(pool) => pool,
            None => {
                let create = table
                    .create_query_pool
                    .ok_or(vk::Result::ERROR_EXTENSION_NOT_PRESENT)?;
                let info = kind.create_info();
                let mut pool = vk::QueryPool::null();
                // SAFETY: `device` is a live device of `table`'s chain; `info` is a valid create info and
                // `pool` a place for one handle.
                unsafe { create(device, &info, std::ptr::null(), &mut pool) }.result()?;
                self.created
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(pool);
                pool
            }
        };
        Ok(Block {
            pool,
            kind,
            used: 0,
            written: Vec::new(),
            cache: Arc::clone(self),
        })
    }

    /// Destroys every pool created (the device is being destroyed: no command buffer can use them).
    pub(crate) fn destroy_all(&self, table: &DeviceTable, device: vk::Device) {
        let created = std::mem::take(&mut *self.created.lock().unwrap_or_else(|e| e.into_inner()));
        if let Some(destroy) = table.destroy_query_pool {
            for pool in created {
                // SAFETY: the pool was created on `device`, which is still live, and nothing uses it any more.
                unsafe { destroy(device, pool, std::ptr::null()) };
            }
        }
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) = Default::default();
    }
}
