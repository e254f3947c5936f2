//! What a command buffer's recording holds: its workloads in order, each with the queries the layer wrote
//! around it, and the secondary command buffers it executes.

use std::sync::Arc;

use ash::vk;

use crate::query_blocks::Block;

/// What kind of GPU work a workload is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// A render pass instance begun by `vkCmdBeginRenderPass` or `vkCmdBeginRenderPass2`.
    RenderPass,
    /// A render pass instance of dynamic rendering (`vkCmdBeginRendering`).
    Rendering,
    /// A compute dispatch.
    Dispatch,
    /// A buffer or image copy, fill or update.
    Copy,
    /// An image blit.
    Blit,
    /// A multisample resolve.
    Resolve,
    /// An image clear outside a render pass.
    Clear,
}

impl Kind {
    /// Every kind, in the order the document lists them.
    pub(crate) const ALL: [Kind; 7] = [
        Kind::RenderPass,
        Kind::Rendering,
        Kind::Dispatch,
        Kind::Copy,
        Kind::Blit,
        Kind::Resolve,
        Kind::Clear,
    ];

    /// The kind's name in the trace.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::RenderPass => "render pass",
            Kind::Rendering => "dynamic rendering",
            Kind::Dispatch => "dispatch",
            Kind::Copy => "copy",
            Kind::Blit => "blit",
            Kind::Resolve => "resolve",
            Kind::Clear => "clear",
        }
    }

    /// The kind's word in counter names (`vk.render_pass.gpu_time`).
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::RenderPass => "render_pass",
            Kind::Rendering => "dynamic_rendering",
            Kind::Dispatch => "dispatch",
            Kind::Copy => "copy",
            Kind::Blit => "blit",
            Kind::Resolve => "resolve",
            Kind::Clear => "clear",
        }
    }

    /// Whether the workload is a render pass instance.
    pub(crate) fn is_render_pass(self) -> bool {
        matches!(self, Kind::RenderPass | Kind::Rendering)
    }
}

/// A query of a recording: block `block` of its blocks, query `query` of the block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    /// Index into [`Recording::blocks`].
    pub block: u32,
    /// The query in the block.
    pub query: u32,
}

/// A label stack at one point of a recording, outermost first.
pub(crate) type Labels = Arc<[Arc<str>]>;

/// One workload as recorded.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    /// Its kind.
    pub kind: Kind,
    /// The command that began it (`vkCmdBeginRenderPass`).
    pub command: &'static str,
    /// The debug labels open when it began.
    pub labels: Labels,
    /// A render pass's render area.
    pub area: Option<vk::Rect2D>,
    /// Draw commands inside a render pass, those of secondary command buffers it executes included.
    pub draws: u32,
    /// Clears of attachments inside a render pass.
    pub clears: u32,
    /// Secondary command buffers executed inside a render pass.
    pub executes: u32,
    /// The timestamps written before and after it.
    pub timestamps: Option<[Slot; 2]>,
    /// Why it has no timestamps, when it has none.
    pub untimed: Option<&'static str>,
    /// The pipeline-statistics query around it.
    pub statistics: Option<Slot>,
    /// Why it has no pipeline statistics, when the layer reads them but not here.
    pub no_statistics: Option<&'static str>,
    /// In `renderpass` mode, its trap: an index into [`Recording::traps`].
    pub trap: Option<u32>,
}

/// One entry of a recording, in recording order.
#[derive(Debug, Clone)]
pub(crate) enum Entry {
    /// A workload.
    Workload(Workload),
    /// A secondary command buffer executed here, with the labels open in this command buffer then.
    Execute {
        /// The secondary's recording.
        recording: Arc<Recording>,
        /// The labels open here.
        labels: Labels,
    },
}

/// A command buffer's finished recording: what each submission of it runs.
#[derive(Debug)]
pub(crate) struct Recording {
    /// The command buffer's handle.
    pub command_buffer: u64,
    /// A number for the trace: recordings are counted from 1 in the order they end.
    pub serial: u64,
    /// Whether it is a secondary command buffer.
    pub secondary: bool,
    /// Its entries.
    pub entries: Vec<Entry>,
    /// The query blocks it leased, with the queries it used in each.
    pub blocks: Vec<Block>,
    /// In `renderpass` mode, the traps after its workloads, in order.
    pub traps: Vec<crate::trap::Trap>,
    /// Draws recorded outside any render pass of its own (a secondary continuing its primary's render pass
    /// draws there).
    pub loose_draws: u32,
}

impl Recording {
    /// Whether any query of it, or of a secondary it executes, has a result to copy.
    pub(crate) fn has_queries(&self) -> bool {
        self.blocks.iter().any(|b| b.used > 0)
            || self.entries.iter().any(|e| match e {
                Entry::Execute { recording, .. } => recording.has_queries(),
                Entry::Workload(_) => false,
            })
    }

    /// This recording and every recording it executes, each once, in the order first met (depth first;
    /// nesting deeper than 8 is not followed).
    pub(crate) fn tree(self: &Arc<Self>) -> Vec<Arc<Recording>> {
        let mut out: Vec<Arc<Recording>> = Vec::new();
        fn walk(r: &Arc<Recording>, out: &mut Vec<Arc<Recording>>, depth: u32) {
            if depth > 8 || out.iter().any(|o| Arc::ptr_eq(o, r)) {
                return;
            }
            out.push(Arc::clone(r));
            for entry in &r.entries {
                if let Entry::Execute { recording, .. } = entry {
                    walk(recording, out, depth + 1);
                }
            }
        }
        walk(self, &mut out, 0);
        out
    }
}
